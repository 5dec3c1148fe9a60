"""Staged memory writes: the record, its checks, and the folder that keeps them as files.

Why apart from :mod:`~hermes_core.memory.approval`: a record is data that any storage keeps
(a JSON file per write, a PostgreSQL row), and every one of them must refuse a record that was
edited into something else the same way. The policy that makes and applies records stays in
approval.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from hermes_core.errors import MemoryStoreError
from hermes_core.memory.entries import TARGET_FILES
from hermes_core.memory.files import atomic_write, locked, read_text
from hermes_core.memory.records import RecordDirectory
from hermes_core.provenance import Provenance

__all__ = [
    "ORIGINS",
    "RECORD_FORMAT",
    "STAGED_ACTIONS",
    "PendingWrite",
    "PendingWrites",
    "record_from_json",
    "record_json",
]

ORIGINS: Final = ("assistant_tool", "background_review", "cli")
STAGED_ACTIONS: Final = ("add", "replace", "remove", "batch")
#: 1: a record from before provenance was kept (no ``format`` field); 2: with ``provenance``
RECORD_FORMAT: Final = 2


@dataclass
class PendingWrite:
    """One staged write, as stored in ``pending/memory/<id>.json`` (or a row)."""

    id: str
    action: str  # add | replace | remove | batch
    target: str
    origin: str
    created: float
    content: str | None = None
    old_text: str | None = None
    selected: str | None = None  # the exact entry a replace/remove picked when staged
    operations: list[dict[str, Any]] = field(default_factory=list)  # batch: with "selected"
    user_id: str | None = None
    #: whether the target was the block every user of the home shares when it was staged
    #: (None: a record from before this was kept); approval writes where staging meant
    shared: bool | None = None
    #: where the write's words came from (:class:`~hermes_core.provenance.Provenance` as
    #: JSON); shown to the person who approves, never trusted: approval judges the write again
    provenance: dict[str, Any] | None = None
    format: int = 1

    def origin_of_words(self) -> Provenance | None:
        """The record's provenance, or None for a record from before it was kept."""
        return None if self.provenance is None else Provenance.from_json(self.provenance)


def _record_problem(record: PendingWrite, pending_id: str) -> str | None:
    """What is wrong with a record read back (it may have been edited), or None."""
    if record.id != pending_id:
        return "its id does not match its file name"
    if record.action not in STAGED_ACTIONS or record.target not in TARGET_FILES:
        return "unknown action or target"
    if not isinstance(record.created, (int, float)) or isinstance(record.created, bool):
        return "its time is not a number"
    texts = (record.content, record.old_text, record.selected, record.user_id)
    if not all(t is None or isinstance(t, str) for t in texts) or record.user_id == "":
        return "a text field is not a string"
    if record.shared is not None and not isinstance(record.shared, bool):
        return "its scope is not true or false"
    if record.origin not in ORIGINS:
        return "unknown origin"
    ops = record.operations
    if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
        return "its operations are not a list of objects"
    if (record.action == "batch") != bool(ops):
        return "its operations do not match its action"
    if record.format not in (1, RECORD_FORMAT) or isinstance(record.format, bool):
        return f"its format is not 1 or {RECORD_FORMAT} (written by a newer version?)"
    if record.provenance is not None:
        try:
            Provenance.from_json(record.provenance)
        except ValueError as exc:
            return str(exc)
    return None


def record_json(record: PendingWrite, *, ascii_only: bool = False) -> str:
    """The record as stored (``ascii_only``: every non-ASCII character escaped, for storage
    that cannot hold every code point, such as a lone surrogate)."""
    return json.dumps(asdict(record), ensure_ascii=ascii_only, indent=1)


def record_from_json(text: str | None, pending_id: str) -> PendingWrite:
    """The record stored as ``text``; KeyError (with what to do) when it is missing, not a
    record, or edited into something that is not one."""
    if text is None:
        raise KeyError(f"no pending write {pending_id} (see `hermes-context memory pending`)")
    try:
        record = PendingWrite(**json.loads(text))
        if problem := _record_problem(record, pending_id):
            raise ValueError(problem)
        return record
    except (ValueError, TypeError, RecursionError) as exc:
        raise KeyError(f"pending write {pending_id} cannot be read ({exc}); reject it") from exc


class PendingWrites(RecordDirectory[PendingWrite]):
    """The staged records of one home as files (``$HERMES_HOME/pending/memory``)."""

    command = "memory"

    def add(self, record: PendingWrite) -> None:
        atomic_write(self.path(record.id), record_json(record))

    def get(self, pending_id: str) -> PendingWrite:
        """The record; KeyError (with what to do) when it is missing or unreadable."""
        path = self.path(pending_id)
        try:
            text = read_text(path)  # never through a symbolic link
        except MemoryStoreError as exc:
            raise KeyError(f"pending write {pending_id} cannot be read ({exc}); reject it") from exc
        return record_from_json(text, pending_id)

    def held(self) -> contextlib.AbstractContextManager[None]:
        """The folder's lock, held by an approval while it checks, applies and consumes a
        record, and by a rejection while it deletes one: of the two, exactly one succeeds."""
        return locked(self.directory / "pending")

    def delete(self, pending_id: str) -> bool:
        """Drop the record (under :meth:`held`); whether there was one."""
        path = self.path(pending_id)
        if not path.parent.is_dir():
            return False
        with self.held():
            return self.discard(pending_id)

    def discard(self, pending_id: str) -> bool:
        """Drop the record; call with :meth:`held` held."""
        path = self.path(pending_id)
        existed = path.exists()
        path.unlink(missing_ok=True)
        return existed
