"""A summariser hook that records what it cost into a :class:`SummarizerUsage`.

Why apart from summary_usage.py: the built-in LLM summariser records into the usage from
below the hooks (summarizer.py -> summary_usage.py), while this wraps the hooks themselves;
kept together they made a circle (hooks -> summarizer -> summary_usage -> hooks).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from hermes_core.compression.hooks import CompressionHooks, SummarizeFn
from hermes_core.compression.summary_usage import SummarizerUsage, metering
from hermes_core.types import SummaryContext

__all__ = ["metered", "metered_hooks"]


def metered(summarize: SummarizeFn, usage: SummarizerUsage) -> SummarizeFn:
    """``summarize`` recording into ``usage``; one call with the handed input if it records
    nothing itself (the previous summary counts as one more message of input)."""

    def call(
        messages: Sequence[Mapping[str, Any]],
        previous_summary: str | None,
        budget_tokens: int,
        context: SummaryContext,
    ) -> str | None:
        before = usage.calls
        try:
            with metering(usage):
                return summarize(messages, previous_summary, budget_tokens, context)
        finally:
            if usage.calls == before:
                handed = list(messages)
                if previous_summary:
                    handed.append({"role": "user", "content": previous_summary})
                usage.add(handed)

    return call


def metered_hooks(hooks: CompressionHooks, usage: SummarizerUsage) -> CompressionHooks:
    """``hooks`` with its summariser (if any) recording into ``usage``."""
    if hooks.summarize is None:
        return hooks
    return replace(hooks, summarize=metered(hooks.summarize, usage))
