"""The files of one person in a home: memory files and copies, staged records, audit lines.

Why each step is as it is:

* A user's ``USER.md`` and per-user ``MEMORY.md`` live in ``memories/users/<safe id>/``
  with their ``.bak.*`` copies; the whole directory goes. The anonymous principal's
  ``USER.md`` is ``memories/USER.md`` (and its copies). The shared ``MEMORY.md`` is never
  deleted here (see :func:`shared_entries_by`).
* A file is overwritten with zeros before it is unlinked, so its bytes do not linger in
  blocks the file system frees (best effort: a copy-on-write file system or an SSD may keep
  the old blocks; see docs/forget.md).
* Audit lines are JSON lines with a ``user_id``: the person's are dropped by writing the
  kept lines to a temp file and renaming it over the log, under the log's own lock. A line
  that cannot be read is kept (it cannot be told whose it is) and counted. Whose a line is:
  see :func:`owns_line`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hermes_core.memory.entries import TARGET_FILES, parse_entries
from hermes_core.memory.file_documents import memory_directory, pending_directory
from hermes_core.memory.layout import safe_user_id
from hermes_core.memory.sidecar import SIDECAR_SUFFIX
from hermes_core.memory.staged import record_from_json
from hermes_core.provenance.audit_log import audit_directory, entry_sha256, parse_line, preview

__all__ = [
    "AUDIT_LOCK_TIMEOUT",
    "forget_audit_lines",
    "forget_memory_files",
    "forget_staged_records",
    "owns_line",
    "shared_entries_by",
    "shred",
    "written_shared",
]

AUDIT_LOCK_TIMEOUT = 30.0
_LANDED = ("landed", "approved")


def shred(path: Path) -> None:
    """Overwrite a regular file with zeros, then unlink it (a link is only unlinked)."""
    if not path.is_symlink() and path.is_file():
        size = path.stat().st_size
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, b"\0" * size)
            os.fsync(fd)
        finally:
            os.close(fd)
    path.unlink()


def _remove_tree(root: Path) -> int:
    """Shred every file under ``root`` (links not followed) and remove it; files removed."""
    if root.is_symlink() or root.is_file():
        shred(root)
        return 1
    removed = 0
    for directory, folders, files in os.walk(root, topdown=False, followlinks=False):
        for name in files:
            shred(Path(directory, name))
            removed += 1
        for name in folders:
            path = Path(directory, name)
            if path.is_symlink():
                path.unlink()
            else:
                path.rmdir()
    root.rmdir()
    return removed


def forget_memory_files(home: Path, user_id: str | None) -> dict[str, int]:
    """Delete the person's memory files, their copies and their dates sidecars;
    ``{"memory files": n}``."""
    directory = memory_directory(home)
    if user_id is not None:
        own = directory / "users" / safe_user_id(user_id)
        if not own.exists() and not own.is_symlink():
            return {"memory files": 0}
        return {"memory files": _remove_tree(own)}
    removed = 0
    name = TARGET_FILES["user"]
    for path in sorted(directory.glob(f"{name}*")):
        dated = path.name == name + SIDECAR_SUFFIX  # the entries' dates (their sha256s)
        if path.name == name or dated or path.name.startswith(f"{name}.bak."):
            shred(path)
            removed += 1
    return {"memory files": removed}


def forget_staged_records(home: Path, user_id: str | None) -> dict[str, int]:
    """Delete the person's staged memory writes (``pending/memory/<id>.json``)."""
    directory = pending_directory(home)
    removed = 0
    if not directory.is_dir():
        return {"staged writes": 0}
    for path in sorted(directory.glob("*.json")):
        try:
            record = record_from_json(path.read_text(encoding="utf-8"), path.stem)
        except (KeyError, OSError, UnicodeDecodeError):
            owner = _raw_user(path)
            if owner is _UNKNOWN or owner != user_id:
                continue
        else:
            if record.user_id != user_id:
                continue
        shred(path)
        removed += 1
    return {"staged writes": removed}


_UNKNOWN: Any = object()


