"""Every reason Anthropic's Messages API would reject a payload's shape or its tool pairs.

Why apart from the conversion: the conversion refuses a payload with these problems (and
changes nothing), and ``validate --format anthropic`` lists them all. Indexes are 0-based
and name the message (``message 3``) and the block (``content[1]``), like
:func:`hermes_core.transcript.validate_messages` does for OpenAI messages.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from hermes_core.transcript.parts import kind_of, type_problem

__all__ = ["FIRST_NOT_USER", "NO_MESSAGES", "anthropic_problems", "split_anthropic"]

ROLES: Final = ("user", "assistant")
NO_MESSAGES: Final = "payload: no messages; Anthropic needs at least one (a user message first)"
#: Bedrock and Vertex AI refuse a first message that is not the user's (and Anthropic's own
#: API has, at times): a payload must start with a user message
FIRST_NOT_USER: Final = (
    "message 0: the first message must use the user role, got assistant; put a user "
    "message first (an opening assistant text can be written as a user message)"
)
_ASSISTANT_ONLY: Final = frozenset({"tool_use", "thinking", "redacted_thinking"})


def _show(text: str, limit: int = 60) -> str:
    return json.dumps(text if len(text) <= limit else text[:limit] + "...", ensure_ascii=False)


def split_anthropic(payload: object) -> tuple[list[Any], Any, Mapping[str, Any] | None, list[str]]:
    """The messages, the ``system`` value (``None`` when absent), the envelope, and the
    problems of the payload's outer shape (a list of messages, or an object with them)."""
    if isinstance(payload, list):
        return payload, None, None, []
    if not isinstance(payload, Mapping):
        return (
            [],
            None,
            None,
            [
                f"payload: expected a list of messages or an object with "
                f'"messages", got {kind_of(payload)}'
            ],
        )
    messages = payload.get("messages")
    if not isinstance(messages, list):
        got = "it is missing" if "messages" not in payload else f"got {kind_of(messages)}"
        return [], None, payload, [f'payload: "messages" must be a list of messages ({got})']
    return messages, payload.get("system"), payload, []


def _system_problems(system: Any) -> list[str]:
    if system is None or isinstance(system, str):
        return []
    if not isinstance(system, list):
        return [f"system: must be a string or a list of text blocks, got {kind_of(system)}"]
    problems = []
    for k, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            problems.append(f'system[{k}]: must be a text block {{"type": "text", "text": "..."}}')
        elif not isinstance(block.get("text"), str):
            problems.append(f'system[{k}]: a text block needs a string "text"')
        elif not block["text"]:
            problems.append(f'system[{k}]: a text block with empty "text"; remove it')
    return problems


def _block_problem(block: object, where: str, role: str) -> str | None:
    if not isinstance(block, dict):
        example = '{"type": "text", "text": "..."}'
        return f"{where} must be a block object like {example}, got {kind_of(block)}"
    if problem := type_problem(block, where):
        return problem
    kind = block.get("type")
    if not isinstance(kind, str) or not kind:
        return f'{where} has no "type" (a string such as "text", "tool_use" or "tool_result")'
    if kind in _ASSISTANT_ONLY and role != "assistant":
        return f"{where} is a {kind} block in a {role} message; only assistant messages hold it"
    if kind == "tool_result" and role != "user":
        return (
            f"{where} is a tool_result block in an assistant message; put it in the user "
            "message after the tool_use"
        )
    if kind == "text" and not isinstance(block.get("text"), str):
        return f'{where} is a text block without a string "text"'
    if kind == "text" and not block["text"]:
        return f'{where} is a text block with empty "text"; give it text or remove the block'
    if kind == "image" and not isinstance(block.get("source"), dict):
        return f'{where} is an image block without a "source" object'
    if kind == "tool_use":
        for key in ("id", "name"):
            if not isinstance(block.get(key), str) or not block.get(key):
                return f'{where} is a tool_use block without a non-empty string "{key}"'
        if not isinstance(block.get("input"), dict):
            got = kind_of(block.get("input"))
            return f'{where} is a tool_use block whose "input" is {got}, not an object'
    if kind == "tool_result":
        cid = block.get("tool_use_id")
        if not isinstance(cid, str) or not cid:
            return f'{where} is a tool_result block without a non-empty string "tool_use_id"'
        content = block.get("content", "")
        if not isinstance(content, (str, list)):
            return f"{where}.content must be a string or a list of blocks, got {kind_of(content)}"
        if isinstance(content, list):
            for j, inner in enumerate(content):
                problem = _block_problem(inner, f"{where}.content[{j}]", "tool_result")
                if problem is not None:
                    return problem
    if kind == "thinking":
        for key in ("thinking", "signature"):
            if not isinstance(block.get(key), str):
                return (
                    f'{where} is a thinking block without a string "{key}"; send it back as '
                    "the API gave it"
                )
    if kind == "redacted_thinking" and not isinstance(block.get("data"), str):
        return (
            f'{where} is a redacted_thinking block without a string "data"; send it back as '
            "the API gave it"
        )
    return None


