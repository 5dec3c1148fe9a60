"""The engine's summary stage: the middle handed to the planners, then to the summariser.

Why apart from the engine: the pipeline (compression/engine.py) decides *whether* and *what*
to summarise; this is the one call that does it, with the hooks metered, the plan applied
and the ledger's bound set. A base of :class:`~hermes_core.compression.Compressor`.
"""

from __future__ import annotations

from typing import Any

from hermes_core.compression import policy
from hermes_core.compression.guidance import Guidance, summary_extra
from hermes_core.compression.hooks import CompressionHooks
from hermes_core.compression.metered import metered_hooks
from hermes_core.compression.plan import Plan, plan_span
from hermes_core.compression.prune_stop import PruneStop
from hermes_core.compression.summary_step import SummaryStep, previous_summary, summarize_step
from hermes_core.compression.summary_usage import SummarizerUsage
from hermes_core.compression.window import Window
from hermes_core.tokens.table import CostTable
from hermes_core.types import SummaryContext

__all__ = ["SummaryStage"]

Message = dict[str, Any]


class SummaryStage(PruneStop):
    """Summarises a window's middle (set by the :class:`Compressor`: the attributes below)."""

    hooks: CompressionHooks
    unreachable_falls_back: bool
    _guidance: Guidance | None
    _costs: CostTable | None

    def _summarize(
        self,
        source: list[Message],
        working: list[Message],
        window: Window,
        usage: SummarizerUsage,
        stats: dict[str, Any],
        *,
        use_llm: bool,
        optional: bool = False,
    ) -> tuple[SummaryStep, Plan]:  # the plan (compression/plan.py) steered the summary
        notes = self.hooks.pre_compress(source[window.middle.start : window.middle.stop])
        plan = plan_span(self.hooks, source, working, window, guidance=self._guidance, stats=stats)
        step = summarize_step(
            hooks=metered_hooks(self.hooks, usage),
            guard=self.guard,
            middle=plan.middle,  # the plan's marks applied (compression/plan.py)
            middle_original=plan.original,
            # only a summary the transcript still carries: an older one from this object
            # may belong to a transcript the host has since replaced
            previous=previous_summary(source[: window.tail_start]),
            budget_tokens=policy.summary_budget(self.context_length),
            context=SummaryContext(
                model=self.model,
                context_length=self.context_length,
                extra=summary_extra(notes, self._guidance),
            ),
            count_text=self.counter.count_text,
            abort_on_failure=self.settings.compression.abort_on_summary_failure,
            max_ledger_chars=self._plan_ledger(self._costs, working, window, stats),
            unreachable_falls_back=self.unreachable_falls_back,
            use_llm=use_llm and bool(plan.middle),  # all kept or dropped: no call for nothing
            optional=optional,
        )
        if step.failure is not None and step.abort_reason is None:
            kind, detail = step.failure
            self._emit("compression_failed", layer="fallback", kind=kind, reason=detail)
        return step, plan
