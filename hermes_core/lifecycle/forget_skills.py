"""A person's staged skill writes (``pending/skills/<id>.json``), for forget.

Why apart from the memory records: a skill write is the home's, not one user's, so its
record has no top-level ``user_id``; the user whose session's words it holds is named in
its provenance. The rule is the audit lines' (:func:`.forget_files.owns_line`): a named user
owns a record whose provenance names them; the anonymous principal owns one whose provenance
names no user and that no person at the command line made (``origin: cli`` or an
``operator`` source: the operator's own write). A record without provenance (written before
it was kept) or one that cannot be read cannot be told whose it is: it is kept and
reported, never guessed at.

The skills audit lines themselves are dropped with every other audit line
(:func:`.forget_files.forget_audit_lines`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_core.lifecycle.forget_files import shred
from hermes_core.skills.home import pending_directory
from hermes_core.skills.pending import PendingSkillWrites

__all__ = ["forget_staged_skill_writes"]

_UNKNOWN: Any = object()
_OPERATOR: Any = object()


def _owner(data: Any) -> Any:
    """The record's user (``None``: the anonymous principal), ``"operator"`` marker, or
    ``_UNKNOWN`` when no provenance can be read."""
    if not isinstance(data, dict):
        return _UNKNOWN
    provenance = data.get("provenance")
    if not isinstance(provenance, dict):
        return _UNKNOWN
    user = provenance.get("user_id")
    if user is not None:
        return user if isinstance(user, str) else _UNKNOWN
    if data.get("origin") == "cli" or provenance.get("source") == "operator":
        return _OPERATOR
    return None


def _raw(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return _UNKNOWN


def forget_staged_skill_writes(home: Path, user_id: str | None) -> tuple[dict[str, int], list[str]]:
    """Delete ``user_id``'s staged skill writes; the count, and what was kept because whose
    it is cannot be told."""
    pending = PendingSkillWrites(pending_directory(home))
    if not pending.directory.is_dir():
        return {"staged skill writes": 0}, []
    removed = 0
    unknown: list[str] = []
    for path in sorted(pending.directory.glob("*.json")):
        try:
            record = pending.get(path.stem)
        except KeyError:
            owner = _owner(_raw(path))  # edited by hand: its provenance may still say
        else:
            owner = _owner({"origin": record.origin, "provenance": record.provenance})
        if owner is _UNKNOWN:
            unknown.append(path.stem)
        elif owner == user_id and owner is not _OPERATOR:
            shred(path)
            removed += 1
    problems = []
    if unknown:
        problems.append(
            f"{pending.directory}: {len(unknown)} staged skill write(s) ({', '.join(unknown)}) "
            "name no user that can be read (written before provenance was kept, or edited), so "
            "whose they are cannot be told; they were kept: read them with `hermes-context "
            "skills pending` and approve or reject them"
        )
    return {"staged skill writes": removed}, problems
