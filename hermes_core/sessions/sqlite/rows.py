"""A message dict <-> a ``messages`` row, losslessly.

The five well-known keys get columns when their value has the column's type: ``role``,
``content``, ``tool_call_id`` and ``name`` when they are strings, ``tool_calls`` when it is a
list (stored as JSON). Everything else goes into the JSON ``extra`` column:

* ``other``: every key without a column, and a well-known key whose value does not fit its
  column (``content`` that is ``None`` or a list of parts, a number where a string was
  expected). For list content the ``content`` column still holds the text parts joined by
  newlines, so it stays searchable; ``other`` wins when the row is read back.
* ``order``: the key order, only when reading back would produce another one.

A string that cannot be encoded as UTF-8 (a lone surrogate) is kept in ``other`` as a JSON
``\\u`` escape, and the ``content`` column gets a searchable copy with ``?`` in its place.

Three more columns exist only for search (never read back into the message): ``tool_names``
(the called functions' names and the ``name`` key), ``tool_args`` (the calls' arguments) and
``owner`` (:func:`owner_token` of the session's user, so the full-text index can select one
user's rows by itself).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_core.errors import SessionError
from hermes_core.sessions.retention import DROPPED_NOTICE
from hermes_core.transcript.messages import message_text

__all__ = [
    "COLUMN_KEYS",
    "EncodedMessage",
    "decode_message",
    "encode_message",
    "owner_token",
    "tool_text",
]

COLUMN_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


@dataclass(frozen=True)
class EncodedMessage:
    """The column values of one message row."""

    role: str | None
    content: str | None
    tool_calls: str | None
    tool_call_id: str | None
    name: str | None
    extra: str | None
    tool_names: str | None = None
    tool_args: str | None = None

    def columns(self) -> tuple[str | None, ...]:
        """The values of :data:`COLUMN_KEYS` then ``extra``: what the message is made of."""
        return (self.role, self.content, self.tool_calls, self.tool_call_id, self.name, self.extra)

    def search_columns(self) -> tuple[str | None, str | None]:
        return (self.tool_names, self.tool_args)


def tool_text(message: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(``tool_names``, ``tool_args``) of a message: what the index sees of its tool use."""
    names: list[str] = []
    args: list[str] = []
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping):
            continue
        if isinstance(function.get("name"), str):
            names.append(function["name"])
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            args.append(arguments)
        elif arguments is not None:
            try:
                args.append(_dumps(arguments))
            except (TypeError, ValueError, RecursionError):
                continue  # not JSON: not searchable, and encode_message refuses it anyway
    if isinstance(message.get("name"), str):
        names.append(message["name"])
    return (_searchable(" ".join(names)) or None, _searchable("\n".join(args)) or None)


def _searchable(text: str) -> str:
    return text if _utf8(text) else text.encode("utf-8", "replace").decode("utf-8")


def owner_token(user_id: str | None) -> str:
    """One index token standing for ``user_id`` (``None``: the anonymous principal).

    A hash, so that any user id is one token of letters and digits under every tokenizer;
    it only narrows what the index returns: the user filter itself is an exact SQL check.
    """
    if user_id is None:
        return "anonymous0principal"
    return "u" + hashlib.sha256(user_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _dumps(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if _utf8(text) else json.dumps(value, separators=(",", ":"))


def encode_message(message: Mapping[str, Any], index: int = 0) -> EncodedMessage:
    """The row for ``message``; :class:`SessionError` for what JSON cannot hold."""
    if not isinstance(message, Mapping):
        raise SessionError(f"message {index} is a {type(message).__name__}, not a dict")
    bad = [key for key in message if not isinstance(key, str)]
    if bad:
        raise SessionError(f"message {index} has a key that is not a string: {bad[0]!r}")
    other: dict[str, Any] = {}
    columns: dict[str, str | None] = {}
    dropped = message.get("content") == DROPPED_NOTICE
    for key, value in message.items():
        if key == "content" and dropped:
            other[key] = value  # kept in extra, unindexed (:data:`.retention.DROPPED_EXTRA`)
        elif key == "tool_calls" and isinstance(value, list):
            columns[key] = _json_or_fail(value, index, key)
        elif key in COLUMN_KEYS and key != "tool_calls" and isinstance(value, str) and _utf8(value):
            columns[key] = value
        else:
            other[key] = value
    if "content" in other and isinstance(other["content"], (str, list)) and not dropped:
        text = other["content"] if isinstance(other["content"], str) else message_text(message)
        columns["content"] = _searchable(text)
    extra: dict[str, Any] = {}
    if other:
        extra["other"] = other
    present = [key for key in COLUMN_KEYS if columns.get(key) is not None]
    if [*present, *(k for k in other if k not in present)] != list(message):
        extra["order"] = list(message)
    tool_names, tool_args = tool_text(message)
    return EncodedMessage(
        role=columns.get("role"),
        content=columns.get("content"),
        tool_calls=columns.get("tool_calls"),
        tool_call_id=columns.get("tool_call_id"),
        name=columns.get("name"),
        extra=_json_or_fail(extra, index, "extra") if extra else None,
        tool_names=tool_names,
        tool_args=tool_args,
    )


def _json_or_fail(value: Any, index: int, key: str) -> str:
    try:
        return _dumps(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise SessionError(
            f"message {index}: {key!r} holds a value JSON cannot store ({exc}); nothing was written"
        ) from None


def decode_message(columns: Sequence[str | None], extra: str | None) -> dict[str, Any]:
    """The message dict a row holds (the inverse of :func:`encode_message`): ``columns``
    are the values of :data:`COLUMN_KEYS`, in that order."""
    message: dict[str, Any] = {}
    for key, value in zip(COLUMN_KEYS, columns, strict=True):
        if value is not None:
            message[key] = json.loads(value) if key == "tool_calls" else value
    if extra:
        data = json.loads(extra)
        message.update(data.get("other", {}))
        order = data.get("order")
        if order:
            message = {key: message[key] for key in order}
    return message
