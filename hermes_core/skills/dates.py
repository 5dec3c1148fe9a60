"""Dates of skills: created, updated (a write that landed) and last used (a ``view``).

Why a sidecar beside the library (``$HERMES_HOME/skills.meta.json``) and not the front
matter: a view must not rewrite the skill it shows, a hand-installed skill must not need
one, and the index in the prompt must stay as it is. The dates help a person (``skills
list``) and a consolidation pick what to merge or drop; so they never fail a write or a view:
what cannot be read or written is logged and left out.

Skills are keyed by their path in the library (``category/name``, or ``name`` without a
category): two categories may each hold a skill of one name. Files of version 1 keyed them
by bare name; such a key is read as the one skill of that name (left out when several share
it, since nobody can tell whose dates they were) and the file is rewritten by path on its next
change.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hermes_core.errors import HermesError, MemoryStoreError
from hermes_core.memory.dates import EntryDates, iso, moment
from hermes_core.memory.files import atomic_write, locked, read_text
from hermes_core.skills.catalog import locations

__all__ = ["SKILL_DATES_FILE", "SkillDates"]

log = logging.getLogger("hermes_context.skills")
SKILL_DATES_FILE = "skills.meta.json"
_VERSION = 2  # keys are paths in the library; 1: bare skill names
_BY_NAME = 1


class SkillDates:
    """The dates of the skills under ``root``, kept in ``<root's parent>/skills.meta.json``
    and changed under that file's own lock (a view does not take the library's)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser()
        self.path = self.root.parent / SKILL_DATES_FILE

    def read(self) -> dict[str, EntryDates]:
        """Each dated skill's dates, by its path in the library (``category/name`` or
        ``name``); {} when none can be read."""
        try:
            text = read_text(self.path)
            raw = json.loads(text) if text else None
        except (MemoryStoreError, ValueError, RecursionError) as exc:
            log.warning("skill dates left out (%s)", exc)
            return {}
        return self._load(raw)

    def by_name(self) -> dict[str, EntryDates]:
        """The dates by bare skill name, for the names only one skill of the library has
        (what a caller that knows skills by name alone can use without mixing two up)."""
        paths = self._paths()
        dates = self.read()
        out: dict[str, EntryDates] = {}
        for name, found in paths.items():
            if len(found) == 1 and found[0] in dates:
                out[name] = dates[found[0]]
        return out

    def write(self, dates: Mapping[str, EntryDates]) -> int:
        """Give skills these dates (e.g. read from another home): each key a path in the
        library, or a bare name, read as the one skill of that name when the library has
        no skill of that name without a category (left out when several share it). Other
        skills keep theirs. Returns how many records were stored."""
        paths = self._paths()
        given: dict[str, EntryDates] = {}
        for key, when in dates.items():
            if not isinstance(key, str) or not isinstance(when, EntryDates):
                raise ValueError("skill dates must map skill paths to EntryDates")
            path = key if "/" in key else _bare(paths, key)
            if path is not None:
                given[path] = when
        self._update(lambda current: current.update(given))
        return len(given)

    def changed(self, path: str, *, deleted: bool = False, now: float | None = None) -> None:
        """A write to the skill at ``path`` (``category/name`` or ``name``) landed
        (``deleted``: the skill is gone). A bare name is read as :meth:`write` reads it."""
        at = time.time() if now is None else now
        path = self._resolve(path)

        def change(dates: dict[str, EntryDates]) -> None:
            if deleted:
                dates.pop(path, None)
                return
            old = dates.get(path)
            created = old.created if old is not None else at
            dates[path] = EntryDates(created, max(at, created), old.last_used if old else None)

        self._update(change)

    def used(self, path: str, now: float | None = None) -> None:
        """The skill at ``path`` was viewed (a skill first seen so is dated from now)."""
        at = time.time() if now is None else now
        path = self._resolve(path)

        def change(dates: dict[str, EntryDates]) -> None:
            old = dates.get(path) or EntryDates(at, at)
            dates[path] = EntryDates(old.created, old.updated, max(at, old.created))

        self._update(change)

    def _update(self, change: Callable[[dict[str, EntryDates]], None]) -> None:
        try:
            with locked(self.path):
                dates = self.read()
                change(dates)
                atomic_write(self.path, json.dumps(_dump(dates), sort_keys=True))
        except (OSError, MemoryStoreError) as exc:
            log.warning("skill dates not updated (%s)", exc)

    def _resolve(self, key: str) -> str:
        """A bare name as the skill it names (see :meth:`write`); a path as it is."""
        if "/" in key or (self.root / key).is_dir():
            return key  # a path, or a skill without a category: no walk of the library
        return _bare(self._paths(), key) or key

    def _paths(self) -> dict[str, list[str]]:
        """Each skill name of the library and the paths of the skills that have it."""
        out: dict[str, list[str]] = {}
        try:
            found, _ = locations(self.root.resolve())
        except (OSError, HermesError) as exc:
            log.warning("skill dates: the library could not be read (%s)", exc)
            return out
        for location in found:
            out.setdefault(location.name, []).append(location.relative)
        return out

    def _load(self, raw: object) -> dict[str, EntryDates]:
        if not isinstance(raw, dict) or raw.get("v") not in (_VERSION, _BY_NAME):
            return {}
        records = _records(raw.get("skills"))
        if raw.get("v") == _VERSION or not records:
            return records
        paths = self._paths()  # version 1: keys are names
        out: dict[str, EntryDates] = {}
        for name, when in records.items():
            path = _unique(paths, name) if name in paths else name
            if path is not None:
                out.setdefault(path, when)
        return out


def _bare(paths: Mapping[str, list[str]], name: str) -> str | None:
    """Where a bare key goes: the skill of that name without a category, else the one skill
    of that name, else (no such skill) the name itself; None when several share it."""
    found = paths.get(name)
    if not found or name in found:
        return name
    return _unique(paths, name)


def _unique(paths: Mapping[str, list[str]], name: str) -> str | None:
    """The path of the one skill called ``name`` (None: none or several)."""
    found = paths.get(name, [])
    return found[0] if len(found) == 1 else None


def _records(records: object) -> dict[str, EntryDates]:
    out: dict[str, EntryDates] = {}
    for key, record in (records if isinstance(records, dict) else {}).items():
        if not isinstance(record, dict):
            continue
        created, updated = moment(record.get("created")), moment(record.get("updated"))
        if isinstance(key, str) and created is not None and updated is not None:
            out[key] = EntryDates(created, max(created, updated), moment(record.get("last_used")))
    return out


def _dump(dates: dict[str, EntryDates]) -> dict[str, Any]:
    skills = {
        path: {
            "created": iso(d.created),
            "updated": iso(d.updated),
            "last_used": iso(d.last_used) if d.last_used is not None else None,
        }
        for path, d in sorted(dates.items())
    }
    return {"v": _VERSION, "skills": skills}
