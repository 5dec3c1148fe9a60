"""What a conversion to OpenAI messages remembers so the way back is lossless.

Why a record apart from the messages: the compressor works on OpenAI chat messages and keeps
the ones it does not rewrite as they are, hidden keys included. Each OpenAI message made from
the host's payload carries ``_hermes_source`` (an index into :attr:`Converted.sources`, a key
``to_wire`` drops); the source names the host item it came from and the wire digest it had.
On the way back a message whose digest still matches gives back the host's own item (the
same object, so the same bytes); a message that changed is rebuilt with the original as a
template; a message with no source (a summary) is converted fresh. A message that lost its
hidden key (a list that went through ``to_wire``) is found again by its digest, in order,
and only when that is unambiguous (:func:`match_by_digest`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from hermes_core.errors import InvalidMessages
from hermes_core.transcript.identity import message_digest

__all__ = [
    "FORMATS",
    "HIDDEN_KEY",
    "SYSTEM_ITEM",
    "Converted",
    "Format",
    "Piece",
    "Source",
    "add_source",
    "check_format",
    "match_by_digest",
    "pieces_of",
    "refuse",
    "stamp",
]

Format = Literal["openai", "anthropic", "responses"]
FORMATS: Final = ("openai", "anthropic", "responses")
#: the key on each OpenAI message that names its source; ``to_wire`` drops it (leading ``_``)
HIDDEN_KEY: Final = "_hermes_source"
#: the item index of a message made from the payload's top-level ``system`` / ``instructions``
SYSTEM_ITEM: Final = -1
Message = dict[str, Any]


@dataclass(frozen=True)
class Source:
    """Where one OpenAI message came from: host item ``item`` (``SYSTEM_ITEM`` for the
    top-level system text), the ``units`` it carries (Anthropic: indexes of that message's
    content blocks, ``None`` for a string content; Responses: indexes of input items) and the
    digest of the OpenAI message as it was made."""

    item: int
    units: tuple[int, ...] | None
    digest: bytes


@dataclass
class Converted:
    """The OpenAI messages of a host payload, and what is needed to go back to its format.

    ``items`` are the host's messages (Anthropic) or input items (Responses) as given, never
    copied; ``envelope`` is the payload object when it was one (its other keys come back as
    they were), ``None`` for a bare list; ``system`` is its ``system`` (Anthropic) or
    ``instructions`` (Responses) value, ``None`` when absent.
    """

    format: Format
    messages: list[Message]
    sources: list[Source] = field(default_factory=list)
    items: list[Any] = field(default_factory=list)
    envelope: Mapping[str, Any] | None = None
    system: Any = None
    #: host items no OpenAI message carries (Responses input of only unknown items): they
    #: come back at the end
    loose: tuple[int, ...] = ()

    def item_sources(self, item: int) -> list[int]:
        """The sources made from host item ``item``, in order."""
        return [i for i, s in enumerate(self.sources) if s.item == item]


@dataclass(frozen=True)
class Piece:
    """One OpenAI message on the way back: its source (``None``: made by us or the host since)
    and whether it is still exactly what the conversion made."""

    message: Message
    source: int | None
    unchanged: bool


def check_format(fmt: object) -> Format:
    if fmt not in FORMATS:
        raise InvalidMessages(
            f"unknown message format {fmt!r}; use one of {', '.join(FORMATS)}",
            [f"unknown message format {fmt!r}"],
        )
    return fmt


def refuse(what: str, problems: list[str]) -> InvalidMessages:
    """The error for a payload that cannot be converted: the first problem, and all of them."""
    count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
    return InvalidMessages(f"{what} ({count}): {problems[0]}", problems)


def pieces_of(messages: Sequence[Mapping[str, Any]], converted: Converted) -> list[Piece]:
    """Each message with its source (the hidden key when it is valid, else one found by
    digest, see :func:`match_by_digest`) and whether its digest still matches."""
    dicts = [raw if isinstance(raw, dict) else dict(raw) for raw in messages]
    digests = [message_digest(m) for m in dicts]
    count = len(converted.sources)
    index: list[int | None] = []
    for message in dicts:
        hint = message.get(HIDDEN_KEY)
        valid = isinstance(hint, int) and not isinstance(hint, bool) and 0 <= hint < count
        index.append(hint if valid else None)
    match_by_digest(digests, index, [s.digest for s in converted.sources])
    return [
        Piece(m, i, i is not None and converted.sources[i].digest == d)
        for m, i, d in zip(dicts, index, digests, strict=True)
    ]


def match_by_digest(digests: list[bytes], index: list[int | None], wanted: list[bytes]) -> None:
    """Give each message without a source (``index[n] is None``) the source it was made from,
    found by digest, in place; a message that cannot be told apart stays without one.

    Why not the first source with the same digest: identical OpenAI messages (the same text,
    different thinking signatures or reasoning items) would take another turn's objects. A
    compaction keeps the head and the tail in order, so each run of messages without a source
    is matched against the free sources between its neighbours' in order: from the end while
    digests agree (the tail), then from the start (the head), then in between only a digest
    that occurs once on each side. The rest is rebuilt fresh: never a guess."""
    taken = {i for i in index if i is not None}
    n = 0
    low = -1
    while n < len(index):
        hinted = index[n]
        if hinted is not None:
            low = max(low, hinted)
            n += 1
            continue
        end = n
        while end < len(index) and index[end] is None:
            end += 1
        high = next((i for i in index[end:] if i is not None), len(wanted))
        free = [s for s in range(low + 1, high) if s not in taken]
        _match_run(list(range(n, end)), free, digests, index, wanted)
        n = end


def _match_run(
    run: list[int],
    free: list[int],
    digests: list[bytes],
    index: list[int | None],
    wanted: list[bytes],
) -> None:
    i, j = len(run) - 1, len(free) - 1
    while i >= 0 and j >= 0 and digests[run[i]] == wanted[free[j]]:
        index[run[i]] = free[j]
        i, j = i - 1, j - 1
    a = b = 0
    while a <= i and b <= j and digests[run[a]] == wanted[free[b]]:
        index[run[a]] = free[b]
        a, b = a + 1, b + 1
    middle, sources = run[a : i + 1], free[b : j + 1]
    said = Counter(digests[m] for m in middle)
    made = Counter(wanted[s] for s in sources)
    last = -1
    for m in middle:
        digest = digests[m]
        if said[digest] != 1 or made[digest] != 1:
            continue
        source = next(s for s in sources if wanted[s] == digest)
        if source > last:
            index[m], last = source, source


def stamp(message: Message, index: int) -> Message:
    """``message`` with its hidden source key (a new dict: the digest is taken without it)."""
    return {**message, HIDDEN_KEY: index}


def add_source(
    converted: Converted, message: Message, item: int, units: tuple[int, ...] | None
) -> None:
    """Record ``message`` as made from host item ``item`` and append it, stamped."""
    index = len(converted.sources)
    converted.sources.append(Source(item, units, message_digest(message)))
    converted.messages.append(stamp(message, index))
