"""Staged skill writes: ``skills.write_approval`` and background review's proposals.

Why, as for memory: a skill is read into later sessions, so an operator may want to read
what an agent saves before it lands (``stage``), or forbid writes (``block``). Everything
background review writes (a new skill too) is a proposal for a person. A record keeps the
write as asked plus the digest of the file it was judged against; approving it re-validates
and re-scans it and refuses when that file changed meanwhile.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any, Final

from hermes_core.memory.files import atomic_write
from hermes_core.memory.records import RecordDirectory
from hermes_core.provenance import Provenance
from hermes_core.skills.changes import WRITE_ACTIONS, SkillRequest
from hermes_core.skills.files import SkillError, read_bytes

__all__ = [
    "APPROVAL_MODES",
    "ORIGINS",
    "RECORD_FORMAT",
    "PendingSkillWrite",
    "PendingSkillWrites",
    "must_stage",
    "record_provenance",
    "request_detail",
    "request_texts",
    "stage_reason",
]

APPROVAL_MODES: Final = ("allow", "stage", "block")
ORIGINS: Final = ("assistant_tool", "background_review", "cli")
#: 1: a record from before provenance was kept (no ``format`` field); 2: with ``provenance``
RECORD_FORMAT: Final = 2
_MAX_RECORD_BYTES: Final = 8 * 1024 * 1024
_TEXTS: Final = (
    "category",
    "file_path",
    "content",
    "file_content",
    "old_string",
    "new_string",
    "base",
    "path",
)


def must_stage(mode: str, origin: str, action: str, *, new_file: bool) -> bool:
    """Whether a write that would succeed is staged instead of applied: every write under
    ``stage``, and every write of background review under any mode (a procedure rarely
    quotes the user, and the review writes what nobody asked for: issue 26)."""
    del action, new_file  # kept in the signature: what a write is may matter to a policy
    return mode == "stage" or origin == "background_review"


@dataclass
class PendingSkillWrite:
    """One staged write, as stored in ``pending/skills/<id>.json``."""

    id: str
    action: str
    name: str
    origin: str
    created: float
    category: str | None = None
    file_path: str | None = None
    content: str | None = None
    file_content: str | None = None
    old_string: str | None = None
    new_string: str | None = None
    base: str | None = None  # digest of the file judged when staged (None: a new file)
    path: str | None = None  # the skill's folder relative to the skills root, for display
    #: where the write's words came from (shown, never trusted: approval judges it again)
    provenance: dict[str, Any] | None = None
    format: int = 1

    def request(self) -> SkillRequest:
        return SkillRequest(
            self.action,
            self.name,
            content=self.content,
            category=self.category,
            file_path=self.file_path,
            file_content=self.file_content,
            old_string=self.old_string,
            new_string=self.new_string,
        )

    def summary(self) -> str:
        """A short description of what it would do (for ``skills pending``)."""
        target = self.file_path or ("SKILL.md" if self.action in ("edit", "patch") else "")
        where = self.path or (f"{self.category}/{self.name}" if self.category else self.name)
        return f"{self.action} {where}" + (f" {target}" if target else "")


def _problem(record: PendingSkillWrite, pending_id: str) -> str | None:
    if record.id != pending_id:
        return "its id does not match its file name"
    if record.action not in WRITE_ACTIONS or record.origin not in ORIGINS:
        return "unknown action or origin"
    if not isinstance(record.name, str) or not record.name:
        return "its skill name is not a string"
    if not isinstance(record.created, (int, float)) or isinstance(record.created, bool):
        return "its time is not a number"
    if not all(getattr(record, f) is None or isinstance(getattr(record, f), str) for f in _TEXTS):
        return "a text field is not a string"
    if record.format not in (1, RECORD_FORMAT) or isinstance(record.format, bool):
        return f"its format is not 1 or {RECORD_FORMAT} (written by a newer version?)"
    if record.provenance is not None:
        try:
            Provenance.from_json(record.provenance)
        except ValueError as exc:
            return str(exc)
    return None


def record_provenance(record: PendingSkillWrite) -> Provenance | None:
    """The record's provenance; None for a record from before it was kept."""
    try:
        return None if record.provenance is None else Provenance.from_json(record.provenance)
    except ValueError:
        return None


def request_texts(request: SkillRequest) -> list[str]:
    """The words a write would add to the library (its name too: it reaches the index)."""
    texts = (request.name, request.content, request.file_content, request.new_string)
    return [t for t in texts if isinstance(t, str)]


def request_detail(request: SkillRequest) -> dict[str, Any]:
    return {"action": request.action, "name": request.name}


def stage_reason(mode: str, provenance: Provenance | None, *, untrusted: bool) -> str:
    """Why a write was staged, for the model to tell the user."""
    if untrusted and provenance is not None:
        return (
            f"its words came from {provenance.label()}, not from the user "
            "(memory.untrusted_writes: stage)"
        )
    if mode == "stage":
        return "skills.write_approval: stage"
    return "background review proposes changes for a person to approve"


class PendingSkillWrites(RecordDirectory[PendingSkillWrite]):
    """The staged skill writes of one home (``$HERMES_HOME/pending/skills``)."""

    command = "skills"

    def new_record(
        self,
        request: SkillRequest,
        origin: str,
        base: str | None,
        path: str | None,
        provenance: Provenance | None = None,
    ) -> PendingSkillWrite:
        """A record of ``request`` (not saved yet) judged against the file with ``base``."""
        return PendingSkillWrite(
            id=self.new_id(),
            action=request.action,
            name=request.name,
            origin=origin,
            created=self.clock(),
            category=request.category,
            file_path=request.file_path,
            content=request.content,
            file_content=request.file_content,
            old_string=request.old_string,
            new_string=request.new_string,
            base=base,
            path=path,
            provenance=None if provenance is None else provenance.to_json(),
            format=RECORD_FORMAT,
        )

    def add(self, record: PendingSkillWrite) -> None:
        atomic_write(self.path(record.id), json.dumps(asdict(record), ensure_ascii=False))

    def get(self, pending_id: str) -> PendingSkillWrite:
        """The record; KeyError (saying what to do) when it is missing or unreadable."""
        path = self.path(pending_id)
        try:
            data = read_bytes(path, _MAX_RECORD_BYTES)
            if data is None:
                raise KeyError(
                    f"no pending skill write {pending_id} (see `hermes-context skills pending`)"
                )
            if len(data) > _MAX_RECORD_BYTES:
                raise ValueError("it is too large")
            raw = json.loads(data.decode("utf-8"))
            if not isinstance(raw, dict) or set(raw) - {f.name for f in fields(PendingSkillWrite)}:
                raise ValueError("unexpected fields")
            record = PendingSkillWrite(**raw)
            if problem := _problem(record, pending_id):
                raise ValueError(problem)
            return record
        except (SkillError, ValueError, TypeError, RecursionError) as exc:
            raise KeyError(
                f"pending skill write {pending_id} cannot be read ({exc}); reject it"
            ) from exc

    def delete(self, pending_id: str) -> bool:
        path = self.path(pending_id)
        existed = path.exists()
        path.unlink(missing_ok=True)
        return existed