def _tool_uses(message: object) -> dict[str, str]:
    """The message's tool_use ids -> names, in order."""
    content = message.get("content") if isinstance(message, dict) else None
    uses: dict[str, str] = {}
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                cid, name = block.get("id"), block.get("name")
                if isinstance(cid, str) and cid:
                    uses.setdefault(cid, name if isinstance(name, str) else "")
    return uses


def anthropic_problems(payload: object, *, allow_pending: bool = False) -> list[str]:
    """Every problem of an Anthropic Messages payload, one line each; [] when it is valid.

    The first message must be the user's; no message but a final assistant one may be
    empty, nor any text block. A tool_use must be answered by a tool_result in the very next
    message (a user message); a tool_result must answer a tool_use of the assistant message
    right before it. With ``allow_pending`` the tool_use blocks of a final assistant message
    may still be open.
    """
    messages, system, _, problems = split_anthropic(payload)
    problems += _system_problems(system)
    if not problems and not messages:
        problems.append(NO_MESSAGES)
    seen: dict[str, int] = {}
    for i, message in enumerate(messages):
        where = f"message {i}"
        if not isinstance(message, dict):
            problems.append(
                f"{where}: expected a message object with role and content, got {kind_of(message)}"
            )
            continue
        role = message.get("role")
        if role not in ROLES:
            shown = _show(role) if isinstance(role, str) else kind_of(role)
            hint = ' (put system text in the top-level "system")' if role == "system" else ""
            problems.append(f'{where}: role must be "user" or "assistant", got {shown}{hint}')
            continue
        content = message.get("content")
        if i == 0 and role == "assistant":
            problems.append(FIRST_NOT_USER)
        if content in ("", []) and not (role == "assistant" and i == len(messages) - 1):
            problems.append(
                f"{where}: content is empty; only a final assistant message may be empty "
                "(give it text or blocks, or remove the message)"
            )
        if isinstance(content, list):
            for k, block in enumerate(content):
                problem = _block_problem(block, f"content[{k}]", role)
                if problem is not None:
                    problems.append(f"{where}: {problem}")
        elif not isinstance(content, str):
            problems.append(
                f"{where}: content must be a string or a list of blocks, got {kind_of(content)}"
            )
        for cid in _tool_uses(message):
            if cid in seen:
                problems.append(
                    f"{where}: tool_use id {_show(cid)} is already used by message "
                    f"{seen[cid]}; ids must be unique"
                )
            seen.setdefault(cid, i)
    problems += _pair_problems(messages, allow_pending)
    return problems


def _results(message: object) -> list[tuple[int, str]]:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [
        (k, b["tool_use_id"])
        for k, b in enumerate(content)
        if isinstance(b, dict)
        and b.get("type") == "tool_result"
        and isinstance(b.get("tool_use_id"), str)
    ]


def _pair_problems(messages: list[Any], allow_pending: bool) -> list[str]:
    problems: list[str] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "assistant":
            uses = _tool_uses(message)
            if not uses:
                continue
            if i + 1 == len(messages):
                if not allow_pending:
                    ids = ", ".join(_show(c) for c in uses)
                    problems.append(
                        f"message {i}: tool_use {ids} has no tool_result (the transcript ends "
                        "first); add a user message with a tool_result block for each, or "
                        "remove them"
                    )
                continue
            answered = {cid for _, cid in _results(messages[i + 1])}
            for cid, name in uses.items():
                if cid not in answered:
                    label = f"{_show(cid)} ({name})" if name else _show(cid)
                    problems.append(
                        f"message {i}: tool_use {label} has no tool_result in message {i + 1}; "
                        f'add a tool_result block with "tool_use_id": {_show(cid)} to the user '
                        "message right after it, or remove the tool_use"
                    )
        elif role == "user":
            before = _tool_uses(messages[i - 1]) if i > 0 else {}
            counted: dict[str, int] = {}
            for k, cid in _results(message):
                if cid in counted:
                    problems.append(
                        f"message {i}: content[{k}] answers tool_use {_show(cid)} again (also "
                        f"content[{counted[cid]}]); remove one"
                    )
                    continue
                counted[cid] = k
                if cid not in before and i == 0:
                    problems.append(
                        f"message 0: content[{k}] is a tool_result for {_show(cid)}, but there "
                        "is no message before it, so no tool_use it could answer; remove the "
                        "block"
                    )
                elif cid not in before:
                    problems.append(
                        f"message {i}: content[{k}] is a tool_result for {_show(cid)}, which no "
                        f"tool_use of the assistant message right before it (message {i - 1}) "
                        "made; remove the block or add the tool_use there"
                    )
    return problems
