"""The skills' dates (created, updated, last used) in a bundle, and back.

Why through :class:`~hermes_core.skills.dates.SkillDates`' public methods only: that module
owns how the dates are keyed and stored. Export takes what ``read()`` gives for the
exported skills (a key that is one of their names, bare or ``category/name``), import gives
each back to a skill it wrote with ``changed()`` and ``used()`` at the recorded times, which
rebuild exactly those dates. A skill the target has dates for already keeps them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from hermes_core.lifecycle.bundle_format import BundleError
from hermes_core.memory.dates import EntryDates, dates_object, moment

__all__ = ["checked_skill_dates", "restore_skill_dates", "skill_dates"]

_VERSION: Final = 1


def _keys(skills: Iterable[str]) -> set[str]:
    """The keys a skill's dates may have: ``category/name`` and the bare name."""
    names = set(skills)
    return names | {skill.rpartition("/")[2] for skill in names}


def skill_dates(root: Path, entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"v": 1, "skills": {key: {"created", "updated", "last_used"}}}`` for the skills
    of ``entries`` (UTC ISO 8601, as the dates sidecars write them)."""
    from hermes_core.skills.dates import SkillDates

    wanted = _keys(str(e.get("skill")) for e in entries)
    known = SkillDates(root).read()
    dated = {key: dates_object(d) for key, d in sorted(known.items()) if key in wanted}
    return {"v": _VERSION, "skills": dated}


def checked_skill_dates(value: object) -> dict[str, EntryDates]:
    """The member ``skill_dates.json`` as dates by key; :class:`BundleError` otherwise."""
    records = value.get("skills") if isinstance(value, dict) else None
    if not isinstance(value, dict) or value.get("v") != _VERSION or not isinstance(records, dict):
        raise BundleError(
            f"the bundle's skill_dates.json is not skill dates (v: {_VERSION} and an object "
            "of skills expected); nothing was imported"
        )
    dates: dict[str, EntryDates] = {}
    for key, record in records.items():
        given = record if isinstance(record, dict) else {}
        created, updated = moment(given.get("created")), moment(given.get("updated"))
        used_raw = given.get("last_used")
        used = moment(used_raw)
        if created is None or updated is None or (used_raw is not None and used is None):
            raise BundleError(
                f"the bundle's skill_dates.json has no valid dates for {key!r} (UTC ISO 8601 "
                "times expected); nothing was imported"
            )
        dates[key] = EntryDates(created, max(created, updated), used)
    return dates


def restore_skill_dates(root: Path, dates: Mapping[str, EntryDates], written: Iterable[str]) -> int:
    """Give the skills ``written`` (just imported) their dates from the bundle; returns
    how many took them."""
    from hermes_core.skills.dates import SkillDates

    wanted = _keys(written)
    book = SkillDates(root)
    have = book.read()
    taken = 0
    for key, when in sorted(dates.items()):
        if key not in wanted or key in have:
            continue
        book.changed(key, now=when.created)
        if when.updated > when.created:
            book.changed(key, now=when.updated)
        if when.last_used is not None:
            book.used(key, now=when.last_used)
        taken += 1
    return taken
