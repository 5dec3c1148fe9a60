"""Dates of skills: created, updated (a write that landed) and last used (a ``view``).

Why a sidecar beside the library (``$HERMES_HOME/skills.meta.json``) and not the front
matter: a view must not rewrite the skill it shows, a hand-installed skill must not need
one, and the index in the prompt must stay as it is. The dates help a person (``skills
list``) and a consolidation pick what to merge or drop; so they never fail a write or a view:
what cannot be read or written is logged and left out.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from hermes_core.errors import MemoryStoreError
from hermes_core.memory.dates import EntryDates, iso, moment
from hermes_core.memory.files import atomic_write, locked, read_text

__all__ = ["SKILL_DATES_FILE", "SkillDates"]

log = logging.getLogger("hermes_context.skills")
SKILL_DATES_FILE = "skills.meta.json"
_VERSION = 1


class SkillDates:
    """The dates of the skills under ``root``, kept in ``<root's parent>/skills.meta.json``
    and changed under that file's own lock (a view does not take the library's)."""

    def __init__(self, root: Path) -> None:
        self.path = Path(root).expanduser().parent / SKILL_DATES_FILE

    def read(self) -> dict[str, EntryDates]:
        """Each dated skill's dates, by skill name ({} when none can be read)."""
        try:
            text = read_text(self.path)
            raw = json.loads(text) if text else None
        except (MemoryStoreError, ValueError, RecursionError) as exc:
            log.warning("skill dates left out (%s)", exc)
            return {}
        return _load(raw)

    def changed(self, name: str, *, deleted: bool = False, now: float | None = None) -> None:
        """A write to skill ``name`` landed (``deleted``: the skill is gone)."""
        at = time.time() if now is None else now

        def change(dates: dict[str, EntryDates]) -> None:
            if deleted:
                dates.pop(name, None)
                return
            old = dates.get(name)
            created = old.created if old is not None else at
            dates[name] = EntryDates(created, max(at, created), old.last_used if old else None)

        self._update(change)

    def used(self, name: str, now: float | None = None) -> None:
        """Skill ``name`` was viewed (a skill first seen so is dated from now)."""
        at = time.time() if now is None else now

        def change(dates: dict[str, EntryDates]) -> None:
            old = dates.get(name) or EntryDates(at, at)
            dates[name] = EntryDates(old.created, old.updated, max(at, old.created))

        self._update(change)

    def _update(self, change: Any) -> None:
        try:
            with locked(self.path):
                dates = self.read()
                change(dates)
                atomic_write(self.path, json.dumps(_dump(dates), sort_keys=True))
        except (OSError, MemoryStoreError) as exc:
            log.warning("skill dates not updated (%s)", exc)


def _dump(dates: dict[str, EntryDates]) -> dict[str, Any]:
    skills = {
        name: {
            "created": iso(d.created),
            "updated": iso(d.updated),
            "last_used": iso(d.last_used) if d.last_used is not None else None,
        }
        for name, d in sorted(dates.items())
    }
    return {"v": _VERSION, "skills": skills}


def _load(raw: object) -> dict[str, EntryDates]:
    if not isinstance(raw, dict) or raw.get("v") != _VERSION:
        return {}
    records = raw.get("skills")
    out: dict[str, EntryDates] = {}
    for name, record in (records if isinstance(records, dict) else {}).items():
        if not isinstance(record, dict):
            continue
        created, updated = moment(record.get("created")), moment(record.get("updated"))
        if isinstance(name, str) and created is not None and updated is not None:
            out[name] = EntryDates(created, max(created, updated), moment(record.get("last_used")))
    return out
