"""One-shot compression: a fresh :class:`Compressor` for one list (``hermes_core.compress``).

Apart from the engine because it is the library's front door for callers with no session: it
keeps no anti-thrash history and no state between calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.compression.arguments import check_messages
from hermes_core.compression.engine import Compressor
from hermes_core.compression.hooks import SummarizeFn, SummarizerMode
from hermes_core.compression.result import CompressionResult
from hermes_core.config.settings import Settings

__all__ = ["compress"]


def compress(
    messages: Sequence[Any],
    *,
    context_length: int,
    max_tokens: int = 0,
    config: Settings | Mapping[str, Any] | None = None,
    summarizer: SummarizerMode | SummarizeFn | None = None,
    force: bool = False,
) -> CompressionResult:
    """One-shot compression with a fresh :class:`Compressor` (no anti-thrash history)."""
    check_messages(messages)
    compressor = Compressor(
        config, context_length=context_length, max_tokens=max_tokens, summarizer=summarizer
    )
    return compressor.compress(messages, force=force)
