"""The compressor: prune, window, summarise, assemble, check, with a failure ladder.

Pure phases live in their own modules; this one sequences them, counts tokens with the one
cost function, applies the anti-thrash guard, and guarantees the spec's promises: the input
is never mutated, any failure returns the input unchanged with a reason, and every message
replaced or rewritten comes back in ``archived``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_core.compression import arguments, early, policy
from hermes_core.compression import state as persisted
from hermes_core.compression.arguments import check_compressor_arguments, check_flag, check_messages
from hermes_core.compression.assemble import SYSTEM_ROLES, assemble, is_summary_message
from hermes_core.compression.guidance import Guidance
from hermes_core.compression.hooks import (
    CompressionHooks,
    SummarizeFn,
    SummarizerMode,
    standalone_hooks,
)
from hermes_core.compression.in_flight import in_flight_problems
from hermes_core.compression.invariants import check_invariants
from hermes_core.compression.proactive import proactive_outcome
from hermes_core.compression.progress import ending_notice, started_notice
from hermes_core.compression.prune import prune_tool_results
from hermes_core.compression.reasons import ran_because
from hermes_core.compression.references import ArchiveRefs, check_refs
from hermes_core.compression.result import STILL_OVER, CompressionResult, EventSink, outcome
from hermes_core.compression.summary_stage import SummaryStage
from hermes_core.compression.summary_usage import SummarizerUsage
from hermes_core.compression.trigger import as_settings
from hermes_core.compression.window import choose_window, superseded_in_head
from hermes_core.config.settings import Settings
from hermes_core.errors import InvalidMessages
from hermes_core.tokens.table import CostTable, primed
from hermes_core.transcript.messages import is_real_user_message, turn_groups
from hermes_core.transcript.validation import validate_messages

log = logging.getLogger("hermes_context.compression")
Message = dict[str, Any]


@arguments.checked_methods  # set_model, note_overflow, should_compress, count, clock...: checked
class Compressor(SummaryStage):
    """Keeps one conversation under its token budget; holds the anti-thrash state.

    ``summarizer``: ``None``/``"auto"`` (the configured LLM when there is one, else the
    deterministic fallback), ``"llm"``, ``"fallback"`` (never calls a network), or a
    function ``(messages, previous_summary, budget_tokens, context) -> str``.
    ``unreachable_falls_back`` turns the network-unreachable abort into the fallback summary.
    ``clock`` (monotonic) drives cooldowns and the idle trigger; ``wall_clock`` only ages
    the timers of a state saved in another process.
    """

    def __init__(
        self,
        config: Settings | Mapping[str, Any] | None = None,
        *,
        context_length: int,
        max_tokens: int = 0,
        summarizer: SummarizerMode | SummarizeFn | None = None,
        model: str | None = None,
        hooks: CompressionHooks | None = None,
        clock: Callable[[], float] = time.monotonic,
        on_event: EventSink | None = None,
        unreachable_falls_back: bool = False,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        check_compressor_arguments(
            config=config,
            context_length=context_length,
            max_tokens=max_tokens,
            summarizer=summarizer,
            model=model,
        )
        settings = as_settings(config)
        super().__init__(
            settings,
            context_length=context_length,
            max_tokens=max_tokens,
            model=model,
            clock=clock,
            on_event=on_event,
        )
        if hooks is None:
            custom = summarizer if callable(summarizer) else None
            mode: SummarizerMode = summarizer if isinstance(summarizer, str) else "auto"
            hooks = standalone_hooks(settings, mode, summarize=custom)
        self.hooks = hooks
        self.unreachable_falls_back = unreachable_falls_back
        self.compactions = 0
        self._guidance: Guidance | None = None  # this compress() call's, if any
        self._refs: ArchiveRefs | None = None  # this compress() call's store rows, if any
        self.previous_summary: str | None = None
        self._wall_clock = wall_clock  # only to age persisted timers (export/restore_state)
        self._started = False

    # --- persistence (spec 40 §2: the session store hydrates it) -------------------------

    def export_state(self) -> dict[str, Any]:
        """JSON-ready state for the session store (``{"v": 1, ...}``; see compression/state.py)."""
        return persisted.export_state(self, wall_now=self._wall_clock())

    def restore_state(self, state: Mapping[str, Any]) -> None:
        """Put back :meth:`export_state` output; unusable parts are logged and skipped."""
        persisted.restore_state(self, state, wall_now=self._wall_clock())

    # --- the pipeline --------------------------------------------------------------------

    def compress(
        self,
        messages: Sequence[Any],
        *,
        force: bool = False,
        guidance: Guidance | None = None,
        references: ArchiveRefs | None = None,
        optional: bool = False,
    ) -> CompressionResult:
        """Compress when due (or when ``force``); never mutates ``messages``. ``guidance``:
        a focus topic and memory notes the summary must keep (compression/guidance.py).
        ``references``: each message's store row, named in stand-ins (compression/references.py).
        ``optional``: now, as an early compaction (a host that runs the one the cost schedule
        said was due itself: hermes-agent): dropped if it cuts little (compression/early.py).
        ``stats["summarizer_usage"]``: what the summariser cost (summary_usage.py)."""
        check_messages(messages)
        check_flag("force", force)
        check_flag("optional", optional)
        self._guidance = guidance if isinstance(guidance, Guidance) else None
        self._refs = check_refs(references, len(messages))
        started = time.perf_counter()
        source = [m if isinstance(m, dict) else dict(m) for m in messages]
        usage = SummarizerUsage(count=self.count)
        self._started = False
        self._costs: CostTable | None = None  # this call's costs, until it returns
        self._touch(len(source))
        self._early: early.Attempt | None = None
        self._optional = optional and not force
        result = self._compress(source, force or self._optional, usage)
        if self._early is not None:
            result = early.settle(self, self._early, result, source)
        costs, self._costs = self._costs, None  # costs that stayed estimates; 0: all exact
        result.stats["estimated_costs"] = costs.pending if costs else 0
        result.stats["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
        result.stats["summarizer_usage"] = usage.as_dict()
        changed = self._settle(source, result)  # what goes out next; the frequency count
        if changed or self._started:  # every "started" gets its "finished", whatever came of it
            self._emit("compression_finished", **result.report(), summarizer_usage=usage.as_dict())
            self._notice(*ending_notice(result))
        return result

    def _compress(
        self, source: list[Message], force: bool, usage: SummarizerUsage
    ) -> CompressionResult:
        problems = validate_messages(source, allow_pending_tool_calls=True)
        if problems:
            raise InvalidMessages(
                f"cannot compress an invalid transcript ({len(problems):,} "
                f"problem{'' if len(problems) == 1 else 's'}; run "
                "`hermes-context validate` for the list): " + problems[0],
                problems,
            )
        # exact where cached, else estimated; counted exactly only where a decision needs it
        costs = CostTable(source, self.counter, image_tokens=self.settings.compression.image_tokens)
        if costs.pending:
            costs.calibrate()
        self._costs = costs
        stats: dict[str, Any] = {
            "messages_before": len(source),
            "threshold_tokens": self.threshold_tokens,
            "threshold_provenance": self.threshold_provenance,
            "token_counter": self.counter.name,
            "passes": {},
            "child_session": not self.settings.compression.in_place,
        }
        overflow = self._overflow_due  # the provider refused the last request: cut hard
        trigger = 0 if force else self._trigger(source, costs)  # the host's figure (anchored)
        go, reason = (True, None) if force else self.should_compress(trigger)
        self._why = ran_because(self, force=force, overflow=overflow, tokens=trigger)
        self._overflow_due = self._idle_due = self._cache_cold = False  # used up by it
        before = primed(costs.span().point, source)
        if not go:
            proactive = None
            if reason is None:  # spec 10 §8: pruning alone, below the threshold
                proactive = proactive_outcome(
                    source,
                    costs,
                    stats,
                    trigger=trigger,
                    settings=self.settings.compression,
                    threshold_tokens=self.threshold_tokens,
                    context_length=self.context_length,
                    prune=self.hooks.prune,
                    cost=self._cost,
                    refs=self._refs,
                )
            why = reason or f"under the threshold ({before:,} < {self.threshold_tokens:,})"
            return proactive or outcome(source, "unchanged", why, tokens_before=before, stats=stats)
        if (self._early_go and not force) or self._optional:  # dropped if it cuts little
            self._early = early.snapshot(self)
        self._emit("compression_started", tokens=before)
        self._started = True
        self._notice("started", started_notice(before))
        hard = (force and not self._optional) or overflow
        try:
            result = self._run(source, costs, before, stats, usage, force=hard)
            for attempt in range(1, self.settings.compression.max_attempts):
                if result.status != "compressed" or result.reason != STILL_OVER:
                    break  # done, or not the "still over" case; else halve the tail (kept it over)
                result = self._run(source, costs, before, stats, usage, force=hard, shrink=attempt)
        except Exception as exc:
            log.warning("compression failed, input kept: %s", exc, exc_info=True)
            self._emit("compression_failed", layer="internal", reason=str(exc))
            why = f"internal error, input kept: {type(exc).__name__}: {exc}"
            return outcome(source, "aborted", why, tokens_before=before, stats=stats)
        violations = (
            check_invariants(source, result.messages, before_valid=True, archived=result.archived)
            if result.status == "compressed"
            else in_flight_problems(source, result.messages)  # pruning spares them too
        )
        if violations:
            log.error("compression broke its invariants, input kept: %s", violations)
            why = "invariant check failed, input kept: " + "; ".join(violations)
            return outcome(source, "aborted", why, tokens_before=before, stats=stats)
        return result

    def _run(
        self,
        source: list[Message],
        costs: CostTable,
        tokens_before: int,
        stats: dict[str, Any],
        usage: SummarizerUsage,
        *,
        force: bool,
        shrink: int = 0,
    ) -> CompressionResult:
        comp = self.settings.compression
        groups = turn_groups(source)
        decayed = self.compactions > 0 or any(is_summary_message(m) for m in source)
        ratio = self.running.correction_ratio  # real tokens per estimated token, learned
        real_budget = policy.configured_tail_budget(
            comp, self.threshold_tokens, self.context_length
        )
        real_budget >>= shrink  # retries (compression.max_attempts) halve the tail budget
        budget = int(real_budget / ratio)  # the walk adds our own per-message costs
        window = choose_window(
            source,
            groups,
            costs,
            protect_first_n=0 if decayed else comp.protect_first_n,
            budget_tokens=budget,
            min_messages=policy.tail_message_floor(comp.protect_last_n),
            min_user_messages=comp.min_tail_user_messages,
        )
        if window is None:  # the growth check compares with this figure later: exact
            self.nothing_to_compress(int(costs.exact_prompt(source, self._cost) * ratio))
            reason = "nothing to compress: every message is in the protected head or tail"
            return outcome(source, "unchanged", reason, tokens_before=tokens_before, stats=stats)
        stats["window"] = {"head_end": window.head_end, "tail_start": window.tail_start}
        use_llm = self.hooks.summarize is not None and self.guard.use_llm()
        # the fallback reads the original middle: prune it only if pruning alone might do
        untouched = [i for i, m in enumerate(source) if policy.untouched(m)]
        unread = not use_llm and (force or not self._suffices(costs, (untouched, 0), real_budget))
        pruned = prune_tool_results(
            source,
            protect_from=window.tail_start,
            prune=self.hooks.prune,
            min_prune_chars=comp.min_prune_chars,
            tail_budget_tokens=budget,
            cost=self._cost,
            skip=window.middle if unread else range(0),
            refs=self._refs,
        )
        stats["passes"] = dict(pruned.passes)
        working = pruned.messages
        # None: pruning alone would not do (or force); else whether it bills less than a summary
        prune_pays = (
            None
            if force
            else self._prune_verdict(
                costs, source, pruned, window, stats, tail_budget=real_budget, use_llm=use_llm
            )
        )
        if prune_pays:
            return self._pruned(costs, pruned, stats, tokens_before)
        optional = prune_pays is not None
        summary, plan = self._summarize(
            source, working, window, usage, stats, use_llm=use_llm, optional=optional
        )
        if summary.abort_reason is not None:
            self._emit("compression_failed", layer="abort", reason=summary.abort_reason)
            if optional:  # pruning alone does: better than keeping it all
                return self._pruned(costs, pruned, stats, tokens_before, summary.abort_reason)
            stats["passes"] = {}  # the pruning was discarded with everything else
            return outcome(
                source, "aborted", summary.abort_reason, tokens_before=tokens_before, stats=stats
            )
        assert summary.body is not None
        superseded = superseded_in_head(source, window.head_end)
        head = [m for i, m in enumerate(working[: window.head_end]) if i not in superseded]
        tail = [source[i] for i in plan.kept] + working[window.tail_start :]  # kept: verbatim
        assembly = assemble(
            head,
            tail,
            summary.body,
            any_user=any(is_real_user_message(m) for m in source),
            middle_had_user_turn=any(
                is_real_user_message(m) for m in source[window.middle.start : window.middle.stop]
            ),
            ref=self._refs.span_tag({*window.middle, *superseded}) if self._refs else "",
        )
        replaced = (set(pruned.replaced) | set(window.middle) | superseded) - set(plan.kept)
        if assembly.rewritten and head and head[0].get("role") in SYSTEM_ROLES:
            replaced.add(0)
        if assembly.merged:
            replaced.add(plan.kept[0] if plan.kept else window.tail_start)
        archived = [source[i] for i in sorted(replaced)]
        tokens_after = costs.exact_prompt(assembly.messages, self._cost)
        if optional and tokens_after >= costs.exact_prompt(working, self._cost):
            return self._pruned(costs, pruned, stats, tokens_before, "the summary landed higher")
        self.guard.record_compaction(
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            summarizer=summary.summarizer,
            probe=self.guard.is_probe(),
        )
        if not costs.at_least(tokens_after + 1, None, primed(0, source)):
            # never commit growth (the input's side counted exactly as far as the answer
            # needs: tokens_before may be an estimate); the verdict left above makes a strike
            why = (
                f"the compaction would not shrink the transcript ({tokens_before:,} -> "
                f"{tokens_after:,} tokens); input kept"
            )
            stats["passes"] = {}
            return outcome(source, "unchanged", why, tokens_before=tokens_before, stats=stats)
        self.compactions += 1
        self.previous_summary = summary.body
        over = int(tokens_after * ratio) >= self.threshold_tokens
        result = outcome(
            assembly.messages,
            "compressed",
            STILL_OVER if over else None,
            tokens_before=tokens_before,
            stats=stats,
            archived=archived,
            tokens_after=tokens_after,
        )
        result.summary = summary.body
        result.summarizer = summary.summarizer
        result.reason = result.reason or summary.fallback_reason() or self._why
        return result
