"""Write approval: ``allow`` writes at once, ``stage`` queues writes for a person, ``block``
refuses them.

Why: memory outlives the conversation that wrote it, so an operator may want to read what an
agent saves before it reaches every later prompt. A staged write records the exact entry a
replace or remove selected, so approving it later cannot silently hit a different entry; it is
re-validated (scan, limits) when approved. Background review may add on its own, but what it
proposes to replace or remove is always staged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Final, Literal

from hermes_core.errors import MemoryStoreError
from hermes_core.memory.entries import TARGET_FILES
from hermes_core.memory.files import atomic_write, read_text
from hermes_core.memory.records import RecordDirectory
from hermes_core.memory.store import MemoryStore, Result

__all__ = [
    "ORIGINS",
    "MemoryWriter",
    "PendingWrite",
    "PendingWrites",
    "WriteRequest",
    "apply_request",
]

Origin = Literal["assistant_tool", "background_review", "cli"]
ORIGINS: Final = ("assistant_tool", "background_review", "cli")
_ACTIONS: Final = ("add", "replace", "remove", "batch")


@dataclass
class PendingWrite:
    """One staged write, as stored in ``pending/memory/<id>.json``."""

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


def _record_problem(record: PendingWrite, pending_id: str) -> str | None:
    """What is wrong with a record read from disk (it may have been edited), or None."""
    if record.id != pending_id:
        return "its id does not match its file name"
    if record.action not in _ACTIONS or record.target not in TARGET_FILES:
        return "unknown action or target"
    if not isinstance(record.created, (int, float)) or isinstance(record.created, bool):
        return "its time is not a number"
    texts = (record.content, record.old_text, record.selected, record.user_id)
    if not all(t is None or isinstance(t, str) for t in texts) or record.user_id == "":
        return "a text field is not a string"
    if record.origin not in ORIGINS:
        return "unknown origin"
    ops = record.operations
    if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
        return "its operations are not a list of objects"
    if (record.action == "batch") != bool(ops):
        return "its operations do not match its action"
    return None


class PendingWrites(RecordDirectory[PendingWrite]):
    """The staged records of one home (``$HERMES_HOME/pending/memory``)."""

    command = "memory"

    def add(self, record: PendingWrite) -> None:
        atomic_write(self.path(record.id), json.dumps(asdict(record), ensure_ascii=False, indent=1))

    def get(self, pending_id: str) -> PendingWrite:
        """The record; KeyError (with what to do) when it is missing or unreadable."""
        path = self.path(pending_id)
        try:
            text = read_text(path)  # never through a symbolic link
            if text is None:
                raise KeyError(f"no pending write {pending_id} (see `memory pending`)")
            record = PendingWrite(**json.loads(text))
            if problem := _record_problem(record, pending_id):
                raise ValueError(problem)
            return record
        except (MemoryStoreError, ValueError, TypeError) as exc:
            raise KeyError(f"pending write {pending_id} cannot be read ({exc}); reject it") from exc


@dataclass(frozen=True)
class WriteRequest:
    """One write as asked: ``action`` is add, replace, remove or batch."""

    action: str
    target: str
    content: str | None = None
    old_text: str | None = None
    operations: tuple[Mapping[str, Any], ...] = ()

    def ops(self) -> list[Mapping[str, Any]]:
        """The write as batch operations (one for a single write)."""
        if self.action == "batch":
            return list(self.operations)
        return [{"action": self.action, "content": self.content, "old_text": self.old_text}]


def apply_request(store: MemoryStore, request: WriteRequest) -> Result:
    """Run ``request`` against ``store`` now."""
    action, target = request.action, request.target
    if action == "add":
        return store.add(target, request.content)  # type: ignore[arg-type]  # checked inside
    if action == "replace":
        return store.replace(target, request.old_text, request.content)  # type: ignore[arg-type]
    if action == "remove":
        return store.remove(target, request.old_text)  # type: ignore[arg-type]
    if action == "batch":
        return store.batch(target, request.operations)
    return {
        "success": False,
        "reason": "invalid",
        "error": f"action must be add, replace, remove or batch, got {action!r}.",
    }


class MemoryWriter:
    """Every write goes through here: the approval mode decides whether it lands, is staged
    or is refused. ``store_for(user_id)`` gives the store a staged write belongs to."""

    def __init__(
        self,
        store: MemoryStore,
        pending: PendingWrites,
        *,
        mode: str = "allow",
        store_for: Callable[[str | None], MemoryStore] | None = None,
    ) -> None:
        if mode not in ("allow", "stage", "block"):
            raise ValueError(f"write approval must be allow, stage or block, got {mode!r}")
        self.store = store
        self.pending = pending
        self.mode = mode
        self.store_for = store_for or (lambda _user: store)

    def write(self, request: WriteRequest, origin: Origin = "assistant_tool") -> Result:
        """Apply, stage or refuse one write."""
        if self.mode == "block":
            return {
                "success": False,
                "reason": "read_only",
                "error": "Memory is read-only here (memory.write_approval: block); nothing was "
                "saved. Go on without saving.",
            }
        # a review's replace and remove, and any of its writes to a file other users share
        # (MEMORY.md of a multi-user home), wait for a person: nobody asked for them
        proposal = origin == "background_review" and (
            request.action != "add" or self.store.shared(request.target)
        )
        if self.mode == "stage" or proposal:
            return self._stage(request, origin)
        return apply_request(self.store, request)

    def _stage(self, request: WriteRequest, origin: str) -> Result:
        """Judge the write exactly as it would be applied now; stage it only if it would
        succeed and change something."""
        if request.action == "batch" and not request.operations:
            return apply_request(self.store, request)
        if request.action not in _ACTIONS:
            return apply_request(self.store, request)
        outcome = self.store.preview(request.target, request.ops(), batch=request.action == "batch")
        if not outcome.result.get("success") or outcome.new_text is None:
            return outcome.result  # a refusal, or a write that would change nothing
        single = request.action != "batch"
        ops = request.ops()
        record = PendingWrite(
            id=self.pending.new_id(),
            action=request.action,
            target=request.target,
            origin=origin,
            created=self.pending.clock(),
            content=request.content.strip() if isinstance(request.content, str) else None,
            old_text=request.old_text,
            selected=outcome.selected[0] if single else None,
            operations=[]
            if single
            else [
                {**dict(op), "selected": sel} for op, sel in zip(ops, outcome.selected, strict=True)
            ],
            user_id=self.store.user_id,
        )
        self.pending.add(record)
        return {
            "success": True,
            "done": True,
            "staged": True,
            "pending_id": record.id,
            "message": "Staged for review by a person; it is not in memory yet.",
        }

    def approve(self, pending_id: str) -> Result:
        """Re-apply a staged write (scan and limits again) under the lock, to the exact entries
        it selected; refused when one of them has changed since. Removed once applied."""
        record = self.pending.get(pending_id)
        store = self.store_for(record.user_id)
        result = store.batch(record.target, _approved_ops(record), exact=True)
        if result.get("success"):
            self.pending.delete(record.id)
            result["message"] = f"Pending write {record.id} applied."
        elif result.get("reason") == "changed":
            result["error"] = f"pending write {record.id}: {result['error']}"
        return result

    def reject(self, pending_id: str) -> Result:
        """Drop a staged write unapplied."""
        if not self.pending.delete(pending_id):
            raise KeyError(f"no pending write {pending_id} (see `memory pending`)")
        return {"success": True, "done": True, "message": f"Pending write {pending_id} rejected."}


def _approved_ops(record: PendingWrite) -> list[dict[str, Any]]:
    """The record's operations, each replace/remove aimed at the entry selected when staged."""
    if record.action != "batch":
        single = {"action": record.action, "selected": record.selected}
        return [_aimed(single | {"content": record.content})]
    return [_aimed(op) for op in record.operations]


def _aimed(op: Mapping[str, Any]) -> dict[str, Any]:
    chosen = {k: v for k, v in op.items() if k not in ("selected", "old_text")}
    if op.get("selected") is not None:
        chosen["old_text"] = op["selected"]
    if chosen.get("content") is None:
        chosen.pop("content", None)
    return chosen
