"""The message model: wire copies, turn groups and small accessors for OpenAI chat messages.

Everything here is pure and takes one pass over the transcript, so a host can afford it before
every request. Inputs are never mutated. Validation lives in
:mod:`hermes_core.transcript.validation`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hermes_core.errors import InvalidArgument, NotAMessage
from hermes_core.transcript.objects import as_message_list
from hermes_core.transcript.validation import KNOWN_ROLES, role_of, tool_call_ids, validate_messages

__all__ = [
    "KNOWN_ROLES",
    "GroupKind",
    "Message",
    "TurnGroup",
    "is_real_user_message",
    "message_text",
    "to_wire",
    "tool_call_ids",
    "tool_name_for_results",
    "turn_groups",
    "validate_messages",
]

Message = dict[str, Any]
GroupKind = Literal["system", "user", "assistant", "tool_orphan", "other"]
_SYSTEM_ROLES = frozenset({"system", "developer"})


def _copy_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy_json(item) for item in value]
    return value


def to_wire(messages: Iterable[Any]) -> list[Message]:
    """Copy messages for the API, dropping in-process metadata (top-level keys starting with "_").

    Every dict and list is copied at every depth (tuples become lists), so later edits of the
    result never reach the input and vice versa; strings, numbers and other leaves are shared.
    SDK objects are read as their dicts.
    """
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise InvalidArgument.of("messages", "a list of message dicts", messages)
    messages = as_message_list(list(messages))
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            wrong = InvalidArgument.of(f"messages[{index}]", "a message dict", message)
            raise InvalidArgument(f"{wrong}; {NotAMessage.HINT}")
    return [
        {
            key: _copy_json(value)
            for key, value in msg.items()
            if not (isinstance(key, str) and key.startswith("_"))
        }
        for msg in messages
    ]


@dataclass(frozen=True)
class TurnGroup:
    """Messages ``[start, end)`` that compression keeps or drops together.

    ``pending`` marks a final assistant group with calls whose results have not arrived yet.
    """

    start: int
    end: int
    kind: GroupKind
    pending: bool = False

    def __len__(self) -> int:
        return self.end - self.start


def turn_groups(messages: Sequence[Mapping[str, Any]]) -> list[TurnGroup]:
    """Partition the transcript into contiguous groups so every cut falls between turns.

    An assistant group runs to the last contiguous tool message answering one of its calls;
    stray tool messages inside that run stay in it, so no cut can separate a call from a result.
    Tool messages answering nothing before them form a ``tool_orphan`` group; messages that are
    not dicts or have an unknown role are ``other``. Each non-assistant message is its own group,
    except that contiguous orphan tool messages share one.
    """
    groups: list[TurnGroup] = []
    n, i = len(messages), 0
    while i < n:
        role = role_of(messages[i])
        if role == "assistant":
            calls = set(tool_call_ids(messages[i]))
            unanswered = set(calls)
            run_end, last_answer = i + 1, i
            while run_end < n and role_of(messages[run_end]) == "tool":
                cid = messages[run_end].get("tool_call_id")
                if isinstance(cid, str) and cid in calls:
                    last_answer = run_end
                    unanswered.discard(cid)
                run_end += 1
            end = last_answer + 1
            groups.append(TurnGroup(i, end, "assistant", bool(unanswered) and end == n))
            if end < run_end:
                groups.append(TurnGroup(end, run_end, "tool_orphan"))
            i = run_end
        elif role == "tool":
            run_end = i + 1
            while run_end < n and role_of(messages[run_end]) == "tool":
                run_end += 1
            groups.append(TurnGroup(i, run_end, "tool_orphan"))
            i = run_end
        else:
            kind: GroupKind = "other"
            if role in _SYSTEM_ROLES:
                kind = "system"
            elif role == "user":
                kind = "user"
            groups.append(TurnGroup(i, i + 1, kind))
            i += 1
    return groups


def is_real_user_message(msg: object) -> bool:
    """True for a user's own message, not a compaction summary that we inserted as a user turn."""
    if not isinstance(msg, Mapping):
        return False
    return msg.get("role") == "user" and not msg.get("_compressed_summary")


def message_text(msg: Mapping[str, Any]) -> str:
    """The message's text: a string content as is, text parts joined by newlines, else ''."""
    content = msg.get("content") if isinstance(msg, Mapping) else None
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [
        part["text"]
        for part in content
        if isinstance(part, dict)
        and part.get("type") == "text"
        and isinstance(part.get("text"), str)
    ]
    return "\n".join(texts)


def tool_name_for_results(messages: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Map each tool call id to its function name, so a tool result can be labelled by tool.

    When an id is reused (invalid, but seen in the wild) the latest call wins.
    """
    names: dict[str, str] = {}
    for msg in messages:
        calls = msg.get("tool_calls") if isinstance(msg, Mapping) else None
        if not isinstance(calls, list):
            continue
        for call in calls:
            if not isinstance(call, dict):
                continue
            cid, function = call.get("id"), call.get("function")
            name = function.get("name") if isinstance(function, dict) else None
            if isinstance(cid, str) and cid and isinstance(name, str):
                names[cid] = name
    return names
