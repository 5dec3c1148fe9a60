"""How the engine reaches pruners, summarisers and scanners: directly, or through plugins.

``standalone_hooks`` serves ``hc.compress()`` without a host (the built-in tool summaries,
the configured LLM, no scanners beyond the engine's own directive check, no plan);
``host_hooks`` routes every call through a :class:`~hermes_core.plugins.PluginHost`, so
third-party plugins take part with their call policies.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from hermes_core.types import Finding, SessionInfo, SummaryContext

if TYPE_CHECKING:
    from hermes_core.config.settings import Settings
    from hermes_core.plugins.manager import PluginHost

SummarizerMode = Literal["auto", "llm", "fallback"]
PruneFn = Callable[[str, Mapping[str, Any], str, int], "str | None"]
SummarizeFn = Callable[
    [Sequence[Mapping[str, Any]], "str | None", int, SummaryContext], "str | None"
]
#: (the span about to be summarised, the task, the focus) -> the planners' raw answers
PlanFn = Callable[[Sequence[Mapping[str, Any]], str, "str | None"], Sequence[Any]]


@dataclass
class CompressionHooks:
    """The engine's outlets; ``summarize`` is ``None`` when no LLM may be called, ``plan``
    when nobody steers compactions (compression/plan.py)."""

    prune: PruneFn
    summarize: SummarizeFn | None
    scan: Callable[[str], list[Finding]]
    pre_compress: Callable[[Sequence[Mapping[str, Any]]], list[str]]
    plan: PlanFn | None = None


def _no_findings(_text: str) -> list[Finding]:
    return []


def _no_notes(_messages: Sequence[Mapping[str, Any]]) -> list[str]:
    return []


def builtin_prune(
    tool_name: str, arguments: Mapping[str, Any], result: str, max_chars: int
) -> str | None:
    from hermes_core.compression.tool_summaries import summarize_tool_result

    return summarize_tool_result(tool_name, arguments, result, max_chars)


def llm_summarize_fn(
    settings: Settings, *, environ: Mapping[str, str] | None = None, transport: Any = None
) -> SummarizeFn | None:
    """The configured LLM summariser as a function, or ``None`` when none is configured."""
    from hermes_core.compression.summarizer import LLMSummarizer

    summarizer = LLMSummarizer(
        settings.auxiliary.compression,
        settings.model,
        environ=dict(os.environ if environ is None else environ),
        transport=transport,
    )
    if not summarizer.available():
        return None

    def summarize(
        messages: Sequence[Mapping[str, Any]],
        previous_summary: str | None,
        budget_tokens: int,
        context: SummaryContext,
    ) -> str | None:
        return summarizer.summarize(
            list(messages), previous_summary, budget_tokens, extra=context.extra
        ).text

    return summarize


_MODES: tuple[str, ...] = ("auto", "llm", "fallback")


def check_mode(mode: object) -> None:
    """Refuse a summariser mode that is not one of ``auto``, ``llm``, ``fallback``: a typo
    must not quietly become "prune only"."""
    if mode not in _MODES:
        from hermes_core.errors import ConfigError

        valid = ", ".join(repr(name) for name in _MODES)
        raise ConfigError(
            f"unknown summarizer {mode!r}: use one of {valid}, or pass a summarise function"
        )


def standalone_hooks(
    settings: Settings,
    mode: SummarizerMode = "auto",
    *,
    summarize: SummarizeFn | None = None,
    environ: Mapping[str, str] | None = None,
    transport: Any = None,
) -> CompressionHooks:
    """Built-in behaviour without a plugin host."""
    check_mode(mode)
    if summarize is None and mode != "fallback":
        summarize = llm_summarize_fn(settings, environ=environ, transport=transport)
    if mode == "llm" and summarize is None:
        from hermes_core.errors import ConfigError

        raise ConfigError(
            "--summarizer llm needs a summariser LLM: set auxiliary.compression.base_url "
            "(and model), or model.base_url and model.name"
        )
    return CompressionHooks(
        prune=builtin_prune,
        summarize=None if mode == "fallback" else summarize,
        scan=_no_findings,
        pre_compress=_no_notes,
    )


def host_hooks(
    host: PluginHost, session: SessionInfo | None = None, mode: SummarizerMode = "auto"
) -> CompressionHooks:
    """Every outlet through the plugin host and its call policies."""
    check_mode(mode)

    def prune(
        tool_name: str, arguments: Mapping[str, Any], result: str, max_chars: int
    ) -> str | None:
        answer = host.call(
            "prune_tool_result",
            tool_name=tool_name,
            arguments=arguments,
            result=result,
            max_chars=max_chars,
        )
        return answer if isinstance(answer, str) else None

    def summarize(
        messages: Sequence[Mapping[str, Any]],
        previous_summary: str | None,
        budget_tokens: int,
        context: SummaryContext,
    ) -> str | None:
        seen = len(host.call_errors)
        answer = host.call(
            "summarize_middle",
            messages=messages,
            previous_summary=previous_summary,
            budget_tokens=budget_tokens,
            context=context,
        )
        if answer is None:
            failures = [e for e in host.call_errors[seen:] if e.hook == "summarize_middle"]
            if failures:
                raise failures[-1].error  # the engine's failure ladder needs the kind
        return answer if isinstance(answer, str) else None

    def scan(text: str) -> list[Finding]:
        findings = host.call("scan_threat", content=text, scope="context")
        return list(findings or [])

    def pre_compress(messages: Sequence[Mapping[str, Any]]) -> list[str]:
        if session is None:
            return []
        from hermes_core.memory.calls import redacted_messages

        clean = redacted_messages(messages)  # every string handed to a provider is redacted
        notes = host.call("memory_on_pre_compress", messages=clean, session=session)
        return [n for n in notes or [] if isinstance(n, str) and n.strip()]

    def plan(messages: Sequence[Mapping[str, Any]], task: str, focus: str | None) -> list[Any]:
        if not host.implementations("plan_compaction"):
            return []  # nobody steers: spare redacting the whole span
        from hermes_core.memory.calls import redacted_messages
        from hermes_core.redact import redact

        answers = host.call(
            "plan_compaction",
            messages=redacted_messages(messages),  # copies: a planner changes nothing
            task=redact(task),
            focus=redact(focus) if focus else None,
            session=session,
        )
        return list(answers or [])

    return CompressionHooks(
        prune=prune,
        summarize=None if mode == "fallback" else summarize,
        scan=scan,
        pre_compress=pre_compress,
        plan=plan,
    )
