"""The ``skill_manage`` tool the model calls: its OpenAI function schema and a handler that
always answers with JSON text.

Why hermes-agent's argument names (``action``, ``name``, ``content``, ``category``,
``old_string``, ``new_string``, ``file_path``, ``file_content``, ``replace_all``): models
trained on hermes-agent already call a tool of this name with them, so they call this one
correctly. ``list`` and ``view`` are folded in (hermes-agent has separate tools for them)
so one tool covers the library; ``replace_all`` is accepted only as false, since a patch
here must match exactly one place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from hermes_core.memory.tool import tool_arguments
from hermes_core.skills.changes import WRITE_ACTIONS, Result, SkillRequest, failure
from hermes_core.skills.layout import describe
from hermes_core.skills.library import SkillLibrary

__all__ = ["ACTIONS", "SKILL_MANAGE_SCHEMA", "SkillTool"]

ACTIONS: Final = ("list", "view", *WRITE_ACTIONS)

_DESCRIPTION: Final = (
    "Your procedural memory: skills are short procedures for recurring kinds of task, kept in "
    "SKILL.md files and listed (name: description) in your system prompt. 'list' shows them; "
    "'view' reads one (and with file_path one of its support files): view a skill before a "
    "task it fits. Save a skill ('create', with the full SKILL.md text: a front matter block "
    "'---' / 'name: <name>' / 'description: <when to use it>' / '---', then numbered steps "
    "with exact commands, pitfalls and how to check the result) after a task that took many "
    "steps, needed a correction from the user or found a non-obvious way through. Fix a skill "
    "as soon as it proves wrong or incomplete: 'patch' (old_string -> new_string, the "
    "old_string must match exactly one place) for small fixes, 'edit' (the full new SKILL.md) "
    "for rewrites. 'write_file' / 'remove_file' manage support files under references/, "
    "templates/, scripts/ or assets/; 'delete' removes a skill. Do not save one-off tasks, "
    "secrets or anything the user did not want kept."
)

SKILL_MANAGE_SCHEMA: Final[dict[str, Any]] = {
    "type": "function",
    "function": {
        "name": "skill_manage",
        "description": _DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": list(ACTIONS), "description": "What to do."},
                "name": {
                    "type": "string",
                    "description": "The skill's name: lower-case letters, digits, '.', '_', '-', "
                    "at most 64 characters (or 'category/name' when two categories hold the "
                    "same name). Required for every action but 'list'.",
                },
                "content": {
                    "type": "string",
                    "description": "The full SKILL.md text, front matter included (create, "
                    "edit). For edit, view the skill first and send all of it.",
                },
                "category": {
                    "type": "string",
                    "description": "Optional folder grouping the new skill (create), e.g. "
                    "'devops'; for 'list', show only this category.",
                },
                "old_string": {
                    "type": "string",
                    "description": "The exact text to replace (patch); it must occur once, so "
                    "include enough surrounding text.",
                },
                "new_string": {
                    "type": "string",
                    "description": "The replacement (patch); '' deletes old_string.",
                },
                "replace_all": {
                    "type": "boolean",
                    "description": "Must be false or omitted: a patch changes one place.",
                },
                "file_path": {
                    "type": "string",
                    "description": "A support file, relative to the skill and under "
                    "references/, templates/, scripts/ or assets/ (write_file, remove_file; "
                    "optional for patch and view, which default to SKILL.md).",
                },
                "file_content": {
                    "type": "string",
                    "description": "The support file's full text (write_file).",
                },
            },
            "required": ["action"],
        },
    },
}

_KNOWN: Final = frozenset(SKILL_MANAGE_SCHEMA["function"]["parameters"]["properties"])
_TEXT_ARGUMENTS: Final = (
    "name",
    "content",
    "category",
    "old_string",
    "new_string",
    "file_path",
    "file_content",
)
#: What each action needs besides ``action`` (and what to say when it is missing).
_NEEDS: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "view": (("name", "the skill to read"),),
    "create": (("name", "the new skill's name"), ("content", "the full SKILL.md text")),
    "edit": (("name", "the skill to rewrite"), ("content", "the full new SKILL.md text")),
    "patch": (
        ("name", "the skill to change"),
        ("old_string", "the exact text to replace"),
        ("new_string", "the replacement ('' deletes)"),
    ),
    "write_file": (
        ("name", "the skill"),
        ("file_path", "e.g. 'references/notes.md'"),
        ("file_content", "the file's text"),
    ),
    "remove_file": (("name", "the skill"), ("file_path", "the support file to remove")),
    "delete": (("name", "the skill to delete"),),
}


class SkillTool:
    """Handles ``skill_manage`` calls against a :class:`SkillLibrary` (approval included);
    ``origin`` is ``assistant_tool`` for the model in conversation, ``background_review``
    for the review thread (whose changes and deletions are staged as proposals)."""

    schema = SKILL_MANAGE_SCHEMA

    def __init__(self, library: SkillLibrary, *, origin: str = "assistant_tool") -> None:
        self.library = library
        self.origin = origin

    def handle(self, arguments: Mapping[str, Any] | str | None) -> str:
        """The JSON text answer to one call; never raises for anything the model sent."""
        try:
            result = self._handle(arguments)
        except Exception as exc:  # noqa: BLE001 - the model gets an error, the turn goes on
            result = failure("error", f"skills are unavailable: {type(exc).__name__}: {exc}")
        return json.dumps(result, ensure_ascii=False)

    def _handle(self, arguments: Mapping[str, Any] | str | None) -> Result:
        args = _parse(arguments)
        if isinstance(args, str):
            return failure("invalid", args)
        action = args.get("action")
        if not (isinstance(action, str) and action in ACTIONS):
            return failure(
                "invalid", f"action must be one of {', '.join(ACTIONS)}, got {describe(action)}."
            )
        for key in _TEXT_ARGUMENTS:
            value = args.get(key)
            if value is not None and not isinstance(value, str):
                return failure("invalid", f"{key} must be a string, got {describe(value)}.")
        if args.get("replace_all") not in (None, False):
            return failure(
                "invalid",
                "replace_all must be false or omitted: a patch here changes exactly one place. "
                "Make old_string unique, or patch each place in turn.",
            )
        for key, what in _NEEDS.get(action, ()):
            if args.get(key) is None or (key == "name" and not args.get(key)):
                return failure("invalid", f"{action} needs {key}: {what}.")
        if action == "list":
            return self._list(args.get("category"))
        if action == "view":
            return self.library.view(args["name"], args.get("file_path"))
        request = SkillRequest(
            action,
            args["name"],
            content=args.get("content"),
            category=args.get("category") if action == "create" else None,
            file_path=args.get("file_path"),
            file_content=args.get("file_content"),
            old_string=args.get("old_string"),
            new_string=args.get("new_string"),
        )
        return self.library.write(request, self.origin)

    def _list(self, category: str | None) -> Result:
        skills, problems = self.library.scan_all()
        if category:
            skills = [s for s in skills if s.category == category]
        result: Result = {
            "success": True,
            "skills": [
                {
                    "name": s.name,
                    "category": s.category,
                    "description": self.library.safe_description(s),
                }
                for s in skills
            ],
            "categories": sorted({s.category for s in skills if s.category}),
            "count": len(skills),
        }
        if problems:
            result["skipped"] = [{"path": p.path, "reason": p.reason} for p in problems[:20]]
        if skills:
            result["hint"] = "Read a skill with action 'view' and its name."
        return result


def _parse(arguments: Mapping[str, Any] | str | None) -> Mapping[str, Any] | str:
    return tool_arguments(arguments, _KNOWN, 'a JSON object such as {"action": "list"}')
