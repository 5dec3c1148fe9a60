"""The render plan of an anchor ledger: which items of each category fit the bound, and
how they are laid out (one per line, or grouped by directory and program).

Why apart from the ledger type: the plan is the intricate part (costs kept current in O(1)
per dropped item, groups that render whichever way is cheaper), and
:meth:`AnchorLedger.render` only asks it for a decision.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from functools import lru_cache

from hermes_core.compression.anchors.items import (
    _FIELDS,
    _GROUP_LINE,
    _GROUPED,
    _GROUPED_CHARS,
    _LABEL_CHARS,
    _LABELS,
    ANCHOR_HEADER,
    _command_parts,
    _path_parts,
    failure_command,
)

__all__: list[str] = []


class _Form:
    """How one item renders: ``alone`` (its own lines) or, in a grouped section, as a member
    of group ``key``: ``member`` lines under the group's ``- key`` line, or a name inside a
    path group's braces. Costs count every line's newline."""

    __slots__ = ("alone", "cost", "key", "member", "member_cost")

    def __init__(self, name: str, item: str, groupable: bool) -> None:
        command = failure_command(item) if name == "failures" else item
        note = [f"↳ {item[len(command) + 6 :]}"] if name == "failures" and command else []
        self.alone = [f"- {command or item}", *(f"  {x}" for x in note)]
        self.cost = sum(len(x) + 1 for x in self.alone)
        files = name in ("paths", "edited")
        split = _path_parts if files else _command_parts
        parts = split(command) if groupable and command else None
        self.key = parts[0] if parts else None
        self.member: list[str] = []
        if parts:
            self.member = [parts[1]] if files else [f"  · {parts[1]}", *(f"    {x}" for x in note)]
        self.member_cost = sum(len(x) + (2 if files else 1) for x in self.member)


@lru_cache(maxsize=8192)  # a plan is made several times over the same items (never changed)
def _form(name: str, item: str, groupable: bool) -> _Form:
    return _Form(name, item, groupable)


class _Group:
    """The kept members of one directory or program, with their cost as a group (its line,
    then the members) and one item at a time; whichever is cheaper is what renders."""

    def __init__(self, key: str) -> None:
        self.head = len(key) + 3  # "- key\n", or the "- " "{" "}" "\n" of a path group
        self.members: deque[_Form] = deque()
        self.grouped = self.alone = 0

    def add(self, form: _Form) -> None:
        self.members.append(form)
        self.grouped += form.member_cost
        self.alone += form.cost

    def drop(self) -> None:
        form = self.members.popleft()
        self.grouped -= form.member_cost
        self.alone -= form.cost

    def joined(self) -> bool:
        return len(self.members) > 1 and self.head + self.grouped < self.alone

    def cost(self) -> int:
        return self.head + self.grouped if self.joined() else self.alone


class _Section:
    """One category in a render plan: its items (oldest first), how many of the oldest are
    left out (``start``) and whether its lines are grouped. The cost of what is kept is kept
    current in O(1) per item dropped, so a plan costs O(items)."""

    def __init__(self, name: str, items: list[str]) -> None:
        self.name, self.items = name, items
        self.index = _FIELDS.index(name)  # ties go as they always did: lower index first
        self.start, self.grouped, self.hidden = 0, False, False
        self.keeps_newest = False  # the newest command run: the last to go (unless it failed)
        # a path that reads as a group line would be misread in a grouped section
        self.can_group = name in _GROUPED and not (
            name in ("paths", "edited") and any(_GROUP_LINE.fullmatch(x) for x in items)
        )
        self.forms = [_form(name, x, self.can_group) for x in items]
        self.kept = sum(f.cost for f in self.forms)  # one item at a time
        self.groups: dict[str, _Group] = {}
        for form in self.forms:
            if form.key is not None:
                self.groups.setdefault(form.key, _Group(form.key)).add(form)
        self.grouped_cost = self.kept + sum(g.cost() - g.alone for g in self.groups.values())

    def label(self) -> str:
        return _GROUPED[self.name] if self.grouped else _LABELS[self.name]

    def left(self) -> int:
        return len(self.items) - self.start

    def cost(self) -> int:
        if self.hidden or self.start >= len(self.items):  # all left out: takes no room
            return 0
        note = len(str(self.start)) + 17 if self.start else 0  # "(N older omitted)\n"
        if self.grouped:
            return _GROUPED_CHARS[self.name] + note + self.grouped_cost
        return _LABEL_CHARS[self.name] + note + self.kept

    def drop(self) -> None:
        """Leave out the oldest item still kept."""
        form = self.forms[self.start]
        self.start += 1
        self.kept -= form.cost
        if form.key is None:
            self.grouped_cost -= form.cost
            return
        group = self.groups[form.key]
        before = group.cost()
        group.drop()
        self.grouped_cost += group.cost() - before

    def lines(self) -> list[str]:
        if self.hidden or not self.left():
            return []
        out = [self.label()] + ([f"({self.start} older omitted)"] if self.start else [])
        kept = self.forms[self.start :]
        if not self.grouped:
            return out + [line for form in kept for line in form.alone]
        runs: dict[str, list[int]] = {}  # each group goes where its newest member is
        for i, form in enumerate(kept):
            runs.setdefault(form.key if form.key is not None else f"\0{i}", []).append(i)
        for key, members in sorted(runs.items(), key=lambda run: run[1][-1]):
            group = self.groups.get(key)
            forms = [kept[i] for i in members]
            if group is None or not group.joined():
                out.extend(line for form in forms for line in form.alone)
            elif self.name in ("paths", "edited"):
                out.append(f"- {key}{{{', '.join(f.member[0] for f in forms)}}}")
            else:
                out.append(f"- {key}")
                out.extend(line for form in forms for line in form.member)
        return out


def _plan_key(sections: list[_Section], room: int) -> bool:
    """Decide what the rules and decisions keep within ``room``: the oldest decisions go
    down to the newest one, then the oldest rules down to theirs, then the rest (decisions
    first). False when nothing is shown."""
    by_name = {s.name: s for s in sections}
    for name, floor in (("decisions", 1), ("rules", 1), ("decisions", 0), ("rules", 0)):
        section = by_name[name]
        while sum(s.cost() for s in sections) > room and section.left() > floor:
            section.drop()
    return any(s.left() for s in sections)


def _plan(sections: list[_Section], max_chars: int, *, group: bool = True) -> bool:
    """Decide, in place, what each section keeps within ``max_chars`` (see
    :meth:`AnchorLedger.render` for the order). False when nothing fits."""
    by_name = {s.name: s for s in sections}
    other_names = ("urls", "errors", "identifiers", "asks")

    def total() -> int:
        return len(ANCHOR_HEADER) + sum(s.cost() for s in sections)

    def shrink(names: Sequence[str], floor: int, newest_command: bool = False) -> None:
        """Drop oldest items of the largest of ``names`` (by their one-per-line size) until
        the plan fits or each is down to ``floor`` (and the newest command kept, if asked)."""
        group = [by_name[n] for n in names]
        while total() > max_chars:
            open_ = [
                s for s in group if s.left() > max(floor, int(newest_command and s.keeps_newest))
            ]
            if not open_:
                return
            max(open_, key=lambda s: (s.kept, -s.index)).drop()

    shrink(other_names, 1)
    if group and total() > max_chars and any(s.can_group for s in sections):
        for name in other_names:  # the others regrow into the room grouping frees
            at = sections.index(by_name[name])
            sections[at] = by_name[name] = _Section(name, by_name[name].items)
        for s in sections:
            s.grouped = s.can_group
        shrink(other_names, 1)
    shrink(("paths", "commands"), 0, newest_command=True)
    shrink(other_names, 0)
    shrink(("edited", "failures"), 0)
    shrink(("paths", "commands"), 0)
    shown = [s for s in sections if s.left()]
    while shown and total() > max_chars:  # labels and notes alone are too long
        shown.pop().hidden = True
    return bool(shown)
