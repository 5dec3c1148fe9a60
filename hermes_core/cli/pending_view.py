"""One staged write in full, for the person who approves it, and which ones they have seen.

Why: ``approve`` applies a record's whole text, so the person must be able to read all of it
first: every operation of a batch, the full new text of a skill and what it changes in the
file there now, and where the words came from. ``pending`` lists records cut to a line;
``pending ID`` prints one here, and ``approve all`` prints each it would apply. What was
printed in full is kept in the home (``pending/<noun>.seen.json``): each record's id with a
digest of the record as shown, so ``approve all --yes`` applies only writes a person was
shown, as they were shown: never one staged, or changed, after they looked.
Everything printed goes through :func:`~hermes_core.cli.escaped.say` (escaped).
"""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from hermes_core.memory.entries import TARGET_FILES
from hermes_core.memory.staged import PendingWrite
from hermes_core.skills.changes import Change, plan
from hermes_core.skills.pending import PendingSkillWrite

__all__ = ["SeenRecords", "digest", "memory_lines", "provenance_lines", "skill_lines"]

#: records kept in a seen file (the newest): far more than anyone reviews between approvals
MAX_SEEN: Final = 10_000
#: lines of a diff printed before it is cut (the rest is summarised, not hidden silently)
MAX_DIFF_LINES: Final = 2_000


def _when(seconds: object) -> str:
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        return "unknown"
    try:
        moment = datetime.datetime.fromtimestamp(float(seconds), tz=datetime.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return "unknown"
    return moment.isoformat(timespec="seconds")


def _block(title: str, text: str | None) -> list[str]:
    """``text`` in full under ``title``, each line indented so it cannot pass for ours."""
    if text is None:
        return []
    lines = text.split("\n") if text else [""]
    return [f"{title}:", *(f"  | {line}" for line in lines)]


def provenance_lines(provenance: dict[str, Any] | None) -> list[str]:
    """Where the words came from, field by field (a record from before provenance says so)."""
    if provenance is None:
        return ["provenance: none recorded (staged before provenance was kept)"]
    out = ["provenance:"]
    for key, value in provenance.items():
        if key == "sources" and isinstance(value, list):
            out.append("  sources:" + ("" if value else " none"))
            out += [f"    - {json.dumps(s, ensure_ascii=False)}" for s in value]
        elif key == "written_at":
            out.append(f"  written_at: {_when(value)}")
        else:
            out.append(f"  {key}: {value}")
    return out


def memory_lines(record: PendingWrite) -> list[str]:
    """A staged memory write in full: every field, every operation, its provenance."""
    out = [
        f"pending memory write {record.id}",
        f"action: {record.action}",
        f"file: {TARGET_FILES.get(record.target, record.target)}",
        f"user: {record.user_id or '-'}",
        f"shared block: {record.shared}",
        f"origin: {record.origin}",
        f"staged at: {_when(record.created)}",
    ]
    out += _block("entry it replaces or removes", record.selected)
    out += _block("old text given", record.old_text)
    out += _block("new content", record.content)
    for number, op in enumerate(record.operations, 1):
        out.append(f"operation {number} of {len(record.operations)}: {op.get('action')}")
        for key, value in op.items():
            if key == "action":
                continue
            if isinstance(value, str):
                out += [f"  {line}" for line in _block(key, value)]
            else:
                out.append(f"  {key}: {json.dumps(value, ensure_ascii=False, default=str)}")
    return out + provenance_lines(record.provenance)


def skill_lines(record: PendingSkillWrite, root: Path) -> list[str]:
    """A staged skill write in full: its texts, a diff of each file against the file there
    now (as approving it now would change it), and its provenance."""
    where = record.path or (f"{record.category}/{record.name}" if record.category else record.name)
    out = [
        f"pending skill write {record.id}",
        f"action: {record.action}",
        f"skill: {where}",
        f"file: {record.file_path or 'SKILL.md'}",
        f"origin: {record.origin}",
        f"staged at: {_when(record.created)}",
    ]
    out += _block("content (the full SKILL.md)", record.content)
    out += _block("file content", record.file_content)
    out += _block("old string", record.old_string)
    out += _block("new string", record.new_string)
    out += _changes(record, root)
    return out + provenance_lines(record.provenance)


def _changes(record: PendingSkillWrite, root: Path) -> list[str]:
    try:
        real = root.resolve()
        change = plan(real, record.request())
    except (OSError, ValueError) as exc:
        return [f"changes: cannot be worked out now ({exc})"]
    if not isinstance(change, Change):
        return [f"changes: it would be refused now: {change.get('error')}"]
    out = ["changes against the files there now:"]
    for path, text in change.writes:
        out += _diff(real, path, _current(path), text)
    if change.remove is not None:
        out += _diff(real, change.remove, _current(change.remove), "")
    if change.delete_dir is not None:
        out.append(f"  deletes the folder {_rel(real, change.delete_dir)} and all it holds")
    return out


def _rel(root: Path, path: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _current(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    except OSError:
        return ""


def _diff(root: Path, path: Path, before: str, after: str) -> list[str]:
    name = _rel(root, path)
    lines = list(
        difflib.unified_diff(
            before.splitlines(),
            after.splitlines(),
            f"{name} (now)" if before else "/dev/null",
            f"{name} (approved)" if after else "/dev/null",
            lineterm="",
        )
    )
    if not lines:
        return [f"  {name}: no change"]
    if len(lines) > MAX_DIFF_LINES:
        cut = len(lines) - MAX_DIFF_LINES
        lines = [*lines[:MAX_DIFF_LINES], f"... {cut} more diff lines (the full text is above)"]
    return [f"  {line}" for line in lines]


def digest(record: Any) -> str:
    """The sha256 of a staged record's canonical JSON (a dataclass): what a person was
    shown of it, so a record changed after they looked is told apart from the one they saw."""
    canonical = json.dumps(
        dataclasses.asdict(record),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


class SeenRecords:
    """The staged records a person was shown in full in this home, each as ``id: digest``
    (``pending/<noun>.seen.json``). A file from before digests were kept (a list of bare
    ids) says nothing about what was shown, so it is read as nothing seen."""

    def __init__(self, home: Path, noun: str) -> None:
        self.path = Path(home) / "pending" / f"{noun}.seen.json"

    def digests(self) -> dict[str, str]:
        """``{id: digest of the record as shown}``, oldest first."""
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(raw, dict):
            return {}
        return {k: v for k, v in raw.items() if isinstance(k, str) and isinstance(v, str)}

    def add(self, records: Iterable[Any]) -> None:
        """Note ``records`` as shown, as they are now (kept with the ones before, newest
        last, capped)."""
        fresh = {record.id: digest(record) for record in records}
        if not fresh:
            return
        kept = {k: v for k, v in self.digests().items() if k not in fresh}
        kept.update(fresh)
        newest = dict(list(kept.items())[-MAX_SEEN:])
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".seen-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(newest, out)
            os.replace(temp, self.path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
