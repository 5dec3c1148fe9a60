"""The audit log: one JSON line per decision about a memory or skill write, kept in the home.

Why: memory files are plain text with no metadata (hermes-agent reads them), so "who wrote
this entry, when, and where did its words come from" has to live beside them. Each writer
holds an :class:`AuditRecorder` bound to its own home (two homes in one process never log to
each other, unlike the process-wide sinks of :mod:`hermes_core.provenance.audit`), and each
line carries the entry's sha256 so ``memory audit --entries`` can join it to the current
entries. Lines are appended with one ``write()`` on an ``O_APPEND`` descriptor under a file
lock, mode 0600, and the file is rotated to ``.1`` by size. A failing log never fails a write.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import logging
import math
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

from hermes_core.provenance.record import Provenance
from hermes_core.redact import redact

__all__ = [
    "ALL_EVENTS",
    "AuditLog",
    "AuditRecorder",
    "FileAuditLog",
    "actor_of",
    "audit_directory",
    "cli_actor",
    "entry_sha256",
]

log = logging.getLogger("hermes_context.provenance")

VERSION: Final = 1
PREVIEW_CHARS: Final = 200
ALL_EVENTS: Final = ("landed", "staged", "refused", "approved", "rejected", "removed", "reset")
_LOCK_TIMEOUT: Final = 30.0


def audit_directory(home: Path) -> Path:
    return Path(home) / "audit"


def entry_sha256(text: str) -> str:
    """The key that joins an audit line to a current entry (the entry as stored: stripped)."""
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()


def cli_actor() -> str:
    """``cli:<os user>``: a person at the command line."""
    try:
        name = getpass.getuser()
    except (OSError, KeyError):  # no login name (a container without a passwd entry)
        name = str(os.getuid()) if hasattr(os, "getuid") else "unknown"
    return f"cli:{name}"


def actor_of(origin: str) -> str:
    """Who made a write of ``origin``: the model, the background review, or a person."""
    return {"assistant_tool": "model", "background_review": "review"}.get(origin, cli_actor())


def preview(text: str | None) -> str | None:
    """At most PREVIEW_CHARS characters of ``text``, secrets redacted first."""
    if text is None:
        return None
    shown = redact(text.strip())
    return shown if len(shown) <= PREVIEW_CHARS else shown[: PREVIEW_CHARS - 1] + "…"


class AuditLog(Protocol):
    """Where audit lines go: the home's files, or a backend's table (PostgreSQL)."""

    def append(self, line: Mapping[str, Any]) -> None: ...

    def read(self) -> tuple[list[dict[str, Any]], list[str]]:
        """Every line, oldest first, and what could not be read (reported, skipped)."""
        ...


class FileAuditLog:
    """``<directory>/<store>.jsonl`` (and ``.1`` once rotated)."""

    def __init__(self, directory: Path, store: str, *, max_bytes: int = 5_000_000) -> None:
        if max_bytes < 1:
            raise ValueError(f"audit max_bytes must be at least 1, got {max_bytes}")
        self.directory = Path(directory)
        self.path = self.directory / f"{store}.jsonl"
        self.max_bytes = max_bytes

    def append(self, line: Mapping[str, Any]) -> None:
        from filelock import FileLock

        data = (json.dumps(line, ensure_ascii=True, sort_keys=True) + "\n").encode("ascii")
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        with FileLock(str(self.path) + ".lock", timeout=_LOCK_TIMEOUT, mode=0o600):
            try:
                size = self.path.stat().st_size
            except FileNotFoundError:
                size = 0
            if size and size + len(data) > self.max_bytes:
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.fchmod(fd, 0o600)
                os.write(fd, data)
            finally:
                os.close(fd)

    def read(self) -> tuple[list[dict[str, Any]], list[str]]:
        lines: list[dict[str, Any]] = []
        problems: list[str] = []
        for path in (self.path.with_name(self.path.name + ".1"), self.path):
            try:
                raw = path.read_bytes()
            except FileNotFoundError:
                continue
            except OSError as exc:
                problems.append(f"{path}: cannot be read ({exc.strerror or exc}); skipped")
                continue
            for number, text in enumerate(raw.splitlines(), start=1):
                parsed = parse_line(text)
                if isinstance(parsed, str):
                    problems.append(f"{path} line {number}: {parsed}; skipped")
                else:
                    lines.append(parsed)
        return lines, problems


#: The fields a reader uses, each with the types a line may give it (``None``: absent or
#: null). A line edited by hand into anything else is reported and skipped, so no command
#: meets a type it does not expect.
_TEXT: Final = (str, type(None))
_FIELDS: Final[dict[str, tuple[type, ...]]] = {
    "store": _TEXT,
    "actor": _TEXT,
    "target": _TEXT,
    "name": _TEXT,
    "reason": _TEXT,
    "content": _TEXT,
    "origin": _TEXT,
    "source": _TEXT,
    "pending_id": _TEXT,
    "user_id": _TEXT,
    "session_id": _TEXT,
    "entry_sha256": _TEXT,
    "approved_by": _TEXT,
    "rejected_by": _TEXT,
    "shared": (bool, type(None)),
    "entries_sha256": (list, type(None)),
    "provenance": (dict, type(None)),
}


def parse_line(raw: bytes | str) -> dict[str, Any] | str:
    """One stored line, or what is wrong with it."""
    if not raw.strip():
        return "empty line"
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return "not JSON"
    if not isinstance(data, dict):
        return "not a JSON object"
    version = data.get("v")
    if isinstance(version, bool) or version != VERSION:
        return "not an audit line (v missing or unknown)"
    if not isinstance(data.get("event"), str) or data.get("event") not in ALL_EVENTS:
        return "not an audit line (event missing or unknown)"
    at = data.get("at")
    if not isinstance(at, (int, float)) or isinstance(at, bool) or not math.isfinite(at):
        return "its time (at) is not a number"
    return _problem(data) or data


def _problem(data: dict[str, Any]) -> str | None:
    """What is wrong with the fields a reader uses (see ``_FIELDS``), or None."""
    for name, types in _FIELDS.items():
        value = data.get(name)
        if not isinstance(value, types):
            return f"its field {name} is a {type(value).__name__}, not what an audit line holds"
    shas = data.get("entries_sha256")
    if shas is not None and not all(isinstance(sha, str) for sha in shas):
        return "its field entries_sha256 is not a list of strings"
    record = data.get("provenance")
    if record is not None:
        if not isinstance(record.get("source"), _TEXT):
            return "its provenance source is not a string"
        sources = record.get("sources")
        if sources is not None and (
            not isinstance(sources, list) or not all(isinstance(s, dict) for s in sources)
        ):
            return "its provenance sources are not a list of objects"
    return None


class AuditRecorder:
    """Turns one writer's decisions into audit lines for one home's log.

    ``shared(target)`` says whether a target is seen by every user (MEMORY.md of a shared
    home), so ``memory audit --user`` shows a user their own and shared lines. A recorder
    bound to no user with ``user_from_provenance`` (the skills library: the home's, not one
    user's) names on each line the user whose session's words it records, so ``forget`` and
    ``audit --user`` find it; a line without provenance then names none."""

    def __init__(
        self,
        target: AuditLog,
        *,
        store: str,
        user_id: str | None = None,
        clock: Any = time.time,
        user_from_provenance: bool = False,
    ) -> None:
        self.log = target
        self.store = store
        self.user_id = user_id
        self.clock = clock
        self.user_from_provenance = user_from_provenance

    def record(
        self,
        event: str,
        *,
        actor: str,
        provenance: Provenance | None = None,
        pending_id: str | None = None,
        contents: Sequence[str] = (),
        shared: bool | None = None,
        user_id: str | None = None,
        **detail: Any,
    ) -> None:
        """Append one line; a failure is logged, never raised (it must not fail a write)."""
        try:
            self.log.append(
                self.line(
                    event,
                    actor=actor,
                    provenance=provenance,
                    pending_id=pending_id,
                    contents=contents,
                    shared=shared,
                    user_id=user_id,
                    detail=detail,
                )
            )
        except Exception:
            log.warning("could not append to the %s audit log", self.store, exc_info=True)

    def line(
        self,
        event: str,
        *,
        actor: str,
        provenance: Provenance | None,
        pending_id: str | None,
        contents: Sequence[str],
        shared: bool | None,
        user_id: str | None,
        detail: Mapping[str, Any],
    ) -> dict[str, Any]:
        texts = [c for c in contents if isinstance(c, str) and c.strip()]
        who = user_id if user_id is not None else self.user_id
        if who is None and self.user_from_provenance and provenance is not None:
            who = provenance.user_id
        plain = {k: v for k, v in detail.items() if isinstance(v, (str, int, float, bool))}
        return {
            "v": VERSION,
            "at": round(float(self.clock()), 3),
            "event": event,
            "store": self.store,
            **plain,
            "entry_sha256": entry_sha256(texts[0]) if len(texts) == 1 else None,
            "entries_sha256": [entry_sha256(t) for t in texts] if len(texts) > 1 else None,
            "content": preview(" § ".join(texts)) if texts else None,
            "origin": detail.get("origin"),
            "provenance": provenance.to_json() if provenance is not None else None,
            "source": provenance.label() if provenance is not None else None,
            "pending_id": pending_id,
            "user_id": who,
            "shared": shared,
            "session_id": provenance.session_id if provenance is not None else None,
            "actor": actor,
        }
