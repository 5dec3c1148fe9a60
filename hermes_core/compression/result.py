"""What a compression returns, and the events it reports on the way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from hermes_core.types import Message

Status = Literal["compressed", "pruned", "unchanged", "aborted"]
SummarizerUsed = Literal["llm", "fallback"]
EventKind = Literal[
    "compression_started",
    "compression_finished",
    "compression_blocked",
    "compression_failed",
    "status",
]


@dataclass(frozen=True)
class CompressionEvent:
    """A status event for the host's UI; never carries the summariser's reasoning.

    ``status`` events (only with ``compression.progress_notices``) carry ``text``, a short
    sentence a chat surface can show as is, and ``phase`` (``started``, ``finished``,
    ``failed``, ``skipped``); the other kinds carry data for programs.
    """

    kind: EventKind
    data: dict[str, Any] = field(default_factory=dict)


EventSink = Callable[[CompressionEvent], None]


@dataclass
class CompressionResult:
    """The outcome of one compression.

    ``messages`` is a new list (the input is never mutated). ``archived`` holds, in their
    original form, every message that was replaced or rewritten, so nothing is lost: a host
    stores them as compacted rows, searchable and restorable.
    """

    messages: list[dict[str, Any]]
    status: Status
    reason: str | None
    tokens_before: int
    tokens_after: int
    summary: str | None = None
    summarizer: SummarizerUsed | None = None
    archived: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    def report(self) -> dict[str, Any]:
        """The keys of the ``compress`` command's report (00-product.md)."""
        return {
            "status": self.status,
            "reason": self.reason,
            "messages_before": self.stats.get("messages_before"),
            "messages_after": len(self.messages),
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "threshold_tokens": self.stats.get("threshold_tokens"),
            "summarizer": self.summarizer,
            "duration_ms": self.stats.get("duration_ms"),
            "passes": dict(self.stats.get("passes", {})),
            "token_counter": self.stats.get("token_counter"),
        }


def outcome(
    messages: list[Message],
    status: Status,
    reason: str | None,
    *,
    tokens_before: int,
    stats: dict[str, Any],
    archived: list[Message] | None = None,
    tokens_after: int | None = None,
) -> CompressionResult:
    """A result; an unchanged or aborted one keeps the input's token count."""
    if status in ("unchanged", "aborted") or tokens_after is None:
        tokens_after = tokens_before
    return CompressionResult(
        messages=list(messages),
        status=status,
        reason=reason,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        archived=list(archived or []),
        stats=stats,
    )


#: The reason of a compaction that worked but left the prompt over the threshold (retried
#: with a smaller tail, up to ``max_attempts``).
STILL_OVER = "still over the threshold: the protected head and tail alone cost too much"
