"""The tool calls of a model's answer: validated and normalised before anything runs them.

Why apart: servers send calls in several shapes (arguments as text or as an object, missing
ids, repeated ids); whoever executes a call (the background review) needs one shape and the
reason for each call it will not run. Pure.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["parse_tool_calls"]

_SHOWN_MAX = 200


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN_MAX else text[: _SHOWN_MAX - 3] + "..."


def parse_tool_calls(raw: object) -> tuple[list[dict[str, Any]], list[str]]:
    """The well-formed tool calls of an answer message, normalised, and why each other one
    was dropped. Arguments given as a JSON object (some local servers do) are written out as
    JSON text; a call whose id repeats an earlier one is dropped (its result could not be
    told apart)."""
    if raw is None:
        return [], []
    if not isinstance(raw, list):
        return [], [f"tool_calls is a {type(raw).__name__}, not a list"]
    calls: list[dict[str, Any]] = []
    dropped: list[str] = []
    seen: set[str] = set()
    for position, item in enumerate(raw):
        call = _tool_call(item)
        if isinstance(call, str):
            dropped.append(f"tool call {position}: {call}")
        elif call["id"] in seen:
            dropped.append(f"tool call {position}: its id repeats an earlier call's")
        else:
            seen.add(call["id"])
            calls.append(call)
    return calls, dropped


def _tool_call(item: object) -> dict[str, Any] | str:
    """One normalised call, or what is wrong with it."""
    if not isinstance(item, dict):
        return "not an object"
    call_id = item.get("id")
    if not isinstance(call_id, str) or not call_id.strip():
        return "no id"
    kind = item.get("type", "function")
    if kind not in ("function", None):
        return f"type {_clip(str(kind))!r} is not 'function'"
    function = item.get("function")
    if not isinstance(function, dict):
        return "no function"
    name = function.get("name")
    if not isinstance(name, str) or not name.strip():
        return "no function name"
    arguments = function.get("arguments")
    if isinstance(arguments, dict):
        arguments = json.dumps(arguments, ensure_ascii=False)
    if not isinstance(arguments, str):
        return f"arguments of {_clip(name)!r} are not text"
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
