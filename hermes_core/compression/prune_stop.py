"""Stopping after pruning: when pruning alone is the compaction, and when it is not.

Why apart: pruning that brings the prompt under the threshold (spec 10 §4 Phase 1) used to end
every compaction it sufficed for. Under prompt caching that is usually the dearer choice (see
:mod:`~hermes_core.compression.cache_cost`): the engine now asks both questions here, with
exact counts of what each way would keep, before it pays for a summary.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hermes_core.compression import cache_cost, policy
from hermes_core.compression.ledger_budget import LedgerBudget, ledger_budget
from hermes_core.compression.prune import PruneResult
from hermes_core.compression.result import CompressionResult, outcome
from hermes_core.compression.summary_step import previous_summary
from hermes_core.compression.trigger import CompressionTrigger
from hermes_core.compression.window import Window
from hermes_core.tokens.table import CostTable, primed

__all__ = ["PruneStop"]

Message = dict[str, Any]


class PruneStop(CompressionTrigger):
    """The engine's pruning verdicts (a base of :class:`~hermes_core.compression.Compressor`)."""

    def _suffices(self, costs: CostTable, after: tuple[list[int], int], budget: int) -> bool:
        """:func:`policy.prune_suffices` of the whole list and ``after``, as exact counts say."""
        r, limit = self.running.correction_ratio, self.threshold_tokens
        return costs.monotone(
            lambda b, a: policy.prune_suffices(int(b * r), int(a * r), limit, budget),
            (None, primed(0, costs)),
            after,
        )

    def _prune_verdict(
        self,
        costs: CostTable,
        source: list[Message],
        pruned: PruneResult,
        window: Window,
        stats: dict[str, Any],
        *,
        tail_budget: int,
        use_llm: bool,
    ) -> bool | None:
        """``None`` when pruning alone leaves no real headroom; else whether, under prompt
        caching, it bills no more than a summary would (:mod:`cache_cost`; the figures go to
        ``stats["cache_cost"]``)."""
        working = pruned.messages
        if not self._suffices(costs, costs.split(working, self._cost), tail_budget):
            return None
        first = min(pruned.replaced, default=len(working))
        kept = self._kept(costs, source, working, window, first)
        comp = self.settings.compression
        if comp.cache_reads == "breakpoints":  # only the system prompt's mark survives a prune
            kept = replace(kept, pruned_prefix=min(kept.pruned_prefix, kept.head))
        early = comp.schedule == "cost"
        verdict = cache_cost.choose(
            kept, self.threshold_tokens, use_llm, comp.cached_price, early=early
        )
        stats["cache_cost"] = verdict
        return bool(stats["cache_cost"]["prune"])

    def _pruned(
        self,
        costs: CostTable,
        pruned: PruneResult,
        stats: dict[str, Any],
        tokens_before: int,
        instead_of_summary: str | None = None,
    ) -> CompressionResult:
        """The "pruned" outcome, committed to the anti-thrash guard. ``instead_of_summary``:
        why the summary the cost verdict preferred was not used (it aborted, or landed higher)."""
        working = pruned.messages
        tokens_pruned = costs.exact_prompt(working, self._cost)  # under the threshold: bounded
        self.guard.record_compaction(
            tokens_before=tokens_before,
            tokens_after=tokens_pruned,
            summarizer=None,
            probe=self.guard.is_probe(),
        )
        archived = [pruned.replaced[i] for i in sorted(pruned.replaced)]
        reason = f"pruning alone brought it under the threshold ({tokens_pruned:,} tokens)"
        if instead_of_summary:
            reason += f"; instead of a summary: {instead_of_summary}"
        return outcome(
            working,
            "pruned",
            reason,
            tokens_before=tokens_before,
            stats=stats,
            archived=archived,
            tokens_after=tokens_pruned,
        )

    def _kept(
        self,
        costs: CostTable,
        source: list[Message],
        working: list[Message],
        window: Window,
        first_pruned: int,
    ) -> cache_cost.Kept:
        """What each way to compact keeps, exactly counted, in the trigger's units."""
        ratio, exact = self.running.correction_ratio, costs.exact_prompt
        tail = working[window.tail_start :]
        previous = previous_summary(source[: window.tail_start])
        # the previous summary's size, else half the stated budget. A first summary's ledger
        # is left out: counting it (up to 2,000 tokens) chose pruning more often and billed
        # 1-5% more on the replays of bench/session_cost.py, since this one-cycle model does
        # not see the one-line history pruning leaves in every later prompt; a summary that
        # lands no lower than the pruning is caught after it is written (engine)
        summary = self.counter.count_text(previous) if previous else 0
        summary = summary or policy.summary_budget(self.context_length) // 2
        return cache_cost.Kept(
            pruned=int(exact(working, self._cost) * ratio),
            pruned_prefix=int(exact(working[:first_pruned], self._cost) * ratio),
            head=int(exact(working[: window.head_end], self._cost) * ratio),
            tail=int(exact(tail, self._cost) * ratio),
            tail_requests=sum(1 for m in tail if m.get("role") == "assistant"),
            summary=int(summary * ratio),
        )

    #: the ledger's budget for the compaction under way (:meth:`_plan_ledger`)
    _ledger: LedgerBudget | None = None

    def _plan_ledger(
        self,
        costs: CostTable | None,
        working: list[Message],
        window: Window,
        stats: dict[str, Any],
    ) -> int:
        """The anchor ledger's render bound for this window: a share of the headroom left
        once the (pruned) head, the tail and the prose's budget are in (:mod:`ledger_budget`;
        its figures go to ``stats["ledger"]``). Point estimates suffice: this sizes a
        section, it decides nothing."""
        kept = working[: window.head_end] + working[window.tail_start :]
        if costs is None:
            tokens = self.count(kept)
        else:
            indices, extra = costs.split(kept, self._cost)
            tokens = costs.span(indices, extra).point
        tokens = int(tokens * self.running.correction_ratio)
        tokens += policy.summary_budget(self.context_length)
        self._ledger = ledger_budget(self.threshold_tokens, tokens)
        stats["ledger"] = self._ledger.as_dict()
        return self._ledger.chars

    def ledger_chars(self) -> int:
        """The anchor ledger's render bound of the last compaction planned, else (none yet)
        what a tail of the whole tail budget would leave."""
        if self._ledger is None:
            comp = self.settings.compression
            tail = policy.configured_tail_budget(comp, self.threshold_tokens, self.context_length)
            kept = tail + policy.summary_budget(self.context_length)
            return ledger_budget(self.threshold_tokens, kept).chars
        return self._ledger.chars
