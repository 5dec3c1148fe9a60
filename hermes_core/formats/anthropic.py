"""Anthropic Messages payloads to OpenAI chat messages and back.

To OpenAI: the top-level ``system`` becomes a leading system message; a user message's
tool_result blocks become tool messages (first, so they follow the assistant's call) and its
other blocks one user message; an assistant message becomes one assistant message (text
blocks as content, tool_use blocks as tool_calls). Blocks with no OpenAI form ride along in
the source of the message made from their Anthropic message (see :mod:`.model`).

Back: messages the compaction kept give back the host's own message objects; changed ones
are rebuilt on their original (:mod:`.align`); new ones (a summary) are converted fresh, and
a payload never starts with a fresh assistant text (see :func:`_said_only`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_core.errors import InvalidMessages
from hermes_core.formats.align import Unit, align, ordered
from hermes_core.formats.anthropic_checks import (
    FIRST_NOT_USER,
    NO_MESSAGES,
    anthropic_problems,
    split_anthropic,
)
from hermes_core.formats.anthropic_parts import (
    block_of_part,
    part_of_block,
    result_content,
    tool_call_of,
    tool_use_of,
)
from hermes_core.formats.model import (
    SYSTEM_ITEM,
    Converted,
    Piece,
    add_source,
    pieces_of,
    refuse,
)

__all__ = ["anthropic_from_openai", "anthropic_to_openai"]

Message = dict[str, Any]
_SYSTEM_ROLES = ("system", "developer")


def anthropic_to_openai(payload: Any, *, allow_pending: bool = True) -> Converted:
    """The OpenAI messages of an Anthropic payload; ``InvalidMessages`` (nothing converted)
    naming every problem when Anthropic would reject it."""
    # what converts all the same: an empty list (a session before its first message), and an
    # assistant message first (Anthropic's own API has taken it; Bedrock and Vertex AI refuse
    # it): validate reports both, a compaction's output starts with the user when it can
    lenient = (NO_MESSAGES, FIRST_NOT_USER)
    problems = [
        p for p in anthropic_problems(payload, allow_pending=allow_pending) if p not in lenient
    ]
    if problems:
        raise refuse("not a valid Anthropic Messages payload", problems)
    messages, system, envelope, _ = split_anthropic(payload)
    out = Converted("anthropic", [], items=messages, envelope=envelope, system=system)
    if system is not None and system != []:
        content: Any = system if isinstance(system, str) else [part_of_block(b) for b in system]
        if isinstance(content, list) and len(content) == 1:
            content = content[0]["text"]  # one block (often just to carry cache_control)
        add_source(out, {"role": "system", "content": content}, SYSTEM_ITEM, _units(system))
    for i, message in enumerate(messages):
        content = message["content"]
        if message["role"] == "assistant":
            add_source(out, _assistant(content), i, _units(content))
            continue
        if isinstance(content, str):
            add_source(out, {"role": "user", "content": content}, i, None)
            continue
        results = [k for k, b in enumerate(content) if b.get("type") == "tool_result"]
        rest = tuple(k for k in range(len(content)) if k not in results)
        has_user = any(part_of_block(content[k]) is not None for k in rest) or not results
        for n, k in enumerate(results):
            block = content[k]
            units: tuple[int, ...] = (k,)
            if n == len(results) - 1 and not has_user:
                units = (k, *rest)  # unconvertible blocks ride with the last result
            tool = {
                "role": "tool",
                "tool_call_id": block["tool_use_id"],
                "content": result_content(block.get("content", "")),
            }
            add_source(out, tool, i, units)
        if has_user:
            parts = [part_of_block(content[k]) for k in rest]
            user = {"role": "user", "content": [p for p in parts if p is not None]}
            add_source(out, user, i, rest)
    return out


def _units(content: Any) -> tuple[int, ...] | None:
    return tuple(range(len(content))) if isinstance(content, list) else None


def _assistant(content: Any) -> Message:
    if isinstance(content, str):
        return {"role": "assistant", "content": content}
    texts = [part_of_block(b) for b in content if b.get("type") == "text"]
    calls = [tool_call_of(b) for b in content if b.get("type") == "tool_use"]
    message: Message = {"role": "assistant"}
    if calls and len(texts) == 1:
        message["content"] = texts[0]["text"]  # type: ignore[index]
    elif texts:
        message["content"] = texts
    else:
        message["content"] = None if calls else ""
    if calls:
        message["tool_calls"] = calls
    return message


# --- back -------------------------------------------------------------------------------------


def anthropic_from_openai(messages: Sequence[Message], converted: Converted) -> Any:
    """The Anthropic payload of ``messages`` (OpenAI messages, e.g. a compaction of
    ``converted.messages``), in the shape ``converted`` came in."""
    pieces = pieces_of(messages, converted)
    start = 0
    system_pieces: list[Piece] = []
    while start < len(pieces) and pieces[start].message.get("role") in _SYSTEM_ROLES:
        system_pieces.append(pieces[start])
        start += 1
    for i in range(start, len(pieces)):
        if pieces[i].message.get("role") in _SYSTEM_ROLES:
            problem = (
                f"message {i}: a system message after the start has no place in an Anthropic "
                'payload (only the top-level "system"); move it to the start or make it user text'
            )
            raise InvalidMessages(problem, [problem])
    system = _system_back(system_pieces, converted)
    body = _messages_back(pieces[start:], converted, offset=start)
    if converted.envelope is None:
        if system is not None:
            problem = (
                "a bare list of Anthropic messages cannot hold a system message; pass "
                '{"system": ..., "messages": [...]}'
            )
            raise InvalidMessages(problem, [problem])
        return body
    out = dict(converted.envelope)  # its keys as given, "system" too when no message held it
    if system is not None:
        out["system"] = system
    elif any(s.item == SYSTEM_ITEM for s in converted.sources):
        out.pop("system", None)  # its system message was removed
    out["messages"] = body
    return out


def _system_back(pieces: list[Piece], converted: Converted) -> Any:
    if not pieces:
        return None
    if len(pieces) == 1:
        piece = pieces[0]
        source = converted.sources[piece.source] if piece.source is not None else None
        if source is not None and source.item == SYSTEM_ITEM:
            if piece.unchanged:
                return converted.system
            if isinstance(converted.system, list):
                return _merge_blocks(converted.system, source.units or (), piece.message, 0)
        content = piece.message.get("content")
        if isinstance(content, str) or content is None:
            return content or ""
    blocks: list[Any] = []
    for n, piece in enumerate(pieces):
        content = piece.message.get("content")
        for part in [content] if isinstance(content, str) else content or []:
            blocks.append(block_of_part(part, f"system message {n}"))
    return blocks


def _messages_back(pieces: list[Piece], converted: Converted, *, offset: int) -> list[Any]:
    out: list[Any] = []
    open_user: Message | None = None  # a user message of fresh tool results, still growing
    first_fresh = False
    i = 0
    while i < len(pieces):
        piece = pieces[i]
        source = converted.sources[piece.source] if piece.source is not None else None
        if source is not None and source.item != SYSTEM_ITEM:
            j = i + 1
            while j < len(pieces) and _item_of(pieces[j], converted) == source.item:
                j += 1
            out.append(_item_back(pieces[i:j], converted, source.item))
            open_user = None
            i = j
            continue
        message = _fresh(piece.message, offset + i)
        first_fresh = first_fresh or not out
        role, content = message["role"], message["content"]
        tools_only = open_user is not None and all(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in open_user["content"]
        )
        if role == "user" and isinstance(content, list) and open_user is not None and tools_only:
            open_user["content"].extend(content)
        else:
            out.append(message)
            is_result = piece.message.get("role") == "tool"
            open_user = message if is_result else None
        i += 1
    if first_fresh and out[0]["role"] == "assistant" and _said_only(out[0]["content"]):
        out[0] = {**out[0], "role": "user"}  # see _said_only
    return out


def _said_only(content: Any) -> bool:
    """Whether a leading assistant message we wrote (the summary of a compaction that kept no
    head) can be the user's instead: Bedrock and Vertex AI refuse a payload whose first
    message is not the user's, and Anthropic takes consecutive user messages as one turn. Only
    text and images can change sides (a tool_use cannot)."""
    if isinstance(content, str):
        return bool(content)
    return bool(content) and all(b.get("type") in ("text", "image") for b in content)


def _item_of(piece: Piece, converted: Converted) -> int | None:
    return None if piece.source is None else converted.sources[piece.source].item


def _item_back(pieces: list[Piece], converted: Converted, item: int) -> Any:
    original = converted.items[item]
    everything = converted.item_sources(item)
    if all(p.unchanged for p in pieces) and [p.source for p in pieces] == everything:
        return original
    content = original["content"]
    if not isinstance(content, list):  # one piece: the string content changed
        fresh = _fresh(pieces[0].message, item)
        return {**original, "content": fresh["content"]}
    slots: list[Any] = []
    for piece in pieces:
        units = converted.sources[piece.source].units or ()  # type: ignore[index]
        if piece.unchanged:
            slots.extend(((k, 0, 0), content[k]) for k in units)
        else:
            slots.extend(_merge_slots(content, units, piece.message, item))
    return {**original, "content": ordered(slots)}


def _merge_blocks(
    blocks: list[Any], units: tuple[int, ...], message: Message, where: int
) -> list[Any]:
    return ordered(_merge_slots(blocks, units, message, where))


def _merge_slots(
    blocks: list[Any], units: tuple[int, ...], message: Message, where: int
) -> list[Any]:
    """The slots of ``blocks[units]`` rebuilt on the changed OpenAI ``message``."""
    role = message.get("role")
    label = f"message {where}"
    if role == "tool":
        return _merge_result(blocks, units, message)
    parts = _parts(message.get("content"))
    template = [
        Unit(k, blocks[k], part_of_block(blocks[k]))
        for k in units
        if not (isinstance(blocks[k], dict) and blocks[k].get("type") == "tool_use")
    ]
    slots = align(
        template,
        parts,
        same_kind=lambda a, b: (
            isinstance(a, dict) and isinstance(b, dict) and a.get("type") == b.get("type")
        ),
        merged=lambda block, part: _merged(block, part, label),
        fresh=lambda part: block_of_part(part, label),
    )
    if role == "assistant":
        uses = {
            b["id"]: (k, b)
            for k in units
            if isinstance(b := blocks[k], dict) and b.get("type") == "tool_use"
        }
        last = units[-1] if units else 0
        for n, call in enumerate(message.get("tool_calls") or []):
            found = uses.get(call.get("id")) if isinstance(call, dict) else None
            if found is None:
                slots.append(((last, 2, n), tool_use_of(call, label)))
                continue
            k, block = found
            slots.append(
                (
                    (k, 0, 0),
                    block if tool_call_of(block) == call else {**block, **_use_fields(call, label)},
                )
            )
    return slots


def _use_fields(call: Any, label: str) -> dict[str, Any]:
    use = tool_use_of(call, label)
    return {"name": use["name"], "input": use["input"]}


def _merged(block: Any, part: Any, label: str) -> Any:
    if part.get("type") == "text" and block.get("type") == "text":
        return {**block, "text": part["text"]}
    return block_of_part(part, label)


def _merge_result(blocks: list[Any], units: tuple[int, ...], message: Message) -> list[Any]:
    slots: list[Any] = []
    for k in units:
        block = blocks[k]
        if not (isinstance(block, dict) and block.get("type") == "tool_result"):
            slots.append(((k, 0, 0), block))
            continue
        new = message.get("content")
        old = block.get("content", "")
        if result_content(old) != new:
            if isinstance(new, list):
                inner = old if isinstance(old, list) else []
                template = [Unit(n, b, part_of_block(b)) for n, b in enumerate(inner)]
                new = ordered(
                    align(
                        template,
                        new,
                        same_kind=lambda a, b: a.get("type") == b.get("type"),
                        merged=lambda b, p: _merged(b, p, "tool result"),
                        fresh=lambda p: block_of_part(p, "tool result"),
                    )
                )
            block = {**block, "content": new if new is not None else ""}
        block = {**block, "tool_use_id": message.get("tool_call_id")}
        slots.append(((k, 0, 0), block))
    return slots


def _parts(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else []


def _fresh(message: Message, where: int) -> Message:
    """An OpenAI message with no source (a summary, or the host's own) as an Anthropic one."""
    role = message.get("role")
    label = f"message {where}"
    content = message.get("content")
    if role == "tool":
        result: Message = {"type": "tool_result", "tool_use_id": message.get("tool_call_id")}
        if isinstance(content, list):
            result["content"] = [block_of_part(p, label) for p in content]
        else:
            result["content"] = content if isinstance(content, str) else ""
        return {"role": "user", "content": [result]}
    if role not in ("user", "assistant"):
        problem = f"{label}: role {role!r} has no Anthropic form; use user or assistant"
        raise InvalidMessages(problem, [problem])
    calls = message.get("tool_calls") or [] if role == "assistant" else []
    if isinstance(content, str) and not calls:
        return {"role": role, "content": content}
    blocks = [block_of_part(p, label) for p in _parts(content)]
    blocks += [tool_use_of(call, label) for call in calls]
    return {"role": role, "content": blocks}
