"""What a session keeps in its store row between processes, and the checks on what a host
hands in.

The state is JSON in the ``sessions.state`` column. It is read defensively: a row written by
another version, or damaged by hand, gives defaults for what it cannot parse (never an
exception: a bad row must not stop a host), and the compressor validates its own part.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from hermes_core.errors import InvalidMessages, NotAMessage, SessionError
from hermes_core.host.alignment import Mark
from hermes_core.host.undo_history import History
from hermes_core.transcript.parts import type_problem
from hermes_core.transcript.validation import validate_appended

__all__ = [
    "MAX_ID_CHARS",
    "SessionState",
    "check_id",
    "check_items",
    "check_messages",
    "compaction_counters",
]

STATE_VERSION: Final = 1
MAX_ID_CHARS: Final = 256


@dataclass
class SessionState:
    """The session's memory of itself (see the module docstring)."""

    compressor: Mapping[str, Any] = field(default_factory=dict)
    host_mark: Mark | None = None
    blocks: str | None = None  # the frozen prompt blocks: same bytes after a restart
    user_turns: int = 0
    last_user: str | None = None
    context_length: int | None = None
    overflowed: bool = False
    model: str | None = None  # set by set_model(): kept across a restart
    synced: int = 0  # the newest user turn handed to the providers (each turn once)
    review: Mapping[str, Any] = field(default_factory=dict)  # background review counts
    history: History = field(default_factory=History)  # the compactions, for undo (host/undo.py)

    def to_record(self) -> dict[str, Any]:
        return {
            "v": STATE_VERSION,
            "compressor": dict(self.compressor),
            "host_mark": self.host_mark.to_json() if self.host_mark else None,
            "blocks": self.blocks,
            "user_turns": self.user_turns,
            "last_user": self.last_user,
            "context_length": self.context_length,
            "overflowed": self.overflowed,
            "model": self.model,
            "synced": self.synced,
            "review": dict(self.review),
            "compactions": self.history.to_json(),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any] | None) -> SessionState:
        if not isinstance(record, Mapping) or record.get("v") != STATE_VERSION:
            return cls()
        compressor = record.get("compressor")
        turns = record.get("user_turns")
        blocks = record.get("blocks")
        last_user = record.get("last_user")
        length = record.get("context_length")
        model = record.get("model")
        synced = record.get("synced")
        review = record.get("review")
        return cls(
            compressor=compressor if isinstance(compressor, Mapping) else {},
            host_mark=Mark.from_json(record.get("host_mark")),
            blocks=blocks if isinstance(blocks, str) else None,
            user_turns=turns if isinstance(turns, int) and turns >= 0 else 0,
            last_user=last_user if isinstance(last_user, str) else None,
            context_length=length if isinstance(length, int) and length > 0 else None,
            overflowed=record.get("overflowed") is True,
            model=model if isinstance(model, str) and model else None,
            synced=synced if isinstance(synced, int) and synced >= 0 else 0,
            review=review if isinstance(review, Mapping) else {},
            history=History.from_json(record.get("compactions")),
        )


#: what to pass instead, per id: a session always has an id; a user id may be left out
_ID_HINTS = {
    "session_id": "name the conversation with a string such as 'conv-1'",
    "user_id": "pass a string, or None for a single-user home",
}


def check_id(value: object, what: str) -> str:
    """A session or user id: a non-empty string of at most 256 characters, no control
    characters (they would reach file names, SQL rows and provider URLs)."""
    hint = _ID_HINTS.get(what, "pass a non-empty string")
    if not isinstance(value, str):
        raise SessionError(f"{what} must be a string, got {type(value).__name__}; {hint}")
    if not value.strip():
        raise SessionError(f"{what} must not be empty; {hint}")
    if len(value) > MAX_ID_CHARS:
        raise SessionError(f"{what} is {len(value):,} characters; at most {MAX_ID_CHARS}")
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in value):
        raise SessionError(f"{what} holds control or format characters; use plain text")
    return value


def check_messages(messages: object) -> list[Any]:
    """The host's list, as a list (O(1) for a list: its items are checked by
    :func:`check_items` from where the new ones begin, so a turn costs O(new messages))."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise InvalidMessages(
            f"expected a list of message dicts, got {type(messages).__name__}",
            ["the transcript is not a list"],
        )
    return messages if isinstance(messages, list) else list(messages)


def check_items(messages: list[Any], start: int = 0) -> list[dict[str, Any]]:
    """``messages[start:]`` as message dicts; :class:`NotAMessage` naming the first item that
    is not a mapping, :class:`InvalidMessages` naming a content part whose ``"type"`` is not
    a string (no count could be made of it), and :class:`InvalidMessages` listing what a
    provider would reject (an unknown role, a broken tool-call pair; a trailing turn in flight
    is fine), before anything changes: the same rule as ``compress`` (docs/formats.md)."""
    out: list[dict[str, Any]] = []
    for index in range(start, len(messages)):
        message = messages[index]
        if not isinstance(message, dict):
            if not isinstance(message, Mapping):
                problem = f"message {index}: expected a dict, got {type(message).__name__}"
                raise NotAMessage(problem, [problem])
            message = dict(message)
        content = message.get("content")
        for k, part in enumerate(content if isinstance(content, list) else ()):
            if bad := type_problem(part, f"message {index}: content[{k}]"):
                raise InvalidMessages(f"invalid transcript: {bad}", [bad])
        out.append(message)
    if problems := validate_appended(messages, start):
        count = f"{len(problems):,} problem{'' if len(problems) == 1 else 's'}"
        why = f"invalid transcript ({count}; nothing was stored): {problems[0]}"
        raise InvalidMessages(why, problems)
    return out


def compaction_counters(result: Any) -> dict[str, int]:
    """Counter deltas for a committed compaction: its kind and the summariser's usage
    (``stats["summarizer_usage"]``: calls, characters and tokens in, tokens the API billed)."""
    deltas = {"compactions": 1} if result.status == "compressed" else {"prune_only": 1}
    usage = result.stats.get("summarizer_usage")
    if isinstance(usage, Mapping):
        for key, value in usage.items():
            if isinstance(value, int) and not isinstance(value, bool):
                deltas[f"summarizer_{key}"] = value
    return deltas
