"""One-shot compression: a fresh :class:`Compressor` for one list (``hermes_core.compress``).

Apart from the engine because it is the library's front door for callers with no session: it
keeps no anti-thrash history and no state between calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.compression.arguments import check_messages
from hermes_core.compression.engine import Compressor
from hermes_core.compression.guidance import Guidance
from hermes_core.compression.hooks import SummarizeFn, SummarizerMode
from hermes_core.compression.result import CompressionResult
from hermes_core.config.settings import Settings
from hermes_core.errors import InvalidArgument

__all__ = ["compress"]


def compress(
    messages: Sequence[Any],
    *,
    context_length: int,
    max_tokens: int = 0,
    config: Settings | Mapping[str, Any] | None = None,
    summarizer: SummarizerMode | SummarizeFn | None = None,
    force: bool = False,
    focus: str | None = None,
) -> CompressionResult:
    """One-shot compression with a fresh :class:`Compressor` (no anti-thrash history).

    ``focus`` names what the summary must keep (hermes-agent's ``/compress <topic>``; at
    most 300 characters are used): the LLM summariser is told, the fallback quotes the
    compacted lines that mention it."""
    check_messages(messages)
    if focus is not None and not isinstance(focus, str):
        raise InvalidArgument.of("focus", "text or None", focus)
    compressor = Compressor(
        config, context_length=context_length, max_tokens=max_tokens, summarizer=summarizer
    )
    return compressor.compress(messages, force=force, guidance=Guidance(focus))
