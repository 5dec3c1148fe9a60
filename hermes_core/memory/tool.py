"""The ``memory`` tool the model calls: its OpenAI function schema and a handler that always
answers with JSON text.

Why a per-turn counter: a model told "memory is full, consolidate" sometimes loops on failing
writes for the rest of its turn. After three failed attempts to make room in one turn the tool
answers with a final result that tells it to stop and reply; :meth:`MemoryTool.new_turn`
resets the count.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from hermes_core.memory.approval import MemoryWriter, Origin, WriteRequest
from hermes_core.memory.layout import describe
from hermes_core.memory.store import Result

__all__ = ["MAX_CONSOLIDATION_FAILURES", "MEMORY_TOOL_SCHEMA", "MemoryTool"]

MAX_CONSOLIDATION_FAILURES: Final = 3
#: Failures that mean "the model is trying to make room and missing": memory full, or an
#: ``old_text`` that selects no entry or several.
_CONSOLIDATION_FAILURES: Final = frozenset({"over_limit", "no_match", "multiple"})

_DESCRIPTION: Final = (
    "Save durable facts to your persistent memory, which is shown to you at the start of every "
    "future session (not this one). Save, in this order: the user's preferences and "
    "corrections (target 'user': how they like to work, what they told you to stop or keep "
    "doing), then facts about the environment and project (target 'memory': conventions, tool "
    "quirks, paths, lessons learned). Do not save task progress, logs of completed work, "
    "temporary state or anything secret: memory is for what will still matter next time. "
    "Keep entries short and specific. 'replace' and 'remove' select an entry by its exact "
    "text or a unique part of it. When memory is full, make room in the same turn by merging "
    "or removing entries. Use 'operations' to apply several changes at once (all or nothing)."
)

MEMORY_TOOL_SCHEMA: Final[dict[str, Any]] = {
    "type": "function",
    "function": {
        "name": "memory",
        "description": _DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {
                "action": {
                    "type": "string",
                    "enum": ["add", "replace", "remove"],
                    "description": "What to do (omit when 'operations' is given).",
                },
                "target": {
                    "type": "string",
                    "enum": ["memory", "user"],
                    "description": "'user' for facts about the user, 'memory' for your notes.",
                },
                "content": {
                    "type": "string",
                    "description": "The entry to save (add, replace).",
                },
                "old_text": {
                    "type": "string",
                    "description": "The entry to change, or a unique part of it (replace, remove).",
                },
                "operations": {
                    "type": "array",
                    "description": "Several changes to one target, applied all or nothing.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "action": {"type": "string", "enum": ["add", "replace", "remove"]},
                            "content": {"type": "string"},
                            "old_text": {"type": "string"},
                        },
                        "required": ["action"],
                    },
                },
            },
            "required": ["target"],
        },
    },
}

_KNOWN: Final = frozenset(MEMORY_TOOL_SCHEMA["function"]["parameters"]["properties"])


def _error(message: str, **extra: Any) -> Result:
    return {"success": False, "error": message, **extra}


class MemoryTool:
    """Handles ``memory`` tool calls through a :class:`MemoryWriter` (approval included)."""

    schema = MEMORY_TOOL_SCHEMA

    def __init__(self, writer: MemoryWriter, *, origin: Origin = "assistant_tool") -> None:
        self.writer = writer
        self.origin: Origin = origin
        self.failed_consolidations = 0

    def new_turn(self) -> None:
        """A new user turn: the consolidation attempts start again from zero."""
        self.failed_consolidations = 0

    def handle(self, arguments: Mapping[str, Any] | str | None) -> str:
        """The JSON text answer to one call; never raises for anything the model sent."""
        try:
            result = self._handle(arguments)
        except Exception as exc:  # noqa: BLE001 - the model gets an error, the turn goes on
            result = _error(f"memory is unavailable: {type(exc).__name__}: {exc}")
        return json.dumps(result, ensure_ascii=False)

    def _handle(self, arguments: Mapping[str, Any] | str | None) -> Result:
        args = _parse(arguments)
        if isinstance(args, str):
            return _error(args)
        if self.failed_consolidations >= MAX_CONSOLIDATION_FAILURES:
            return self._give_up()
        request = _request(args)
        if isinstance(request, str):
            return _error(request)
        result = _judge_unreachable(self.writer.write(request, self.origin))
        if result.get("reason") in _CONSOLIDATION_FAILURES:
            self.failed_consolidations += 1
            if self.failed_consolidations >= MAX_CONSOLIDATION_FAILURES:
                return self._give_up()
        return result

    def _give_up(self) -> Result:
        return {
            "success": False,
            "done": True,
            "error": "Three memory writes failed this turn while trying to make room or find an "
            "entry. Stop retrying memory writes now and go on with your reply; you can "
            "consolidate memory in a later turn.",
        }


def _judge_unreachable(result: Result) -> Result:
    """A refusal whose only reason is a threat judge that could not be asked says so: the
    content is not known to be bad, so the model should not rewrite it to slip past."""
    patterns = result.get("patterns")
    if result.get("reason") != "threat" or not isinstance(patterns, list):
        return result
    if patterns and all(p == "judge_error" for p in patterns):
        return {
            **result,
            "error": "Not saved: the threat judge that checks memory writes could not be "
            "reached, so nothing was written. Nothing is known to be wrong with the content; "
            "try again later, or ask the user whether to keep it for later.",
        }
    return result


def tool_arguments(
    arguments: Mapping[str, Any] | str | None, known: frozenset[str], shape: str
) -> Mapping[str, Any] | str:
    """A tool call's arguments as a mapping, or an error the model can act on (``shape``:
    what a valid object looks like). Shared by the memory and skill tools."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return f"arguments are not valid JSON ({exc.msg} at {exc.pos}); send a JSON object."
        except (ValueError, RecursionError) as exc:  # e.g. an integer of 5,000 digits
            return f"arguments cannot be read ({type(exc).__name__}); send a plain JSON object."
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        return f"arguments must be {shape}."
    unknown = sorted(describe(k) for k in arguments if k not in known)
    if unknown:
        return f"unknown argument(s) {', '.join(unknown)}; use {', '.join(sorted(known))}."
    return arguments


def _parse(arguments: Mapping[str, Any] | str | None) -> Mapping[str, Any] | str:
    return tool_arguments(arguments, _KNOWN, "a JSON object with action, target, content, old_text")


def _request(args: Mapping[str, Any]) -> WriteRequest | str:
    """The write the arguments ask for, or what is missing."""
    target = args.get("target")
    if not (isinstance(target, str) and target in ("memory", "user")):
        return f"target must be 'memory' or 'user', got {describe(target)}."
    operations = args.get("operations")
    if operations is not None:
        if args.get("action") is not None:
            return "give either action or operations, not both."
        if not isinstance(operations, list) or not operations:
            return "operations must be a non-empty list of {action, content?, old_text?}."
        return WriteRequest("batch", target, operations=tuple(operations))
    action = args.get("action")
    if not (isinstance(action, str) and action in ("add", "replace", "remove")):
        return f"action must be 'add', 'replace' or 'remove', got {describe(action)}."
    for name in ("content", "old_text"):
        value = args.get(name)
        if value is not None and not isinstance(value, str):
            return f"{name} must be a string, got {type(value).__name__}."
    return WriteRequest(action, target, args.get("content"), args.get("old_text"))
