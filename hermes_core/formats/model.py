"""What a conversion to OpenAI messages remembers so the way back is lossless.

Why a record apart from the messages: the compressor works on OpenAI chat messages and keeps
the ones it does not rewrite as they are, hidden keys included. Each OpenAI message made from
the host's payload carries ``_hermes_source`` (an index into :attr:`Converted.sources`, a key
``to_wire`` drops); the source names the host item it came from and the wire digest it had.
On the way back a message whose digest still matches gives back the host's own item (the
same object, so the same bytes); a message that changed is rebuilt with the original as a
template; a message with no source (a summary) is converted fresh. A message that lost its
hidden key (a list that went through ``to_wire``) is found again by its digest, in order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from hermes_core.errors import InvalidMessages
from hermes_core.tokens.costs import message_digest

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
    """Each message with its source: the hidden key when it is valid, else the next source
    (in payload order) with the same digest; and whether its digest still matches."""
    by_digest: dict[bytes, list[int]] = {}
    for number, source in enumerate(converted.sources):
        by_digest.setdefault(source.digest, []).append(number)
    taken: set[int] = set()
    last = -1
    pieces: list[Piece] = []
    for raw in messages:
        message = raw if isinstance(raw, dict) else dict(raw)
        digest = message_digest(message)
        hint = message.get(HIDDEN_KEY)
        index: int | None = None
        if (
            isinstance(hint, int)
            and not isinstance(hint, bool)
            and 0 <= hint < len(converted.sources)
        ):
            index = hint
        if index is None:
            free = [i for i in by_digest.get(digest, []) if i not in taken]
            later = [i for i in free if i > last]
            index = (later or free)[0] if free else None
        if index is not None:
            taken.add(index)
            last = index
        unchanged = index is not None and converted.sources[index].digest == digest
        pieces.append(Piece(message, index, unchanged))
    return pieces


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
