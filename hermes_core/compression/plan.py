"""Steering a compaction: the ``plan_compaction`` marks (keep, drop, shorten) on its span.

A plugin that knows the task can say what of the span about to be summarised matters:
``keep`` stays verbatim after the summary, ``drop`` is left out of the summary's input (it is
archived all the same, so it can be recalled), ``shorten`` enters the summary's input as one
line. The marks come from third-party code, so they are untrusted input: anything that makes
no sense is ignored with a warning, and the marks are widened or refused wherever honouring
them would tear a tool call from its results or set two user (or assistant) messages side by
side. Pure: no I/O, the input is never mutated, one pass over the span per step.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from hermes_core.compression.assemble import is_summary_message, newest_real_user_index
from hermes_core.compression.guidance import Guidance
from hermes_core.compression.hooks import CompressionHooks, PruneFn
from hermes_core.compression.prune import shrink_arguments
from hermes_core.compression.window import Window
from hermes_core.redact import redact
from hermes_core.transcript.messages import message_text, turn_groups

__all__ = ["MARKS", "SHORTEN_CHARS", "Plan", "combine", "plan_span", "shorten"]

log = logging.getLogger("hermes_context.compression")
Message = dict[str, Any]
Mark = Literal["keep", "shorten", "drop"]

#: The marks, the one that keeps most first: when answers disagree about a message (or the
#: members of one tool-call group disagree) the mark that keeps more wins.
MARKS: Final[tuple[Mark, ...]] = ("keep", "shorten", "drop")
_RANK: Final = {mark: len(MARKS) - i for i, mark in enumerate(MARKS)}
#: A shortened message is at most this long (the pruner's one-line bound).
SHORTEN_CHARS: Final = 300
#: Warnings kept in the result's stats (every one is logged).
MAX_WARNINGS: Final = 5
_TALKING = ("user", "assistant")


@dataclass
class Plan:
    """The span as the summariser will read it, and what stays verbatim after the summary.

    ``middle`` (pruned forms) and ``original`` (original forms) are the summariser's and the
    fallback's inputs, less what is kept or dropped, shortened where marked; ``kept`` holds
    the source indices kept verbatim, in order."""

    middle: list[Message]
    original: list[Message]
    kept: list[int] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)


def _warn(warnings: list[str], text: str) -> None:
    log.warning("plan_compaction: %s", text)
    warnings.append(text)


def _shown(value: object) -> str:
    """A plugin's value for a warning: its repr when it is a plain type, else its type name
    (a repr of a plugin's own class may raise or run long)."""
    if type(value) in (int, str, float, type(None)):
        return repr(value)[:80]
    return f"of type {type(value).__name__}"


def combine(answers: Sequence[Any], size: int, warnings: list[str]) -> dict[int, Mark]:
    """The answers merged into one mark per span index (the mark that keeps more wins);
    entries that make no sense are counted in ``warnings`` and skipped."""
    marks: dict[int, Mark] = {}
    for number, answer in enumerate(answers, 1):
        if answer is None:
            continue  # no opinion
        if not isinstance(answer, Mapping):
            _warn(
                warnings,
                f"answer {number} is a {type(answer).__name__}, not a mapping of span index "
                "to 'keep', 'shorten' or 'drop'; ignored",
            )
            continue
        bad: list[str] = []
        try:
            items = list(answer.items())
        except Exception as exc:  # noqa: BLE001 - a plugin's mapping may fail to iterate
            _warn(warnings, f"answer {number} could not be read ({type(exc).__name__}); ignored")
            continue
        for index, mark in items:
            # exact types: a plugin's int or str subclass may compare or print by its own rules
            if type(index) is not int or not 0 <= index < size:
                bad.append(f"index {_shown(index)} is not in 0..{size - 1}")
            elif type(mark) is not str or mark not in MARKS:
                bad.append(
                    f"mark {_shown(mark)} of index {index} is not 'keep', 'shorten' or 'drop'"
                )
            else:
                old = marks.get(index)
                marks[index] = mark if old is None or _RANK[mark] > _RANK[old] else old
        if bad:
            more = f" (and {len(bad) - 1:,} more)" if len(bad) > 1 else ""
            _warn(warnings, f"answer {number}: {bad[0]}{more}; ignored")
    return marks


def _by_group(span: Sequence[Message], marks: Mapping[int, Mark]) -> tuple[dict[int, Mark], int]:
    """Marks widened to whole tool-call groups: a group is kept (or dropped) as one, and a
    ``drop`` next to a ``shorten`` in one group becomes ``shorten``. Returns the marks and how
    many messages took a mark they were not given."""
    final: dict[int, Mark] = {}
    widened = 0
    for group in turn_groups(span):
        given = [marks[i] for i in range(group.start, group.end) if i in marks]
        if not given:
            continue
        strongest = max(given, key=_RANK.__getitem__)
        for i in range(group.start, group.end):
            if strongest == "shorten":
                if i in marks:
                    final[i] = "shorten"
                    widened += marks[i] != "shorten"
            else:
                final[i] = strongest
                widened += marks.get(i) != strongest
    return final, widened


def _beside(message: Mapping[str, Any] | None, role: object) -> bool:
    return message is not None and message.get("role") == role


def _refuse_keeps(
    span: Sequence[Message],
    marks: dict[int, Mark],
    following: Mapping[str, Any] | None,
    warnings: list[str],
) -> int:
    """Kept groups that cannot stand after the summary go back to it: a summary of an earlier
    compaction (it is carried into the new one), and a group whose last message would sit
    next to another user or assistant message it did not follow before. Returns how many."""
    refused = 0
    after, after_at = following, len(span)  # the first message after the kept ones
    for group in reversed(turn_groups(span)):
        if marks.get(group.start) != "keep":
            continue
        last = span[group.end - 1].get("role")
        members = range(group.start, group.end)
        why = None
        if any(is_summary_message(span[i]) for i in members):
            why = "is the summary of an earlier compaction, which the new summary carries"
        elif last in _TALKING and _beside(after, last) and group.end != after_at:
            why = f"would sit next to another {last} message"
        if why is None:
            after, after_at = span[group.start], group.start
            continue
        _warn(warnings, f"message {group.start} {why}; summarised instead of kept")
        for i in members:
            del marks[i]
        refused += len(group)
    return refused


def shorten(message: Mapping[str, Any], call: tuple[str, Any] | None, prune: PruneFn) -> Message:
    """``message`` as one line: a tool result as the pruner's line (``call`` is the name and
    raw arguments of its call), call arguments shrunk, any other text clipped."""
    text = message_text(message)
    line = None
    if message.get("role") == "tool" and call is not None:
        line = _pruned_line(call, text, prune)
    if line is None:
        flat = " ".join(text.split())
        line = flat if len(flat) <= SHORTEN_CHARS else flat[: SHORTEN_CHARS - 1] + "…"
    out: Message = {**message, "content": line}
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        out["tool_calls"] = [_shrunk_call(c) for c in calls]
    return out


def _pruned_line(call: tuple[str, Any], text: str, prune: PruneFn) -> str | None:
    name, raw = call
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else raw
        arguments = parsed if isinstance(parsed, dict) else {}
        line = prune(name, arguments, text, SHORTEN_CHARS)
    except Exception:  # noqa: BLE001 - a failing pruner: the clipped text stands in
        return None
    if not isinstance(line, str) or not line.strip():
        return None
    return line if len(line) <= SHORTEN_CHARS else line[: SHORTEN_CHARS - 1] + "…"


def _shrunk_call(call: Any) -> Any:
    function = call.get("function") if isinstance(call, dict) else None
    shrunk = shrink_arguments(function.get("arguments")) if isinstance(function, dict) else None
    if shrunk is None or not isinstance(function, dict):
        return call
    return {**call, "function": {**function, "arguments": shrunk}}


def _calls(span: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, Any]]:
    """Call id -> (function name, raw arguments), for the pruner's line of a result."""
    found: dict[str, tuple[str, Any]] = {}
    for message in span:
        for call in message.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(call.get("id"), str):
                found[call["id"]] = (str(function.get("name") or ""), function.get("arguments"))
    return found


