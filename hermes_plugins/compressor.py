"""The default compressor plugin: one-line tool summaries and the LLM summariser as hooks.

Thin on purpose: the same functions serve ``hc.compress()`` without a host
(:mod:`hermes_core.compression.hooks`); this class only answers ``prune_tool_result`` and
``summarize_middle`` for the host, and runs last so any third-party pruner or summariser is
asked first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.compression.hooks import builtin_prune, llm_summarize_fn
from hermes_core.markers import hookimpl
from hermes_core.plugins import PluginContext
from hermes_core.types import SummaryContext


class CompressorPlugin:
    """Built-in ``compressor``: tool summaries always, the LLM when one is configured."""

    def __init__(self, context: PluginContext) -> None:
        self._summarize = llm_summarize_fn(context.settings)

    @hookimpl(trylast=True)
    def prune_tool_result(
        self, tool_name: str, arguments: Mapping[str, Any], result: str, max_chars: int
    ) -> str | None:
        return builtin_prune(tool_name, arguments, result, max_chars)

    @hookimpl(trylast=True)
    def summarize_middle(
        self,
        messages: Sequence[Mapping[str, Any]],
        previous_summary: str | None,
        budget_tokens: int,
        context: SummaryContext,
    ) -> str | None:
        """``None`` when no LLM is configured: the engine then writes the fallback summary."""
        if self._summarize is None:
            return None
        return self._summarize(messages, previous_summary, budget_tokens, context)
