"""Plain data handed to hooks: small, frozen where possible, free of behaviour.

Plugins receive these instead of core objects so that a plugin depends only on
``hermes_core``'s public types, never on how the host is put together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

Message = dict[str, Any]


@dataclass(frozen=True)
class Finding:
    """One reason to distrust a piece of text, reported by ``scan_threat``.

    ``pattern_id`` is stable (tests and users refer to it); ``category`` groups patterns
    (``override``, ``exfil``, ...); ``plugin`` names who reported it.
    """

    pattern_id: str
    category: str
    message: str
    plugin: str = ""
    excerpt: str = ""


@dataclass(frozen=True)
class SessionInfo:
    """What a plugin may know about the conversation it serves.

    ``user_id`` is the principal every provider call must be bound to; ``None`` means a
    single-user home.
    """

    session_id: str
    user_id: str | None = None
    parent_session_id: str | None = None
    home: Path | None = None
    model: str | None = None


@dataclass(frozen=True)
class Turn:
    """A completed exchange handed to ``memory_sync``: the user's words and the reply."""

    user: str
    assistant: str
    messages: tuple[Mapping[str, Any], ...] = ()
    turn_index: int = 0


@dataclass(frozen=True)
class SummaryContext:
    """What ``summarize_middle`` may use besides the messages themselves."""

    model: str | None = None
    context_length: int = 0
    session: SessionInfo | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


#: A threat scanner over one piece of text (the ``scan_threat`` hook, or the built-in).
ScanFn = Callable[[str], Sequence[Finding]]
#: Characters one scanner call reads (under the scanner's cap of 65,536).
SCAN_WINDOW: Final = 56_000
#: Characters consecutive windows share: a payload shorter than this lies whole in one.
SCAN_OVERLAP: Final = 8_000


def scan_windows(text: str) -> Iterator[str]:
    """``text`` in pieces of at most :data:`SCAN_WINDOW` characters overlapping by
    :data:`SCAN_OVERLAP`; short text is one piece (long text is read whole, not cut)."""
    start = 0
    while True:
        yield text[start : start + SCAN_WINDOW]
        if start + SCAN_WINDOW >= len(text):
            return
        start += SCAN_WINDOW - SCAN_OVERLAP
