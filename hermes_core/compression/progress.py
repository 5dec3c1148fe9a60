"""The sentences of ``compression.progress_notices``: what a chat surface shows a user.

Kept apart and pure so the wording can be read (and changed) in one place: short, in plain
words, with the token figures of the compression report.
"""

from __future__ import annotations

from hermes_core.compression.result import CompressionResult

__all__ = ["ending_notice", "started_notice"]


def started_notice(tokens: int) -> str:
    return f"Compressing context: {tokens:,} tokens…"


def ending_notice(result: CompressionResult) -> tuple[str, str]:
    """``(phase, text)`` for the end of a compression that was started or changed something."""
    if result.status in ("compressed", "pruned"):
        text = f"Context compressed: {result.tokens_before:,} -> {result.tokens_after:,} tokens"
        return "finished", text
    if result.status == "aborted":
        return "failed", "Compression failed; kept the conversation as it was"
    return "skipped", "Nothing to compress; kept the conversation as it was"
