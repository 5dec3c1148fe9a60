"""OpenAI Responses ``input`` items to chat messages and back.

To chat: ``instructions`` becomes a leading system message; user, system and developer
message items become messages of that role; a model turn (the run of assistant messages,
``reasoning`` and ``function_call`` items) becomes one assistant message (text as content,
calls as tool_calls); each ``function_call_output`` a tool message. Items of other types ride
in the source of the next message (or of the model turn they sit in).

Back: a kept message gives back the host's own items, a changed one is rebuilt on them
(reasoning and unknown items stay in place), a new one (a summary) is converted fresh.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from hermes_core.formats.align import Unit, align, ordered
from hermes_core.formats.model import SYSTEM_ITEM, Converted, add_source, pieces_of, refuse
from hermes_core.formats.responses_checks import (
    ASSISTANT_SIDE,
    MESSAGE_ROLES,
    item_kind,
    responses_problems,
    split_responses,
)
from hermes_core.formats.responses_parts import (
    chat_part,
    item_call,
    response_part,
    tool_call_of_item,
)

__all__ = ["responses_from_openai", "responses_to_openai"]

Message = dict[str, Any]
_SPAN = 1_000_000  # part positions inside an assistant turn: item index * _SPAN + part index


def responses_to_openai(payload: Any, *, allow_pending: bool = True) -> Converted:
    """The chat messages of a Responses input; ``InvalidMessages`` (nothing converted) naming
    every problem when it is not a valid input."""
    problems = responses_problems(payload, allow_pending=allow_pending)
    if problems:
        raise refuse("not a valid Responses input", problems)
    items, instructions, envelope, _ = split_responses(payload)
    out = Converted("responses", [], items=items, envelope=envelope, system=instructions)
    if instructions is not None:
        add_source(out, {"role": "system", "content": instructions}, SYSTEM_ITEM, None)
    group: list[int] = []
    pending: list[int] = []

    def flush() -> None:
        if group:
            add_source(out, _turn(items, group), group[0], tuple(group))
            group.clear()

    for i, item in enumerate(items):
        kind = item_kind(item)
        if kind in ASSISTANT_SIDE:
            if not group:
                group.extend(pending)
                pending.clear()
            group.append(i)
        elif kind == "function_call_output":
            flush()
            message = {
                "role": "tool",
                "tool_call_id": item["call_id"],
                "content": _chat(item["output"]),
            }
            add_source(out, message, i, (*pending, i))
            pending.clear()
        elif kind in MESSAGE_ROLES:
            flush()
            add_source(out, {"role": kind, "content": _chat(item["content"])}, i, (*pending, i))
            pending.clear()
        elif group:
            group.append(i)
        else:
            pending.append(i)
    flush()
    if pending:
        last = out.sources[-1] if out.sources else None
        if last is not None and last.item != SYSTEM_ITEM:
            out.sources[-1] = replace(last, units=(*(last.units or ()), *pending))
        else:
            out.loose = tuple(pending)
    return out


def _chat(content: Any) -> Any:
    if isinstance(content, str):
        return content
    parts = [chat_part(p) for p in content]
    return [p for p in parts if p is not None]


def _turn(items: list[Any], group: list[int]) -> Message:
    said = [items[k] for k in group if item_kind(items[k]) == "assistant"]
    calls = [tool_call_of_item(items[k]) for k in group if item_kind(items[k]) == "function_call"]
    message: Message = {"role": "assistant"}
    if len(said) == 1 and isinstance(said[0]["content"], str):
        message["content"] = said[0]["content"]
    elif said:
        message["content"] = [
            part
            for item in said
            for part in _chat(
                [item["content"]] if isinstance(item["content"], str) else item["content"]
            )
        ]
    else:
        message["content"] = None if calls else ""
    if calls:
        message["tool_calls"] = calls
    return message


# --- back -------------------------------------------------------------------------------------


def responses_from_openai(messages: Sequence[Message], converted: Converted) -> Any:
    """The Responses input (or request object) of ``messages``, in the shape ``converted``
    came in."""
    items: list[Any] = []
    instructions: Any = None
    for n, piece in enumerate(pieces_of(messages, converted)):
        source = converted.sources[piece.source] if piece.source is not None else None
        if source is not None and source.item == SYSTEM_ITEM:
            content = piece.message.get("content")
            if piece.unchanged:
                instructions = converted.system
            elif isinstance(content, str):
                instructions = content
            else:
                instructions = "\n\n".join(
                    p.get("text", "") for p in content or [] if isinstance(p, dict)
                )
        elif source is not None and piece.unchanged:
            items.extend(converted.items[k] for k in source.units or ())
        elif source is not None:
            items.extend(_rebuilt(converted.items, source.units or (), piece.message, n))
        else:
            items.extend(_fresh(piece.message, n))
    items.extend(converted.items[k] for k in converted.loose)
    envelope = converted.envelope
    if envelope is None:
        return items
    if (
        isinstance(envelope.get("input"), str)
        and len(items) == 1
        and items[0] is converted.items[0]
    ):
        body: Any = envelope["input"]  # a string input the compaction did not touch
    else:
        body = items
    out = dict(envelope)  # its keys as given, "instructions" too when no message held it
    if instructions is not None:
        out["instructions"] = instructions
    elif any(s.item == SYSTEM_ITEM for s in converted.sources):
        out.pop("instructions", None)  # its system message was removed
    out["input"] = body
    return out


def _fresh(message: Message, where: int) -> list[Any]:
    role = message.get("role")
    label = f"message {where}"
    content = message.get("content")
    if role == "tool":
        output = (
            content
            if isinstance(content, str) or content is None
            else [response_part(p, "user", label) for p in content]
        )
        return [
            {
                "type": "function_call_output",
                "call_id": message.get("tool_call_id"),
                "output": output or "",
            }
        ]
    role = role if isinstance(role, str) else "user"
    out: list[Any] = []
    if content is not None or role != "assistant":
        out.append(
            {"type": "message", "role": role, "content": _response_content(content, role, label)}
        )
    if role == "assistant":
        out.extend(item_call(call, label) for call in message.get("tool_calls") or [])
    return out


def _response_content(content: Any, role: str, label: str) -> Any:
    if isinstance(content, str) or content is None:
        return content or ""
    return [response_part(p, role, label) for p in content]


def _same_kind(a: Any, b: Any) -> bool:
    return isinstance(a, dict) and isinstance(b, dict) and a.get("type") == b.get("type")


def _merge_parts(old: Any, new: Any, role: str, label: str) -> Any:
    """New chat content on the template of a Responses content (string or parts)."""
    if isinstance(new, str) and not isinstance(old, list):
        return new
    if chat_content_equal(old, new):
        return old
    template = (
        [Unit(n, p, chat_part(p)) for n, p in enumerate(old)] if isinstance(old, list) else []
    )
    parts = [{"type": "text", "text": new}] if isinstance(new, str) else list(new or [])
    return ordered(
        align(
            template,
            parts,
            same_kind=_same_kind,
            merged=lambda part, chat: _merged(part, chat, role, label),
            fresh=lambda chat: response_part(chat, role, label),
        )
    )


def chat_content_equal(old: Any, new: Any) -> bool:
    return _chat(old) == new if isinstance(old, (str, list)) else False


def _merged(part: Any, chat: Any, role: str, label: str) -> Any:
    if chat.get("type") == "text" and part.get("type") in ("input_text", "output_text"):
        return {**part, "text": chat["text"]}
    return response_part(chat, role, label)


def _rebuilt(items: list[Any], units: tuple[int, ...], message: Message, where: int) -> list[Any]:
    """The items ``units`` rebuilt on the changed chat ``message``."""
    label = f"message {where}"
    role = message.get("role")
    if role != "assistant":
        out = []
        for k in units:
            item, kind = items[k], item_kind(items[k])
            if kind == "function_call_output":
                item = {
                    **item,
                    "call_id": message.get("tool_call_id"),
                    "output": _merge_parts(item["output"], message.get("content"), "user", label),
                }
            elif kind in MESSAGE_ROLES:
                item = {
                    **item,
                    "content": _merge_parts(item["content"], message.get("content"), kind, label),
                }
            out.append(item)
        return out
    return _rebuilt_turn(items, units, message, label)


def _rebuilt_turn(
    items: list[Any], units: tuple[int, ...], message: Message, label: str
) -> list[Any]:
    said = [k for k in units if item_kind(items[k]) == "assistant"]
    content = message.get("content")
    slots: list[Any] = []
    if len(said) == 1 and isinstance(content, str) and isinstance(items[said[0]]["content"], str):
        slots.append(((said[0] * _SPAN, 0, 0), (said[0], content)))
    else:
        template = []
        for k in said:
            parts = items[k]["content"]
            for n, part in enumerate([parts] if isinstance(parts, str) else parts):
                template.append(Unit(k * _SPAN + n, (k, part), chat_part(part)))
        new = (
            [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        )
        slots = align(
            template,
            new,
            same_kind=_same_kind,
            merged=lambda kp, chat: (
                kp[0],
                _merged(kp[1], chat, "assistant", label)
                if isinstance(kp[1], dict)
                else chat["text"],
            ),
            fresh=lambda chat: (None, response_part(chat, "assistant", label)),
        )
    by_item: dict[int, list[Any]] = {}
    first_said = said[0] if said else None
    for (position, _rank, _seq), (k, part) in sorted(slots, key=lambda pair: pair[0]):
        owner = k if k is not None else (position // _SPAN if said else -1)
        by_item.setdefault(
            owner if owner in said else (first_said if first_said is not None else -1), []
        ).append(part)
    calls = {c.get("id"): c for c in message.get("tool_calls") or [] if isinstance(c, dict)}
    out: list[Any] = []
    if -1 in by_item:  # text for a turn that had no message item: before its first call
        out.append({"type": "message", "role": "assistant", "content": by_item[-1]})
    for k in units:
        item, kind = items[k], item_kind(items[k])
        if kind == "assistant":
            parts = by_item.get(k)
            if parts is None:
                continue  # its text is gone
            if len(parts) == 1 and isinstance(parts[0], str):
                out.append(item if item["content"] == parts[0] else {**item, "content": parts[0]})
            else:
                fixed = [
                    p if isinstance(p, dict) else response_part(p, "assistant", label)
                    for p in parts
                ]
                out.append(item if item["content"] == fixed else {**item, "content": fixed})
        elif kind == "function_call":
            call = calls.pop(item["call_id"], None)
            if call is None:
                continue
            if tool_call_of_item(item) != call:
                fresh = item_call(call, label)
                item = {**item, "name": fresh["name"], "arguments": fresh["arguments"]}
            out.append(item)
        else:
            out.append(item)
    out.extend(item_call(call, label) for call in calls.values())
    return out
