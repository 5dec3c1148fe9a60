"""Rebuilding a host item whose OpenAI message changed, with the original as a template.

Why: a compaction rewrites some messages (a pruned tool result, a summary merged into the
first kept message, recall added to the user's turn). The host's item behind such a message
still holds what OpenAI messages cannot (``cache_control``, citations, thinking blocks with
their signatures, unknown blocks): those stay in place, and only what the OpenAI side says
changed is replaced. Units (blocks or items) the OpenAI side cannot express are kept as they
are, in their place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Slot", "Unit", "align", "ordered"]

#: where a unit goes in the rebuilt item: (template position, rank, sequence); rank -1 is
#: "inserted before that position", 0 "at it", 1 "after it"
Slot = tuple[int, int, int]


@dataclass(frozen=True)
class Unit:
    """One unit of the template: its position, the host's value and the OpenAI part it
    becomes (``None``: the OpenAI side cannot express it, so it is kept as is)."""

    position: int
    value: Any
    part: Any


def align(
    template: Sequence[Unit],
    parts: Sequence[Any],
    *,
    same_kind: Callable[[Any, Any], bool],
    merged: Callable[[Any, Any], Any],
    fresh: Callable[[Any], Any],
) -> list[tuple[Slot, Any]]:
    """The units of the rebuilt item, each with its slot.

    Template units the OpenAI side cannot express are kept. Each new part takes, in order:
    the next template unit with the same OpenAI form (kept as is; the units skipped on the way
    were dropped by the compaction), else a fresh unit inserted before the next template unit
    when the part after it matches that unit (an insertion, e.g. a summary put in front),
    else the next template unit of the same kind with the part's value (``merged``), else a
    fresh unit after the last one placed.
    """
    kept = [u for u in template if u.part is None]
    expressed = [u for u in template if u.part is not None]
    out: list[tuple[Slot, Any]] = [((u.position, 0, 0), u.value) for u in kept]
    last = template[-1].position if template else 0
    t = 0
    seq = 0
    for j, part in enumerate(parts):
        seq += 1
        hit = next((x for x in range(t, len(expressed)) if expressed[x].part == part), None)
        if hit is not None:
            unit = expressed[hit]
            out.append(((unit.position, 0, 0), unit.value))
            last, t = unit.position, hit + 1
            continue
        after = parts[j + 1] if j + 1 < len(parts) else None
        if t < len(expressed) and after is not None and expressed[t].part == after:
            out.append(((expressed[t].position, -1, seq), fresh(part)))
            continue
        if t < len(expressed) and same_kind(expressed[t].part, part):
            unit = expressed[t]
            out.append(((unit.position, 0, 0), merged(unit.value, part)))
            last, t = unit.position, t + 1
            continue
        out.append(((last, 1, seq), fresh(part)))
    return out


def ordered(slots: Sequence[tuple[Slot, Any]]) -> list[Any]:
    """The values in slot order (the template's order, insertions where they belong)."""
    return [value for _, value in sorted(slots, key=lambda pair: pair[0])]
