"""Which of the messages a host hands in are new, at O(new messages).

A host calls ``prepare`` with its whole conversation each time: its own list that only grows,
or the list ``prepare`` returned last time with new messages appended. Either way the
messages seen before are a prefix, recognised by its length and the digests of its first,
middle and last message (the digest covers what is sent on the wire, so an API copy and the
stored form of a message compare equal). Anything else means the host rewrote its history.
An edit of some other message while those three stay the same goes unnoticed: the price of
O(1) per call instead of hashing the whole transcript every turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_core.errors import NotAMessage
from hermes_core.transcript.identity import message_digest

__all__ = ["Mark", "extends", "mark_of"]


@dataclass(frozen=True)
class Mark:
    """A list remembered by its length and the digests of its ends."""

    length: int
    first: bytes = b""
    last: bytes = b""
    middle: bytes = b""

    def to_json(self) -> list[Any]:
        return [self.length, self.first.hex(), self.last.hex(), self.middle.hex()]

    @classmethod
    def from_json(cls, value: Any) -> Mark | None:
        """A mark saved by :meth:`to_json`; ``None`` for anything else (never raises)."""
        if not (isinstance(value, list) and len(value) == 4):
            return None
        length, first, last, middle = value
        if isinstance(length, bool) or not isinstance(length, int) or length < 0:
            return None
        try:
            return cls(length, *(bytes.fromhex(str(v)) for v in (first, last, middle)))
        except ValueError:
            return None


def mark_of(messages: Sequence[Mapping[str, Any]]) -> Mark:
    """The mark of the host's list: its length and the digests of three of its messages
    (``NotAMessage`` naming one that is not a message dict: it is read before the new
    messages are checked one by one)."""
    if not messages:
        return Mark(0)
    n = len(messages)
    for index in (0, n // 2, n - 1):
        if not isinstance(messages[index], Mapping):
            kind = type(messages[index]).__name__
            problem = f"message {index}: expected a dict, got {kind}"
            raise NotAMessage(problem, [problem])
    return Mark(
        n,
        message_digest(messages[0]),
        message_digest(messages[-1]),
        message_digest(messages[n // 2]),
    )


def extends(messages: Sequence[Any], mark: Mark | None) -> bool:
    """True when ``messages`` starts with the list ``mark`` remembers (possibly all of it)."""
    if mark is None or mark.length == 0 or len(messages) < mark.length:
        return False
    ends = (
        (messages[0], mark.first),
        (messages[mark.length - 1], mark.last),
        (messages[mark.length // 2], mark.middle),
    )
    return all(isinstance(m, Mapping) and message_digest(m) == digest for m, digest in ends)
