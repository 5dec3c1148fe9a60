"""Why a compaction ran: the ``reason`` every committed compaction carries.

An unchanged or aborted result says why nothing changed, a pruning and a fallback summary say
what stood in for what; a compaction that needed no such word says what triggered it, so no
compaction reports ``reason: null`` (issue 27: the events and the CLI report it as is).
"""

from __future__ import annotations

from typing import Protocol


class _Deciding(Protocol):
    """What the compressor knows of its trigger when it starts a compaction."""

    _optional: bool
    _early_go: bool
    _idle_due: bool

    @property
    def threshold_tokens(self) -> int: ...


def ran_because(compressor: _Deciding, *, force: bool, overflow: bool, tokens: int) -> str:
    """The trigger of this compaction, in the words of docs/compression.md."""
    optional, early = compressor._optional, compressor._early_go
    idle, threshold = compressor._idle_due, compressor.threshold_tokens
    if overflow:
        return "the provider refused the last prompt as too long (compacted at once)"
    if optional:
        return "an early compaction the host ran when the cost schedule said it was due"
    if force:
        return "forced (force=True: compacted at once, past the trigger and the cooldowns)"
    if early:
        return (
            f"the cost schedule: carrying {tokens:,} tokens now costs more than a compaction "
            f"(threshold {threshold:,})"
        )
    if idle:
        return f"idle: the prompt cache has expired and {tokens:,} tokens are half the threshold"
    return f"at or over the threshold ({tokens:,} >= {threshold:,} tokens)"
