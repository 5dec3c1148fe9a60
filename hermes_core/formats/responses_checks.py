"""Every reason OpenAI's Responses API would reject an ``input`` list, or this library could
not map it onto chat messages.

Why apart: the conversion refuses such input (nothing converted) and ``validate --format
responses`` lists every problem. Indexes are 0-based and name the item (``input[4]``).
Each ``function_call`` needs its ``function_call_output`` after the model's turn that made
it, with only other outputs in between (that is what a chat transcript can express).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from hermes_core.transcript.parts import kind_of, type_problem

__all__ = ["ASSISTANT_SIDE", "item_kind", "responses_problems", "split_responses"]

MESSAGE_ROLES: Final = ("user", "assistant", "system", "developer")
#: item kinds that belong to the model's turn (they open or join an assistant message)
ASSISTANT_SIDE: Final = frozenset({"assistant", "function_call", "reasoning"})


def _show(text: str, limit: int = 60) -> str:
    return json.dumps(text if len(text) <= limit else text[:limit] + "...", ensure_ascii=False)


def item_kind(item: Any) -> str:
    """``user``/``assistant``/``system``/``developer`` for a message, else the item's type
    (``function_call``, ``function_call_output``, ``reasoning``, or another: kept as is)."""
    if not isinstance(item, dict):
        return "?"
    kind = item.get("type", "message")
    if kind == "message":
        role = item.get("role")
        return role if isinstance(role, str) else "?"
    return kind if isinstance(kind, str) else "?"


def split_responses(payload: object) -> tuple[list[Any], Any, Mapping[str, Any] | None, list[str]]:
    """The input items, ``instructions`` (``None`` when absent), the envelope and the problems
    of the outer shape. A string ``input`` is one user message."""
    if isinstance(payload, list):
        return payload, None, None, []
    if not isinstance(payload, Mapping):
        return (
            [],
            None,
            None,
            [
                'payload: expected a list of input items or an object with "input", got '
                + kind_of(payload)
            ],
        )
    items = payload.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list):
        got = "it is missing" if "input" not in payload else f"got {kind_of(items)}"
        return [], None, payload, [f'payload: "input" must be a list of items or a string ({got})']
    instructions = payload.get("instructions")
    problems = []
    if instructions is not None and not isinstance(instructions, str):
        problems.append(f'payload: "instructions" must be a string, got {kind_of(instructions)}')
    return items, instructions, payload, problems


def _item_problem(item: Any) -> str | None:
    if not isinstance(item, dict):
        return f"expected an item object, got {kind_of(item)}"
    kind = item_kind(item)
    if kind == "?":
        if item.get("type", "message") == "message":
            return f'a message needs a "role" ({", ".join(MESSAGE_ROLES)})'
        return 'an item needs a string "type"'
    if item.get("type", "message") == "message":
        if kind not in MESSAGE_ROLES:
            return f"role {_show(kind)} is not one of {', '.join(MESSAGE_ROLES)}"
        content = item.get("content")
        if isinstance(content, list):
            for k, part in enumerate(content):
                if problem := type_problem(part, f"content[{k}]"):
                    return problem
                if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                    return f'content[{k}] must be a part object with a "type"'
                if part["type"] in ("input_text", "output_text") and not isinstance(
                    part.get("text"), str
                ):
                    return f'content[{k}] is an {part["type"]} part without a string "text"'
        elif not isinstance(content, str):
            return f"content must be a string or a list of parts, got {kind_of(content)}"
    if kind == "function_call":
        for key in ("call_id", "name", "arguments"):
            if not isinstance(item.get(key), str) or (key != "arguments" and not item.get(key)):
                return f'a function_call needs a string "{key}"'
    if kind == "function_call_output":
        if not isinstance(item.get("call_id"), str) or not item.get("call_id"):
            return 'a function_call_output needs a non-empty string "call_id"'
        if not isinstance(item.get("output"), (str, list)):
            got = kind_of(item.get("output"))
            return f'a function_call_output\'s "output" must be a string or a list, got {got}'
    return None


def responses_problems(payload: object, *, allow_pending: bool = False) -> list[str]:
    """Every problem of a Responses ``input`` (or a request object holding it); [] when valid.

    With ``allow_pending`` the calls of the model's last turn may still lack outputs."""
    items, _, _, problems = split_responses(payload)
    for i, item in enumerate(items):
        problem = _item_problem(item)
        if problem is not None:
            problems.append(f"input[{i}]: {problem}")
    problems += _pair_problems(items, allow_pending)
    return problems


def _pair_problems(items: list[Any], allow_pending: bool) -> list[str]:
    problems: list[str] = []
    made: dict[str, int] = {}  # call id -> the function_call item
    open_calls: dict[str, int] = {}  # calls of the latest model turn still waiting
    answered: dict[str, int] = {}
    closed_at: dict[str, int] = {}  # call id -> the item that ended its turn unanswered
    in_outputs = False

    def close(at: int | None) -> None:
        for cid, where in open_calls.items():
            name = items[where].get("name", "")
            label = f"{_show(cid)} ({name})" if name else _show(cid)
            end = "the input ends first" if at is None else f"input[{at}] comes first"
            problems.append(
                f"input[{where}]: function_call {label} has no function_call_output ({end}); "
                f'add {{"type": "function_call_output", "call_id": {_show(cid)}, "output": ...}} '
                "right after the model's turn, or remove the call"
            )
            if at is not None:
                closed_at[cid] = at
        open_calls.clear()

    for i, item in enumerate(items):
        kind = item_kind(item)
        if kind == "function_call_output":
            in_outputs = True
            cid = item.get("call_id") if isinstance(item, dict) else None
            if not isinstance(cid, str):
                continue
            if cid in open_calls:
                answered[cid] = i
                del open_calls[cid]
            elif cid in answered:
                problems.append(
                    f"input[{i}]: call {_show(cid)} is answered twice (also by "
                    f"input[{answered[cid]}]); remove one"
                )
            elif cid in closed_at:
                problems.append(
                    f"input[{i}]: the output for {_show(cid)} (called at input[{made[cid]}]) "
                    f"comes after input[{closed_at[cid]}]; put outputs right after the model's "
                    "turn that made the call"
                )
            else:
                problems.append(
                    f"input[{i}]: function_call_output for {_show(cid)} answers no function_call "
                    "before it; remove it or add the call"
                )
        elif kind in ASSISTANT_SIDE:
            if in_outputs:  # a new model turn: what the last one left open stays unanswered
                close(i)
                in_outputs = False
            cid = item.get("call_id") if kind == "function_call" else None
            if isinstance(cid, str) and cid:
                if cid in made:
                    problems.append(
                        f"input[{i}]: call_id {_show(cid)} is already used by input[{made[cid]}]; "
                        "call ids must be unique"
                    )
                else:
                    made[cid] = open_calls[cid] = i
        elif kind in MESSAGE_ROLES:
            close(i)
            in_outputs = False
        # other item types (hosted tools, references) neither open nor close a turn
    if not allow_pending:
        close(None)
    return problems
