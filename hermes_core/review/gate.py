"""What a review's tool call may do: which tools exist for it, and the quote rule for the
user profile.

Why a gate in front of the handlers: the review model reads a whole conversation, tool output
and pasted text included, so it can be talked into anything the tools allow. It gets exactly
two tools (``memory``, ``skill_manage``); any other name is refused, never dispatched. And a
memory write lands only with a quote of the user's own words that backs it (:mod:`.quotes`);
one without is let through marked unbacked, and the writer stages it for a person. The
``quote`` argument exists only in the review's copy of the memory schema and is taken off
before the memory tool sees the call. Pure functions.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from hermes_core.review.quotes import QuoteBook

__all__ = ["KIND_TOOLS", "REVIEW_TOOLS", "Verdict", "judge", "review_schema", "schema_name"]

#: The tool each kind of review works with; nothing else is ever offered or run.
KIND_TOOLS: Final = {"memory": "memory", "skill": "skill_manage"}
REVIEW_TOOLS: Final = frozenset(KIND_TOOLS.values())
_QUOTE_DOC: Final = (
    "The user's own words, copied exactly from one of their messages, that state this fact. "
    "Write the fact in the user's wording (negations included): a write without a quote that "
    "backs it is not saved but waits for a person's approval."
)
_ARGUMENTS_MAX: Final = 100_000
_NOTE_MAX: Final = 400
_SKILL_NOTE: Final = "a skill the review writes waits for a person"
_UNBACKED: Final = "no user quote backs it: "


def schema_name(schema: object) -> str:
    """The function name of an OpenAI tool schema ('' when it has none)."""
    if not isinstance(schema, Mapping):
        return ""
    function = schema.get("function")
    name = function.get("name") if isinstance(function, Mapping) else None
    return name if isinstance(name, str) else ""


def review_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema as the review model sees it: the memory tool gains ``quote`` (on the call
    and on each batch operation); any other schema is copied unchanged."""
    out: dict[str, Any] = copy.deepcopy(dict(schema))
    if schema_name(out) != "memory":
        return out
    function = out["function"]
    function["description"] = (
        str(function.get("description", "")) + " In this review, every add or replace must "
        "carry 'quote', the user's exact words that state it, and say only what they say, in "
        "their wording: without one it only waits for a person's approval."
    ).strip()
    parameters = function.setdefault("parameters", {"type": "object", "properties": {}})
    properties = parameters.setdefault("properties", {})
    properties["quote"] = {"type": "string", "description": _QUOTE_DOC}
    operations = properties.get("operations")
    if isinstance(operations, dict) and isinstance(operations.get("items"), dict):
        items = operations["items"].setdefault("properties", {})
        items["quote"] = {"type": "string", "description": _QUOTE_DOC}
    return out


@dataclass(frozen=True)
class Verdict:
    """Whether a call may run; ``arguments`` are what the handler gets (quotes taken off),
    ``reason`` says why not, ``code`` names the rule (``forbidden``, ``not_offered``,
    ``bad_arguments``)."""

    allowed: bool
    arguments: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    code: str = ""
    backed: bool = False  # a checked quote of the user's words backs every new fact
    note: str = ""  # which user message backs it, or why none does (kept with the write)

    def told(self, result: str) -> str:
        """The handler's ``result`` as the model reads it: for a memory write no quote backs,
        with why (``held_because``), so the next call can quote the user better."""
        if self.backed or not self.note.startswith(_UNBACKED):
            return result
        try:
            value = json.loads(result)
        except ValueError:
            return result
        if not isinstance(value, dict):
            return result
        return json.dumps(value | {"held_because": self.note}, ensure_ascii=False)

    def refusal(self) -> str:
        """The JSON text the model gets back for a refused call."""
        return json.dumps(
            {"success": False, "refused": True, "saved": False, "error": self.reason},
            ensure_ascii=False,
        )


def _refuse(code: str, reason: str) -> Verdict:
    return Verdict(False, reason=reason, code=code)


def _parse(arguments: str) -> dict[str, Any] | str:
    if len(arguments) > _ARGUMENTS_MAX:
        return f"arguments are over {_ARGUMENTS_MAX:,} characters; send a smaller call."
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except (ValueError, RecursionError) as exc:
        return f"arguments are not valid JSON ({type(exc).__name__}); send one JSON object."
    if not isinstance(value, dict):
        return "arguments must be a JSON object."
    return value


def _needs_quote(action: object) -> bool:
    return action in ("add", "replace")


def _verb(action: object) -> str:
    """``action`` for a note, only when it is a verb the memory tool knows: the model writes
    it, and a note is kept with the write."""
    return action if action in ("add", "replace", "remove") else "call"


def _backing(op: Mapping[str, Any], book: QuoteBook) -> tuple[int | None, str | None]:
    """Where the user said what ``op`` saves, or why no quote shows it (None, None: nothing
    to back, e.g. a remove)."""
    if not _needs_quote(op.get("action")):
        return None, None
    return book.backing(op.get("quote"), op.get("content"))


def _memory(arguments: dict[str, Any], book: QuoteBook) -> Verdict:
    """The quote rule for the memory tool, and the call without its quotes. The call is let
    through, backed or not, for either target: the writer stages what no quote backs, so a
    person can still approve a user fact the model paraphrased (issue 26: the review "stages
    the rest")."""
    cleaned = {k: v for k, v in arguments.items() if k != "quote"}
    operations = arguments.get("operations")
    found: list[int] = []
    problems: list[str] = []
    if isinstance(operations, list):
        cleaned_ops: list[Any] = []
        for position, op in enumerate(operations):
            if not isinstance(op, dict):
                cleaned_ops.append(op)  # the memory tool says what is wrong with it
                problems.append(f"operation {position} is not an object")
                continue
            at, problem = _backing(op, book)
            if problem is not None:
                problems.append(f"operation {position}: {problem}")
            elif at is not None:
                found.append(at)
            else:
                problems.append(f"operation {position}: a {_verb(op.get('action'))} saves no quote")
            cleaned_ops.append({k: v for k, v in op.items() if k != "quote"})
        cleaned["operations"] = cleaned_ops
    else:
        at, problem = _backing(arguments, book)
        if problem is not None:
            problems.append(problem)
        elif at is not None:
            found.append(at)
        else:
            problems.append(f"a {_verb(arguments.get('action'))} carries no quote of the user")
    if found and not problems:
        where = ", ".join(str(i) for i in sorted(set(found)))
        return Verdict(True, arguments=cleaned, backed=True, note=f"quoted user message {where}")
    note = _UNBACKED + " ".join(problems)
    return Verdict(True, arguments=cleaned, note=note[:_NOTE_MAX])


def judge(name: str, arguments: str, offered: Collection[str], book: QuoteBook) -> Verdict:
    """May the review run tool ``name`` with ``arguments`` (JSON text)? ``offered`` are the
    tools this review was given."""
    if name not in REVIEW_TOOLS:
        allowed = ", ".join(sorted(offered)) or "none"
        return _refuse(
            "forbidden",
            f"tool {name[:80]!r} is not available to background review (only {allowed}); "
            "it was not run.",
        )
    if name not in offered:
        return _refuse("not_offered", f"tool {name!r} is not part of this review; not run.")
    parsed = _parse(arguments)
    if isinstance(parsed, str):
        return _refuse("bad_arguments", parsed)
    if name == "memory":
        return _memory(parsed, book)
    return Verdict(True, arguments=parsed, note=_SKILL_NOTE)
