"""The anchor ledger type: its categories in order, merged across summaries and rendered.

Why: extraction (:mod:`.message`) builds ledgers and the growth guard (:mod:`.guard`)
merges them; both need this type, so it sits below them and neither imports the other. The
idea as a whole is described in :mod:`hermes_core.compression.anchors`; the categories and
item rules are in :mod:`.items`, the render plan in :mod:`.render`.

Retention (:meth:`AnchorLedger.render`): every item one per line while that fits; past that
the other categories shrink to their newest item, then paths are grouped by directory
(``- src/app/{a.py, b.py}``) and commands by program and subcommand (``- git`` followed by
``  · diff a.py`` lines), each item once; only when even that does not fit do the least
recently seen paths and commands go. Files written or edited, failed commands (each with its
first error line) and the newest command go last of all. The user's rules and the
assistant's decisions and figures have a room of their own on top of the bound (a fifth of
it), so they take nothing from the rest: there the oldest decisions go first, the rules
last. Grouped sections have their own labels, which say how to read them, so the parser
(``split_summary`` in :mod:`.recognisers`) recovers every item.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hermes_core.compression.anchors.items import (
    _FIELDS,
    _KEY,
    _MAX_ITEMS,
    _ORDER,
    ANCHOR_HEADER,
    DEFAULT_LEDGER_CHARS,
    _key,
    _unique,
    failure_command,
    key_chars,
    ledger_bound,
)
from hermes_core.compression.anchors.render import _plan, _plan_key, _Section

__all__ = [
    "ANCHOR_HEADER",
    "DEFAULT_LEDGER_CHARS",
    "AnchorLedger",
    "failure_command",
    "key_chars",
    "ledger_bound",
]


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
    rules: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)

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

        The user's rules and the assistant's decisions have a room of their own on top,
        ``key_chars(max_chars)`` (a fifth): the oldest decisions go first, then the oldest
        rules. So the whole section is at most ``max_chars + key_chars(max_chars)``.
        """
        sections = self._sections()
        main = [s for s in sections if s.name not in _KEY]
        key = [s for s in sections if s.name in _KEY]
        shown = _plan(main, max_chars)  # may put regrown sections in ``main``
        header = 0 if shown else len(ANCHOR_HEADER)  # the key room pays for it then
        if not _plan_key(key, key_chars(max_chars) - header) and not shown:
            return ""
        sections = sorted(main + key, key=lambda s: _ORDER.index(s.name))
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
        sections = [s for s in self._sections() if s.name not in _KEY]
        shown = _plan(sections, max_chars, group=compact)
        by_name = {s.name: s for s in sections}
        paths, commands = by_name["paths"], by_name["commands"]
        return shown and paths.start > 0 and commands.start > 0
