"""Reload pointers: when a skill's text or a todo snapshot leaves the context, say so.

A loaded skill (``skill_view``) or a todo list (``todo``) is state the agent acts on. Once
its tool result is pruned or summarised, the agent would go on from memory of it, or not
at all. So each such result leaves one line behind, in the pruned result and in every
summary (the LLM's and the fallback alike, appended after the summariser so no model can
drop it, and carried from the previous summary on to the next): which skill or list it
was, and which call brings it back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

#: The heading of the pointer section in a summary.
HEADING: Final = "## Reload before relying on them"
#: At most this many pointers are kept (the newest).
MAX_POINTERS: Final = 20
_SKILL_TOOLS: Final = frozenset({"skillview", "viewskill", "loadskill", "skillload", "skill"})
_TODO_TOOLS: Final = frozenset(
    {"todo", "todowrite", "todoread", "todos", "updatetodos", "writetodos", "readtodos"}
)
_NAME: Final = re.compile(r"[\w.@+/-]{1,80}")
_TOOL: Final = re.compile(r"[\w.-]{1,48}")
#: Exactly the lines :func:`pointer` writes: a summary (an LLM's answer, say) that imitates
#: the section with other wording carries nothing on.
_POINTER: Final = re.compile(
    r"- skill `[\w.@+/-]{1,80}` was loaded earlier and left the context: call "
    r'[\w.-]{1,48}\(name="[\w.@+/-]{1,80}"\) again'
    r"|- todo list \(via [\w.-]{1,48}\) left the context: read it again before going on"
)


def _key(tool_name: str) -> str:
    return tool_name.lower().replace("_", "").replace("-", "").replace(" ", "")


def _skill_name(arguments: Mapping[str, Any]) -> str | None:
    for key in ("name", "skill", "skill_name", "id"):
        value = arguments.get(key)
        if isinstance(value, str) and _NAME.fullmatch(value.strip()):
            return value.strip()
    return None


def pointer(tool_name: str, arguments: Mapping[str, Any]) -> str | None:
    """The reload line for one call, or ``None`` when it loads no skill and no todo list.

    ``skill_manage`` with ``action: view`` counts as a skill load too."""
    if not _TOOL.fullmatch(tool_name):
        return None
    key = _key(tool_name)
    if key == "skillmanage" and arguments.get("action") == "view":
        key = "skillview"
    if key in _SKILL_TOOLS:
        name = _skill_name(arguments)
        if name is None:
            return None
        call = f'{tool_name}(name="{name}")' if key != "skillview" else f'skill_view(name="{name}")'
        return f"- skill `{name}` was loaded earlier and left the context: call {call} again"
    if key in _TODO_TOOLS:
        return f"- todo list (via {tool_name}) left the context: read it again before going on"
    return None


def _arguments(raw: object) -> Mapping[str, Any]:
    if isinstance(raw, Mapping):
        return raw
    if isinstance(raw, str) and len(raw) <= 100_000:
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, Mapping) else {}
    return {}


def pointers_for(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The reload lines for the skill loads and todo snapshots among ``messages``' calls."""
    found: list[str] = []
    for message in messages:
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        for call in calls if isinstance(calls, list) else ():
            function = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
                continue
            line = pointer(function["name"], _arguments(function.get("arguments")))
            if line is not None:
                found.append(line)
    return found


def carried(summary: str | None) -> list[str]:
    """The pointers a previous summary carried under :data:`HEADING`."""
    if not summary or HEADING not in summary:
        return []
    section = summary.split(HEADING, 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in section.splitlines() if _POINTER.fullmatch(line.strip())]


def with_pointers(body: str, pointers: Iterable[str]) -> str:
    """``body`` with the pointer section (deduplicated, newest :data:`MAX_POINTERS`) at the
    end, replacing any such section it already has."""
    unique = list(dict.fromkeys(pointers))[-MAX_POINTERS:]
    while HEADING in body:  # every copy of the section goes, ours is written anew
        head, _, rest = body.partition(HEADING)
        after = rest.split("\n## ", 1)
        body = head.rstrip() + ("\n\n## " + after[1] if len(after) > 1 else "")
    if not unique:
        return body
    return f"{body.rstrip()}\n\n{HEADING}\n" + "\n".join(unique)