def plan_span(
    hooks: CompressionHooks,
    source: Sequence[Message],
    working: Sequence[Message],
    window: Window,
    *,
    guidance: Guidance | None,
    stats: dict[str, Any],
) -> Plan:
    """Ask the ``plan`` outlet about the middle of ``window`` and apply its marks; what they
    changed goes to ``stats["plan"]`` (the result's stats)."""
    ask, focus = hooks.plan, guidance.focus if guidance else None
    span = list(source[window.middle.start : window.middle.stop])
    middle = list(working[window.middle.start : window.middle.stop])
    if ask is None or not span:
        return Plan(middle, span)
    newest = newest_real_user_index(source)
    task = message_text(source[newest]) if newest is not None else ""
    warnings: list[str] = []
    try:
        answers = [a for a in ask(span, task, focus) or [] if a is not None]
    except Exception as exc:  # noqa: BLE001 - a failing planner plans nothing
        # the text reaches logs and stats: an error may quote the span
        _warn(warnings, f"the planner failed ({type(exc).__name__}: {redact(str(exc))}); no plan")
        answers = []
    marks, widened = _by_group(span, combine(answers, len(span), warnings))
    following = source[window.tail_start] if window.tail_start < len(source) else None
    refused = _refuse_keeps(span, marks, following, warnings)
    if not answers and not warnings:
        return Plan(middle, span)
    calls = _calls(span) if "shorten" in marks.values() else {}
    plan = Plan([], [], stats={"answers": len(answers), "widened": widened, "refused": refused})
    counts = dict.fromkeys(MARKS, 0)
    for i, original in enumerate(span):
        mark = marks.get(i)
        if mark is not None:
            counts[mark] += 1
        if mark == "keep":
            plan.kept.append(window.middle.start + i)
        elif mark == "shorten":
            cid = original.get("tool_call_id")
            call = calls.get(cid) if isinstance(cid, str) else None
            short = shorten(original, call, hooks.prune)
            plan.middle.append(short)
            plan.original.append(short)
        elif mark is None:
            plan.middle.append(middle[i])
            plan.original.append(original)
    plan.stats.update(kept=counts["keep"], shortened=counts["shorten"], dropped=counts["drop"])
    plan.stats["warnings"] = warnings[:MAX_WARNINGS]
    stats["plan"] = plan.stats
    return plan
