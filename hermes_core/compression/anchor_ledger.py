"""The anchor ledger type: its categories, per-item bounds, rendered section and parser.

Why: extraction (:mod:`anchor_extract`) builds ledgers and the growth guard (:mod:`anchors`)
merges them; both need this type, so it sits below them and neither imports the other. The
idea as a whole is described in :mod:`hermes_core.compression.anchors`.

Retention (:meth:`AnchorLedger.render`): every item one per line while that fits; past that
the other categories shrink to their newest item, then paths are grouped by directory
(``- src/app/{a.py, b.py}``) and commands by program and subcommand (``- git`` followed by
``  · diff a.py`` lines), each item once; only when even that does not fit do the least
recently seen paths and commands go. Files written or edited, failed commands (each with its
first error line) and the newest command go last of all. Grouped sections have their own
labels, which say how to read them, so the parser (``split_summary`` in :mod:`anchor_scan`)
recovers every item.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

from hermes_core.redact import redact

__all__ = [
    "ANCHOR_HEADER",
    "DEFAULT_LEDGER_CHARS",
    "AnchorLedger",
    "failure_command",
]


ANCHOR_HEADER: Final = "## Anchors (carried verbatim)"
#: Render bound. 8,000 characters (about 2,000 tokens) holds every path and command of the
#: 200-turn sample session one per line, and more of them grouped (see ``render``).
DEFAULT_LEDGER_CHARS: Final = 8000

_FIELDS: Final = (
    "paths", "commands", "urls", "errors", "identifiers", "asks", "edited", "failures"
)  # fmt: skip
_LABELS: Final = {
    "paths": "Files:",
    "commands": "Commands:",
    "urls": "URLs:",
    "errors": "Errors:",
    "identifiers": "Identifiers:",
    "asks": "User asks:",
    "edited": "Files written or edited:",
    "failures": "Failed commands:",
}
#: Labels of grouped sections: each says how its lines read.
_GROUPED: Final = {
    "edited": "Files written or edited (dir/{a, b} is dir/a, dir/b):",
    "paths": "Files (dir/{a, b} is dir/a, dir/b):",
    "commands": "Commands (`· args` under `- prog` is `prog args`):",
    "failures": "Failed commands (`· args` under `- prog` is `prog args`):",
}
_LABEL_FIELD: Final = {label: name for name, label in _LABELS.items()} | {
    label: name for name, label in _GROUPED.items()
}
_LABEL_CHARS: Final = {name: len(label) + 1 for name, label in _LABELS.items()}
_GROUPED_CHARS: Final = {name: len(label) + 1 for name, label in _GROUPED.items()}
_ORDER: Final = ("edited", "paths", "commands", "failures", "urls", "errors", "identifiers", "asks")
_ITEM_CHARS: Final = dict(zip(_FIELDS, (300, 300, 300, 200, 80, 200, 300, 560), strict=True))
_MAX_ITEMS: Final = dict(zip(_FIELDS, (1000, 1000, 300, 300, 300, 200, 1000, 300), strict=True))

_WS = re.compile(r"\s+")
_NOTE = re.compile(r"\(\d{1,9} older omitted\)")
_GROUP_LINE = re.compile(r"(.*/)\{([^{}]+)\}")
_PYTHON = re.compile(r"python[\d.]{0,8}")
_SUBWORD = re.compile(r"[a-z][a-z0-9_:-]{0,30}")
#: Programs whose second word names what they do (``git diff``, ``npm test``).
_SUBCOMMANDS: Final = frozenset(
    re.findall(
        r"\S+",
        "git pip pip3 uv poetry npm yarn pnpm bun deno cargo go docker kubectl helm terraform "
        "apt apt-get brew dotnet gh conda mvn gradle rustup systemctl alembic npx",
    )
)


def _cut_head(text: str, n: int) -> str:
    """The first ``n`` characters, ending at whitespace when one is near, so no token is split."""
    if len(text) <= n:
        return text
    for i in range(n - 1, max(n - 400, 0), -1):
        if text[i].isspace():
            return text[:i]
    return text[:n]


def _clean(text: str, limit: int) -> str:
    """One redacted line of at most ``limit`` characters (redacted before any cut)."""
    return _clean_head(_cut_head(text, 8 * limit), limit)


@lru_cache(maxsize=4096)  # the same path or command is added many times over a transcript
def _clean_head(text: str, limit: int) -> str:
    text = redact(_WS.sub(" ", text)).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def failure_command(item: str) -> str | None:
    """The command of a failed-command item (``\\`cmd\\` -> exit N: error``), else None."""
    end = item.find("` -> exit ") if item.startswith("`") else -1
    command = item[1:end] if end > 1 else ""
    return command if command and command == command.strip() else None


def _key(name: str, item: str) -> str:
    """What makes two items the same: a failed command is listed once, with its newest error."""
    return (failure_command(item) or item) if name == "failures" else item


def _unique(items: Sequence[Any], name: str) -> list[str]:
    limit = _ITEM_CHARS.get(name, 200)
    seen: dict[str, str] = {}
    for item in items:
        if isinstance(item, str) and (clean := _clean(item, limit)):
            key = _key(name, clean)
            if name == "failures":
                seen.pop(key, None)
            seen.setdefault(key, clean)
    return list(seen.values())


def _path_parts(path: str) -> tuple[str, str] | None:
    """(directory with its slash, base name) of a path a group line can hold, else None."""
    cut = path.rfind("/") + 1
    if cut <= 0 or cut == len(path) or "{" in path or "}" in path or ", " in path[cut:]:
        return None
    return path[:cut], path[cut:]


def _command_parts(command: str) -> tuple[str, str] | None:
    """(program and subcommand, the rest) of a command, else None (nothing after the program:
    ``python -m mod``, ``git sub``, else the first word)."""
    words = command.split(" ", 3)
    cut = 1
    if len(words) > 2 and words[1] == "-m" and _PYTHON.fullmatch(words[0]):
        cut = 3
    elif len(words) > 1 and words[0] in _SUBCOMMANDS and _SUBWORD.fullmatch(words[1]):
        cut = 2
    head = " ".join(words[:cut])
    rest = command[len(head) + 1 :]
    return (head, rest) if rest else None


@dataclass
class AnchorLedger:
    """Anchors in order (oldest first); render() bounds them, merge() carries them on.
    ``edited`` paths are also in ``paths``; ``failures`` are ``\\`cmd\\` -> exit N: line``."""

    paths: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    asks: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def _lists(self) -> list[list[str]]:
        return [getattr(self, name) for name in _FIELDS]

    def is_empty(self) -> bool:
        return not any(self._lists())

    def merge(self, newer: AnchorLedger) -> AnchorLedger:
        """Union, de-duplicated; an item seen again moves to its newer place, so the oldest
        (first dropped by render) are the ones not seen lately. Each category keeps its newest
        items when over its count cap."""
        merged: dict[str, list[str]] = {}
        for name, old, new in zip(_FIELDS, self._lists(), newer._lists(), strict=True):
            fresh = _unique(new, name)
            present = {_key(name, x) for x in fresh}
            items = [x for x in _unique(old, name) if _key(name, x) not in present] + fresh
            merged[name] = items[-_MAX_ITEMS.get(name, 200) :]
        return AnchorLedger(**merged)

    def _sections(self) -> list[_Section]:
        cats = {
            name: _unique(items, name) for name, items in zip(_FIELDS, self._lists(), strict=True)
        }
        edited = set(cats["edited"])  # each listed once, under its own label
        failed = {failure_command(f) for f in cats["failures"]}
        cats["paths"] = [p for p in cats["paths"] if p not in edited]
        newest = cats["commands"][-1:]
        cats["commands"] = [c for c in cats["commands"] if c not in failed]
        sections = [_Section(name, cats[name]) for name in _ORDER]
        sections[_ORDER.index("commands")].keeps_newest = bool(newest) and newest[0] not in failed
        return sections

    def render(self, max_chars: int = DEFAULT_LEDGER_CHARS) -> str:
        """The section, at most ``max_chars`` characters ("" when empty or nothing fits).

        Over the bound, in this order: URLs, errors, identifiers and asks lose their oldest
        items (largest category first) down to their newest; paths and commands are grouped
        (the others regrow into the room that frees); the oldest paths and commands go (the
        larger first, the newest command stays); the other categories go; then written files
        and failed commands; a ``(N older omitted)`` line says what went.
        """
        sections = self._sections()
        if not _plan(sections, max_chars):
            return ""
        lines = [ANCHOR_HEADER]
        for section in sections:
            lines.extend(section.lines())
        return "\n".join(lines)

    def crowds_out_older(
        self, max_chars: int = DEFAULT_LEDGER_CHARS, *, compact: bool = True
    ) -> bool:
        """True when :meth:`render` would leave out at least one path and one command: an
        older path or command could then never be shown (each category drops its oldest
        first), which lets extraction stop walking back through a long middle. With
        ``compact=False``, the same for a render that never groups (one item per line)."""
        sections = self._sections()
        shown = _plan(sections, max_chars, group=compact)
        paths, commands = sections[_ORDER.index("paths")], sections[_ORDER.index("commands")]
        return shown and paths.start > 0 and commands.start > 0


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
            sections[_ORDER.index(name)] = by_name[name] = _Section(name, by_name[name].items)
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
