"""What the summariser cost: requests, what we sent, and the usage the API reported.

The ``summarize_middle`` hook returns text only, and its contract stays so. The cost of a
summary is still wanted (a compaction that spends 40K tokens to save 30K is a bad trade,
and a host bills it), so it travels beside the hook: the engine opens a
:class:`SummarizerUsage` for the compression and the built-in LLM summariser records each
request into it through :func:`record_summarizer_call` (a context variable, so nothing in
between has to pass it along). A summariser that records nothing (a plugin returning plain
text) is counted as one call with the input it was handed and unknown usage.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SummarizerUsage", "metering", "record_summarizer_call"]

CountMessages = Callable[[Sequence[Mapping[str, Any]]], int]

_current: ContextVar[SummarizerUsage | None] = ContextVar("hermes_summarizer_usage", default=None)


def _chars(messages: Sequence[Mapping[str, Any]]) -> int:
    """Characters of text content and tool-call arguments (what a summariser reads)."""
    total = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            total += len(content)
        elif isinstance(content, list):
            total += sum(
                len(part["text"])
                for part in content
                if isinstance(part, Mapping) and isinstance(part.get("text"), str)
            )
        for call in message.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, Mapping) else None
            arguments = function.get("arguments") if isinstance(function, Mapping) else None
            if isinstance(arguments, str):
                total += len(arguments)
    return total


def _reported(usage: Mapping[str, Any] | None, key: str) -> int | None:
    value = usage.get(key) if usage else None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


@dataclass
class SummarizerUsage:
    """Summariser requests of one compression, summed over retries and attempts.

    ``calls``: requests made (each retry counts, failed ones too); ``input_chars`` and
    ``input_tokens``: what was sent, by our own count; ``prompt_tokens`` and
    ``completion_tokens``: the sums of what the API's ``usage`` reported, ``None`` when no
    request reported them.
    """

    count: CountMessages = field(repr=False)
    calls: int = 0
    input_chars: int = 0
    input_tokens: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    def add(
        self, sent: Sequence[Mapping[str, Any]], usage: Mapping[str, Any] | None = None
    ) -> None:
        """One request that sent ``sent`` and got ``usage`` back (``None``: no answer)."""
        self.calls += 1
        self.input_chars += _chars(sent)
        self.input_tokens += self.count(sent)
        prompt = _reported(usage, "prompt_tokens")
        if prompt is not None:
            self.prompt_tokens = (self.prompt_tokens or 0) + prompt
        completion = _reported(usage, "completion_tokens")
        if completion is not None:
            self.completion_tokens = (self.completion_tokens or 0) + completion

    def as_dict(self) -> dict[str, int | None]:
        return {
            "calls": self.calls,
            "input_chars": self.input_chars,
            "input_tokens": self.input_tokens,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


@contextmanager
def metering(usage: SummarizerUsage) -> Iterator[SummarizerUsage]:
    """Route :func:`record_summarizer_call` in this context (thread, task) to ``usage``."""
    token = _current.set(usage)
    try:
        yield usage
    finally:
        _current.reset(token)


def record_summarizer_call(
    sent: Sequence[Mapping[str, Any]], usage: Mapping[str, Any] | None
) -> None:
    """Called by a summariser for each request it makes; a no-op outside :func:`metering`."""
    meter = _current.get()
    if meter is not None:
        meter.add(sent, usage)
