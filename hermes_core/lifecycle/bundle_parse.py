"""A checked bundle's members as the records the stores take, every field checked.

Why before any write: a bundle edited by hand (or by a buggy tool) that still carries
matching checksums must be refused whole, not half imported; so every session, row, block,
staged record, skill file and date is typed here, and a session of another user, a parent
link out of the bundle (it would join another user's lineage), a row without its session, a
duplicate seq or a staged write of another user is an error naming the member and line.
Pure: no store is touched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Final

from hermes_core.lifecycle.bundle_export import owns_skill_write
from hermes_core.lifecycle.bundle_format import BundleError, Contents
from hermes_core.lifecycle.bundle_skill_dates import checked_skill_dates
from hermes_core.lifecycle.bundle_skills import SkillFile, checked_entries
from hermes_core.memory.dates import META_VERSION, EntryDates
from hermes_core.memory.staged import PendingWrite, record_from_json
from hermes_core.sessions.sqlite.bundle_rows import BundleRow, BundleSession
from hermes_core.sessions.store import SessionRecord
from hermes_core.skills.pending import PendingSkillWrite, record_provenance

__all__ = ["Parsed", "parse_contents"]

_ID: Final = re.compile(r"[0-9a-f]{8}")


@dataclass(frozen=True)
class Parsed:
    """What a bundle restores. ``blocks``: ``(target, scope label, text)`` with ``"user"``
    (the bundle user's own block) or ``"home"`` (the anonymous principal's)."""

    user_id: str | None
    sessions: list[BundleSession]
    blocks: list[tuple[str, str, str]]
    pending_memory: list[PendingWrite]
    pending_skills: list[PendingSkillWrite]
    skill_files: list[SkillFile]
    #: the skills' dates by the skill dates' own key
    skill_dates: dict[str, EntryDates] = field(default_factory=dict)
    #: each block's entry dates by target (read_block_dates' object; absent: none kept)
    block_dates: dict[str, dict[str, Any]] = field(default_factory=dict)


def _fail(where: str, problem: str) -> BundleError:
    return BundleError(f"the bundle's {where} {problem}; nothing was imported")


def _text(item: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> Any:
    value = item.get(key)
    if value is None and not required:
        return None
    if isinstance(value, str) and (value or not required):
        return value
    raise _fail(where, f"has no valid {key!r}")


def _number(value: Any, where: str, key: str, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(where, f"has no valid {key!r}")
    return value


def _whole(value: Any, where: str, key: str, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, f"has no valid {key!r}")
    return value


def _session(item: Mapping[str, Any], where: str, user_id: str | None) -> SessionRecord:
    if item.get("user_id") != user_id:
        raise _fail(where, "belongs to another user than the bundle's")
    counters, state = item.get("counters"), item.get("state")
    if not isinstance(counters, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in counters.values()
    ):
        raise _fail(where, "has counters that are not whole numbers")
    if not isinstance(state, dict):
        raise _fail(where, "has a state that is not an object")
    return SessionRecord(
        id=_text(item, "id", where, required=True),
        user_id=user_id,
        parent_session_id=_text(item, "parent_session_id", where),
        title=_text(item, "title", where),
        model=_text(item, "model", where),
        started_at=float(_number(item.get("started_at"), where, "started_at")),
        ended_at=_number(item.get("ended_at"), where, "ended_at", optional=True),
        end_reason=_text(item, "end_reason", where),
        counters=counters,
        state=state,
    )


def _row(item: Mapping[str, Any], where: str) -> BundleRow:
    active, compacted, message = item.get("active"), item.get("compacted"), item.get("message")
    if not isinstance(active, bool) or not isinstance(compacted, bool):
        raise _fail(where, "has flags that are not true or false")
    if not isinstance(message, dict):
        raise _fail(where, "has a message that is not an object")
    seq = _whole(item.get("seq"), where, "seq")
    pos = _whole(item.get("pos"), where, "pos", optional=True)
    if seq < 1 or (pos is not None and pos < 1) or (active != (pos is not None)):
        raise _fail(where, "has a seq or pos out of place")
    tokens = _whole(item.get("token_count"), where, "token_count", optional=True)
    return BundleRow(
        seq=seq,
        message=message,
        active=active,
        compacted=compacted,
        pos=pos,
        api_content=_text(item, "api_content", where),
        timestamp=float(_number(item.get("timestamp"), where, "timestamp")),
        token_count=tokens,
    )


def _sessions(contents: Contents, user_id: str | None) -> list[BundleSession]:
    records: dict[str, SessionRecord] = {}
    for number, item in enumerate(contents.lines("sessions.jsonl"), 1):
        record = _session(item, f"sessions.jsonl line {number}", user_id)
        if record.id in records:
            raise _fail(f"sessions.jsonl line {number}", f"repeats session {record.id!r}")
        records[record.id] = record
    rows: dict[str, list[BundleRow]] = {sid: [] for sid in records}
    for number, item in enumerate(contents.lines("messages.jsonl"), 1):
        where = f"messages.jsonl line {number}"
        owner = item.get("session_id")
        if not isinstance(owner, str) or owner not in rows:
            raise _fail(where, "names a session the bundle does not hold")
        rows[owner].append(_row(item, where))
    _check_lineage(records)
    for sid, found in rows.items():
        seqs = [r.seq for r in found]
        if len(set(seqs)) != len(seqs):
            raise _fail(f"session {sid!r}", "repeats a seq")
        positions = sorted(r.pos for r in found if r.pos is not None)
        if positions != list(range(1, len(positions) + 1)):
            raise _fail(f"session {sid!r}", "has an active view that is not numbered 1..n")
    return [BundleSession(records[sid], tuple(rows[sid])) for sid in records]


def _check_lineage(records: Mapping[str, SessionRecord]) -> None:
    """Every parent link stays inside the bundle and no chain goes round in a circle."""
    for sid, record in records.items():
        seen = {sid}
        parent = record.parent_session_id
        while parent is not None:
            if parent not in records:
                raise _fail(
                    f"session {sid!r}",
                    f"names a parent session {parent!r} the bundle does not hold",
                )
            if parent in seen:
                raise _fail(f"session {sid!r}", "has a chain of parents that goes round")
            seen.add(parent)
            parent = records[parent].parent_session_id


def _blocks(contents: Contents, user_id: str | None) -> list[tuple[str, str, str]]:
    memory = contents.members.get("memory.json")
    blocks = memory.get("blocks") if isinstance(memory, dict) else None
    if not isinstance(blocks, list):
        raise _fail("memory.json", "has no list of blocks")
    parsed: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for n, block in enumerate(blocks, 1):
        where = f"memory.json block {n}"
        target, label, text = (block.get(k) for k in ("target", "scope", "text"))
        if target not in ("memory", "user") or target in seen:
            raise _fail(where, "has no valid target (or repeats one)")
        if label not in ("user", "home") or (label == "home") != (user_id is None):
            raise _fail(where, "has a scope that does not fit the bundle's user")
        dates = block.get("dates", {})
        if not isinstance(dates, dict):
            raise _fail(where, "has dates that are not an object")
        if dates and (dates.get("v") != META_VERSION or not isinstance(dates.get("entries"), list)):
            raise _fail(where, f"has dates of another format (v: {META_VERSION} expected)")
        if text is not None and not isinstance(text, str):
            raise _fail(where, "has a text that is not a string")
        seen.add(target)
        if text:
            parsed.append((target, label, text))
    return parsed


def _pending_memory(contents: Contents, user_id: str | None) -> list[PendingWrite]:
    records = []
    for number, item in enumerate(contents.lines("pending_memory.jsonl"), 1):
        where = f"pending_memory.jsonl line {number}"
        try:
            record = record_from_json(json.dumps(item), str(item.get("id")))
        except KeyError as exc:
            raise _fail(where, f"is not a staged write ({exc.args[0]})") from None
        if record.user_id != user_id:
            raise _fail(where, "belongs to another user than the bundle's")
        records.append(record)
    return records


def _pending_skills(contents: Contents, user_id: str | None) -> list[PendingSkillWrite]:
    names = {f.name for f in fields(PendingSkillWrite)}
    records = []
    for number, item in enumerate(contents.lines("pending_skills.jsonl"), 1):
        where = f"pending_skills.jsonl line {number}"
        if set(item) - names or not _ID.fullmatch(str(item.get("id"))):
            raise _fail(where, "is not a staged skill write")
        try:
            record = PendingSkillWrite(**item)
        except TypeError as exc:
            raise _fail(where, f"is not a staged skill write ({exc})") from None
        if record.provenance is not None and record_provenance(record) is None:
            raise _fail(where, "has a provenance that cannot be read")
        if not owns_skill_write(record, user_id):
            raise _fail(where, "belongs to another user than the bundle's")
        records.append(record)
    return records


def parse_contents(contents: Contents) -> Parsed:
    """Every member of a checked bundle, typed; :class:`BundleError` at the first problem."""
    user = contents.manifest.get("user")
    user_id = user.get("id") if isinstance(user, dict) else ""
    if not (user_id is None or (isinstance(user_id, str) and user_id)):
        raise _fail("manifest", "names no user (an id, or null for the anonymous principal)")
    return Parsed(
        user_id=user_id,
        sessions=_sessions(contents, user_id),
        blocks=_blocks(contents, user_id),
        pending_memory=_pending_memory(contents, user_id),
        pending_skills=_pending_skills(contents, user_id),
        skill_files=checked_entries(contents.lines("skills.jsonl")),
        skill_dates=checked_skill_dates(contents.members.get("skill_dates.json")),
        block_dates=_block_dates(contents),
    )


def _block_dates(contents: Contents) -> dict[str, dict[str, Any]]:
    """Each block's dates by target, where the bundle carries any (checked by _blocks)."""
    memory = contents.members.get("memory.json")
    blocks = memory.get("blocks") if isinstance(memory, dict) else []
    return {
        str(block["target"]): dict(block["dates"])
        for block in blocks or []
        if isinstance(block, dict) and block.get("text") and block.get("dates")
    }