def _raw_user(path: Path) -> Any:
    """The ``user_id`` of a record that is not a valid record any more (edited), if any."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return _UNKNOWN
    return data.get("user_id", _UNKNOWN) if isinstance(data, dict) else _UNKNOWN


def _audit_files(home: Path) -> list[Path]:
    directory = audit_directory(home)
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.name.endswith((".jsonl", ".jsonl.1")))


def _person_at_cli(actor: object) -> bool:
    return isinstance(actor, str) and actor.startswith("cli:")


def owns_line(line: dict[str, Any], user_id: str | None) -> bool:
    """Whether an audit line is ``user_id``'s.

    A named user owns every line that names them, at the top level or in its provenance
    (a skills line from before the top-level ``user_id`` was written names the user only
    there, and holds their words all the same). The anonymous principal (``None``) owns a
    line that names no user anywhere, unless a person at the command line wrote it about
    something other than the anonymous principal's own ``USER.md``: the operator's skill
    writes and approvals and their edits of the shared ``MEMORY.md`` are the home's.
    """
    record = line.get("provenance")
    inner = record.get("user_id") if isinstance(record, dict) else None
    if user_id is not None:
        return line.get("user_id") == user_id or inner == user_id
    if line.get("user_id") is not None or inner is not None:
        return False
    own_profile = line.get("store") == "memory" and line.get("target") == "user"
    return own_profile or not _person_at_cli(line.get("actor"))


def written_shared(lines: Iterable[dict[str, Any]], user_id: str | None) -> set[str]:
    """The sha256 of every shared ``MEMORY.md`` entry the person's audit lines say they
    wrote (landed or approved)."""
    shas: set[str] = set()
    for line in lines:
        if not owns_line(line, user_id) or line.get("event") not in _LANDED:
            continue
        if line.get("store") != "memory" or line.get("target") not in (None, "memory"):
            continue
        if line.get("shared") is False:
            continue
        shas.update(s for s in [line.get("entry_sha256")] if isinstance(s, str))
        shas.update(s for s in line.get("entries_sha256") or [] if isinstance(s, str))
    return shas


def audit_lines(home: Path) -> list[dict[str, Any]]:
    """Every readable line of the home's audit files."""
    lines: list[dict[str, Any]] = []
    for path in _audit_files(home):
        for raw in path.read_bytes().splitlines():
            parsed = parse_line(raw)
            if isinstance(parsed, dict):
                lines.append(parsed)
    return lines


def shared_entries_by(shared_text: str | None, shas: set[str]) -> list[dict[str, str]]:
    """The entries of the shared ``MEMORY.md`` whose sha256 is in ``shas``, each as its
    sha256 and a short, redacted preview: reported, never deleted."""
    if not shared_text or not shas:
        return []
    found = []
    for entry in parse_entries(shared_text):
        sha = entry_sha256(entry)
        if sha in shas:
            found.append({"entry_sha256": sha, "preview": preview(entry) or ""})
    return found


def forget_audit_lines(home: Path, user_id: str | None) -> tuple[dict[str, int], list[str]]:
    """Drop the person's lines from every audit file; the count, and what was kept that
    could not be read (it cannot be told whose it is)."""
    from filelock import FileLock

    removed = 0
    problems: list[str] = []
    for path in _audit_files(home):
        lock = path.with_name(path.name.removesuffix(".1") + ".lock")
        with FileLock(str(lock), timeout=AUDIT_LOCK_TIMEOUT, mode=0o600):
            raw_lines = path.read_bytes().splitlines(keepends=True)
            kept: list[bytes] = []
            unread = 0
            for raw in raw_lines:
                parsed = parse_line(raw)
                if isinstance(parsed, dict) and owns_line(parsed, user_id):
                    removed += 1
                    continue
                if isinstance(parsed, str) and raw.strip():
                    unread += 1
                kept.append(raw)
            if len(kept) != len(raw_lines):
                _replace(path, b"".join(kept))
            if unread:
                problems.append(
                    f"{path}: {unread} line(s) could not be read and were kept (whose they "
                    "are cannot be told); check them by hand"
                )
    return {"audit lines": removed}, problems


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` to a temp file beside ``path`` and rename it over ``path``; then zero
    the old file's bytes through a descriptor opened before the rename (a crash at any
    point leaves a whole log: the old one or the new one)."""
    tmp = path.with_name(f".{path.name}.forget")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    old = os.open(path, os.O_WRONLY)
    try:
        size = os.fstat(old).st_size
        os.replace(tmp, path)
        os.write(old, b"\0" * size)
        os.fsync(old)
    finally:
        os.close(old)
