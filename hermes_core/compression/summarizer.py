"""The LLM summariser behind the built-in ``summarize_middle``: prompt, call, check, fall back.

It owns layer 1 of the failure handling (spec 10 §5): when the auxiliary model is missing,
overloaded, slow or answers garbage, the same prompt goes once to the main model. Every other
layer (cooldown, static fallback, abort) belongs to the engine, which reads ``LLMError.kind``.
An answer that is empty, refused, truncated or only reasoning is a failure, never a summary.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hermes_core.compression.guidance import guided_prompt
from hermes_core.compression.prompts import first_prompt, update_prompt
from hermes_core.compression.serialize import MAX_SUMMARY_INPUT_CHARS, head_tail, serialize_turns
from hermes_core.compression.summary_usage import record_summarizer_call
from hermes_core.config.settings import AuxiliaryCompressionSettings, ModelSettings
from hermes_core.llm import ChatClient, ChatEndpoint, ChatReply, LLMError, retry_on_main_model
from hermes_core.redact import redact

if TYPE_CHECKING:
    import httpx

__all__ = [
    "LLMSummarizer",
    "SummaryOutcome",
    "SummaryRejected",
    "check_summary",
    "strip_reasoning",
]

_REASONING_TAGS = "think|thinking|reasoning"
_CLOSED_BLOCK = re.compile(rf"<({_REASONING_TAGS})\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_OPEN_TAG = re.compile(rf"<(?:{_REASONING_TAGS})\b[^>]*>", re.IGNORECASE)
_CLOSE_TAG = re.compile(rf"</(?:{_REASONING_TAGS})\s*>", re.IGNORECASE)

#: Answers longer than this are never treated as refusals: a summary may quote one.
REFUSAL_MAX_CHARS = 300
_INABILITY = (
    r"i\s*(?:'m|am)?\s*(?:can'?t|cannot|can\s+not|won'?t|will\s+not|unable\s+to"
    r"|not\s+able\s+to)\s+(?:help|assist|comply|provide|summari[sz]e|do|fulfil|complete"
    r"|process|create|write|continue)"
)
_REFUSAL = re.compile(
    r"^\W*(?:(?:(?:i'?m|i\s+am)\s+(?:very\s+|really\s+)?sorry|i\s+apologi[sz]e|sorry)"
    rf"[\s,.!]*(?:but\s+)?)?{_INABILITY}"
    rf"|^\W*as\s+an\s+ai\b[^.]{{0,80}}\b(?:{_INABILITY}|unable|not\s+able)",
    re.IGNORECASE,
)


#: The serialised turns keep at least this much of the cap however long the previous
#: summary is (it is cut in the middle first).
MIN_TURN_CHARS = 40_000


def _prompt(previous: str, turns: str, budget_tokens: int) -> list[dict[str, str]]:
    return (
        update_prompt(previous, turns, budget_tokens)
        if previous
        else first_prompt(turns, budget_tokens)
    )


def _capped_prompt(
    messages: Sequence[Mapping[str, Any]], previous: str, budget_tokens: int
) -> list[dict[str, str]]:
    """The summariser prompt, at most :data:`MAX_SUMMARY_INPUT_CHARS` characters in all:
    template, previous summary (with its ledger) and serialised turns together."""
    frame = sum(len(message["content"]) for message in _prompt("", "", budget_tokens))
    room_for_previous = MAX_SUMMARY_INPUT_CHARS - frame - MIN_TURN_CHARS
    if len(previous) > room_for_previous:
        previous = head_tail(previous, max(room_for_previous, 1_000))
    overhead = sum(len(message["content"]) for message in _prompt(previous, "", budget_tokens))
    turns = serialize_turns(messages, max_chars=max(MAX_SUMMARY_INPUT_CHARS - overhead, 1_000))
    return _prompt(previous, turns, budget_tokens)


class SummaryRejected(LLMError):
    """The model answered, but not with a usable summary (kind ``"rejected"``).

    ``reason`` is one of ``"empty"``, ``"think_only"``, ``"refusal"``, ``"truncated"``. It is an
    :class:`LLMError` so the engine handles it with the other failures: no main-model retry,
    the ordinary cooldown, then the static fallback.
    """

    def __init__(self, reason: str, message: str = "", *, model: str = "") -> None:
        super().__init__(
            message or f"the summary was rejected: {reason}", kind="rejected", model=model
        )
        self.reason = reason


def strip_reasoning(text: str) -> str:
    """``text`` without ``<think>``/``<thinking>``/``<reasoning>`` blocks.

    A closing tag with no opening one (templates that put ``<think>`` in the prompt) drops
    everything before it; an opening tag never closed at the start means the model only
    thought, so the result is empty.
    """
    text = _CLOSED_BLOCK.sub("", text)
    close = _CLOSE_TAG.search(text)
    if close is not None and not _OPEN_TAG.search(text, 0, close.start()):
        text = text[close.end() :]
    opening = _OPEN_TAG.match(text.lstrip())
    if opening is not None:
        return ""
    return text.strip()


def _is_refusal(text: str) -> bool:
    if len(text) > REFUSAL_MAX_CHARS:
        return False
    return _REFUSAL.match(text.replace("\u2019", "'")) is not None


def check_summary(text: str, finish_reason: str | None) -> str:
    """The usable summary in ``text``, or :class:`SummaryRejected` saying why there is none."""
    if finish_reason == "length":
        raise SummaryRejected(
            "truncated",
            "the summary was cut off by the model's output limit (finish_reason "
            '"length"); use a model with a longer output or lower the summary budget',
        )
    if not text.strip():
        raise SummaryRejected("empty", "the model returned an empty summary")
    cleaned = strip_reasoning(text)
    if not cleaned:
        raise SummaryRejected(
            "think_only", "the model returned only reasoning and no summary; try another model"
        )
    if _is_refusal(cleaned):
        raise SummaryRejected(
            "refusal", f"the model refused to summarise: {cleaned[:120]!r}; try another model"
        )
    return cleaned


@dataclass(frozen=True)
class SummaryOutcome:
    """A summary and how it was obtained; ``attempts`` is ``(model, kind or "ok")`` per call."""

    text: str
    model_used: str
    attempts: list[tuple[str, str]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)


def _same_endpoint(a: ChatEndpoint, b: ChatEndpoint) -> bool:
    return a.base_url.rstrip("/") == b.base_url.rstrip("/") and a.model == b.model


class LLMSummarizer:
    """Summarises the middle through ``auxiliary.compression``, with one retry on the main model.

    Endpoint choice: ``aux.base_url`` with ``aux.model`` (empty: the main model's name; empty
    too: sent empty, which single-model servers accept) and ``aux.api_key_env`` only, so the
    main key never goes to another host. Without ``aux.base_url`` the main endpoint is used
    with ``aux.model or model.name`` and ``aux.api_key_env or model.api_key_env``. The main
    model (``model.base_url`` + ``model.name``) is the layer-1 fallback when it differs.
    """

    def __init__(
        self,
        aux: AuxiliaryCompressionSettings,
        model: ModelSettings,
        *,
        environ: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._environ = environ
        self._transport = transport
        self.primary = _primary_endpoint(aux, model)
        self.fallback = _fallback_endpoint(aux, model, self.primary)

    def __repr__(self) -> str:
        primary = self.primary.model if self.primary else None
        fallback = self.fallback.model if self.fallback else None
        return f"LLMSummarizer(primary={primary!r}, fallback={fallback!r})"

    def available(self) -> bool:
        """True when an endpoint is configured (says nothing about whether it answers)."""
        return self.primary is not None

    def summarize(
        self,
        messages: Sequence[Mapping[str, Any]],
        previous_summary: str | None,
        budget_tokens: int,
        *,
        extra: Mapping[str, Any] | None = None,
    ) -> SummaryOutcome:
        """The summary of ``messages`` (updating ``previous_summary``), or raise LLMError.
        ``extra``: the focus and memory handover of a guided compaction (guidance.py)."""
        if self.primary is None:
            raise LLMError(
                "no summariser is configured; set auxiliary.compression.base_url "
                "or model.base_url and model.name",
                kind="not_found",
            )
        previous = redact(previous_summary).strip() if previous_summary else ""
        prompt = guided_prompt(_capped_prompt(messages, previous, budget_tokens), extra)
        endpoints = [self.primary] + ([self.fallback] if self.fallback else [])
        attempts: list[tuple[str, str]] = []
        for index, endpoint in enumerate(endpoints):
            try:
                reply = self._complete(endpoint, prompt)
                text = check_summary(reply.text, reply.finish_reason)
            except LLMError as exc:
                attempts.append((endpoint.model, exc.kind))
                exc.model = exc.model or endpoint.model
                last = index == len(endpoints) - 1
                if last or not retry_on_main_model(exc.kind):
                    exc.attempts = list(attempts)
                    raise
                continue
            attempts.append((endpoint.model, "ok"))
            return SummaryOutcome(text, endpoint.model, attempts, dict(reply.usage))
        raise AssertionError("unreachable: the loop returns or raises")

    def _complete(self, endpoint: ChatEndpoint, prompt: list[dict[str, Any]]) -> ChatReply:
        """One request, recorded for the compression's usage report whatever its outcome
        (a rejected answer was still paid for; a failed request still sent the prompt)."""
        usage: dict[str, Any] | None = None
        try:
            with ChatClient(endpoint, environ=self._environ, transport=self._transport) as client:
                reply = client.complete(prompt)
            usage = reply.usage
            return reply
        except LLMError as exc:
            usage = exc.usage
            raise
        finally:
            record_summarizer_call(prompt, usage)


def _primary_endpoint(
    aux: AuxiliaryCompressionSettings, model: ModelSettings
) -> ChatEndpoint | None:
    if aux.base_url.strip():
        return ChatEndpoint(aux.base_url, aux.model or model.name, aux.api_key_env, aux.timeout)
    name = aux.model or model.name
    if model.base_url.strip() and name:
        key_env = aux.api_key_env or model.api_key_env
        return ChatEndpoint(model.base_url, name, key_env, aux.timeout)
    return None


def _fallback_endpoint(
    aux: AuxiliaryCompressionSettings, model: ModelSettings, primary: ChatEndpoint | None
) -> ChatEndpoint | None:
    if primary is None or not (model.base_url.strip() and model.name):
        return None
    main = ChatEndpoint(model.base_url, model.name, model.api_key_env, aux.timeout)
    return None if _same_endpoint(main, primary) else main
