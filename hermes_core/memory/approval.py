"""Write approval: ``allow`` writes at once, ``stage`` queues writes for a person, ``block``
refuses them.

Why: memory outlives the conversation that wrote it, so an operator may want to read what an
agent saves before it reaches every later prompt. A staged write records the exact entry a
replace or remove selected, so approving it later cannot silently hit a different entry; it is
re-validated (scan, limits) when approved. Background review may add on its own, but what it
proposes to replace or remove is always staged.

``memory.untrusted_writes`` comes first: a write made in a session whose content carries words
the model read in untrusted text (see :mod:`hermes_core.provenance`) is staged (or refused, or
let through with its provenance recorded) whatever the approval mode, except ``block``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from hermes_core.memory.documents import Claim, StagedWrites
from hermes_core.memory.staged import (
    ORIGINS,
    RECORD_FORMAT,
    STAGED_ACTIONS,
    PendingWrite,
    PendingWrites,
)
from hermes_core.memory.store import MemoryStore, Result
from hermes_core.provenance import Provenance, assess, audit, decide, refusal_text
from hermes_core.provenance.audit_log import AuditRecorder, actor_of, cli_actor

__all__ = [
    "ORIGINS",
    "MemoryWriter",
    "PendingWrite",
    "PendingWrites",
    "WriteRequest",
    "apply_request",
]

Origin = Literal["assistant_tool", "background_review", "cli"]
_ACTIONS: Final = STAGED_ACTIONS


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
    or is refused. ``pending`` is where staged writes wait (default: the store's documents');
    ``store_for(user_id)`` gives the store a staged write belongs to."""

    def __init__(
        self,
        store: MemoryStore,
        pending: StagedWrites | None = None,
        *,
        mode: str = "allow",
        store_for: Callable[[str | None], MemoryStore] | None = None,
        untrusted: str = "stage",
        audit_log: AuditRecorder | None = None,
    ) -> None:
        if mode not in ("allow", "stage", "block"):
            raise ValueError(f"write approval must be allow, stage or block, got {mode!r}")
        decide(untrusted, False)  # ValueError for a policy that is not one
        self.untrusted = untrusted
        self.store = store
        self.pending: StagedWrites = pending if pending is not None else store.documents.pending
        self.mode = mode
        self.store_for = store_for or (lambda _user: store)
        self.audit_log = audit_log

    def _audit(
        self,
        event: str,
        request: WriteRequest | None,
        *,
        actor: str,
        provenance: Provenance | None = None,
        pending_id: str | None = None,
        logged_as: str | None = None,
        removed: object = None,
        **detail: Any,
    ) -> None:
        """Tell the process-wide sinks, then this home's own audit log, about one decision
        (``logged_as``: the log's name for it, ``removed`` for a remove that landed)."""
        plain = _detail(request) if request is not None else {}
        seam = {k: v for k, v in detail.items() if k == "reason"}
        audit(event, store="memory", provenance=provenance, pending_id=pending_id, **plain, **seam)
        if self.audit_log is None:
            return
        contents = _logged_texts(request) if request is not None else []
        if isinstance(removed, str):  # the entry itself, not the part of it the caller named
            contents = [removed]
        target = plain.get("target") or detail.get("target")
        if detail.get("shared") is None and isinstance(target, str):
            detail["shared"] = self.store.shared(target)
        self.audit_log.record(
            logged_as or event,
            actor=actor,
            provenance=provenance,
            pending_id=pending_id,
            contents=contents,
            **plain,
            **detail,
        )

    def write(self, request: WriteRequest, origin: Origin = "assistant_tool") -> Result:
        """Apply, stage or refuse one write; each decision goes to the audit sinks."""
        if self.mode == "block":
            self._audit(
                "refused", request, actor=actor_of(origin), reason="read_only", origin=origin
            )
            return {
                "success": False,
                "reason": "read_only",
                "error": "Memory is read-only here (memory.write_approval: block); nothing was "
                "saved. Go on without saving.",
            }
        judged = assess(
            _texts(request),
            origin=origin,
            policy=self.untrusted,
            now=self.pending.clock(),
            target=f"memory:{request.target}",
        )
        provenance = judged.provenance
        if judged.action == "refuse":
            refused = provenance.with_decision("refused")
            self._audit(
                "refused", request, actor=actor_of(origin), provenance=refused, origin=origin
            )
            return {
                "success": False,
                "reason": "untrusted",
                "error": refusal_text(refused, "memory write"),
            }
        # a review's replace and remove, and any of its writes to a file other users share
        # (MEMORY.md of a multi-user home), wait for a person: nobody asked for them
        proposal = origin == "background_review" and (
            request.action != "add" or self.store.shared(request.target)
        )
        if judged.action == "stage" or self.mode == "stage" or proposal:
            return self._stage(request, origin, provenance, untrusted=judged.tainted)
        result = apply_request(self.store, request)
        if result.get("success"):
            landed = provenance.with_decision("landed")
            gone = request.action == "remove"
            self._audit(
                "landed",
                request,
                actor=actor_of(origin),
                provenance=landed,
                origin=origin,
                logged_as="removed" if gone else None,
                removed=result.get("removed") if gone else None,
            )
        else:  # the scan, a limit, an entry not found: nothing changed
            refused = provenance.with_decision("refused")
            reason = result.get("reason")
            self._audit(
                "refused",
                request,
                actor=actor_of(origin),
                provenance=refused,
                reason=reason,
                origin=origin,
            )
        return result

    def _stage(
        self, request: WriteRequest, origin: str, provenance: Provenance, *, untrusted: bool
    ) -> Result:
        """Judge the write exactly as it would be applied now; stage it only if it would
        succeed and change something."""
        if request.action == "batch" and not request.operations:
            return apply_request(self.store, request)
        if request.action not in _ACTIONS:
            return apply_request(self.store, request)
        outcome = self.store.preview(request.target, request.ops(), batch=request.action == "batch")
        if not outcome.result.get("success"):  # the scan, a limit: audited as any refusal
            self._audit(
                "refused",
                request,
                actor=actor_of(origin),
                provenance=provenance.with_decision("refused"),
                reason=outcome.result.get("reason"),
                origin=origin,
            )
            return outcome.result
        if outcome.new_text is None:
            return outcome.result  # a write that would change nothing
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
            shared=self.store.shared(request.target),
            provenance=provenance.with_decision("staged").to_json(),
            format=RECORD_FORMAT,
        )
        self.pending.add(record)
        self._audit(
            "staged",
            request,
            actor=actor_of(origin),
            provenance=provenance.with_decision("staged"),
            pending_id=record.id,
            origin=origin,
        )
        why = (
            f" because its words came from {provenance.label()}, not from the user "
            "(memory.untrusted_writes: stage)"
            if untrusted
            else ""
        )
        return {
            "success": True,
            "done": True,
            "staged": True,
            "pending_id": record.id,
            "message": f"Staged for review by a person{why}; it is not in memory yet. Tell the "
            "user it waits for their approval (hermes-context memory pending).",
        }

    def approve(self, pending_id: str, *, actor: str | None = None) -> Result:
        """Re-apply a staged write (scan and limits again) to the exact entries it selected;
        refused when one of them has changed since. The record is consumed with the write
        (see :class:`~hermes_core.memory.documents.Claim`): of many processes approving it at
        once, exactly one applies it and the others are refused (``gone``)."""
        record = self.pending.get(pending_id)
        # the scope it was staged for, not the one this home's settings would pick: a home
        # with memory.per_user_memory: false must not put alice's own entry where bob sees it
        store = self.store_for(None if record.shared else record.user_id)
        if record.shared is False and store.shared(record.target):
            return {
                "success": False,
                "reason": "scope",
                "error": (
                    f"pending write {record.id} was staged for the {record.target} block of "
                    f"user {record.user_id!r} alone (memory.per_user_memory: true), but here "
                    "that block is shared by every user; approve it where per_user_memory is "
                    "true, or reject it. Nothing was changed."
                ),
            }
        claim = Claim(record, self.pending)
        result = store.batch(record.target, _approved_ops(record), exact=True, claim=claim)
        if result.get("success"):
            result["message"] = f"Pending write {record.id} applied."
            self._audit(
                "approved",
                _request_of(record),
                actor=actor or cli_actor(),
                provenance=_provenance_of(record),
                pending_id=record.id,
                origin=record.origin,
                approved_by=actor or cli_actor(),
                user_id=record.user_id,
                shared=record.shared,
            )
        elif result.get("reason") == "changed":
            result["error"] = f"pending write {record.id}: {result['error']}"
        return result

    def reject(self, pending_id: str, *, actor: str | None = None) -> Result:
        """Drop a staged write unapplied."""
        record: PendingWrite | None
        try:
            record = self.pending.get(pending_id)
            provenance = _provenance_of(record)
        except KeyError:
            record, provenance = None, None  # unreadable records can be rejected too
        if not self.pending.delete(pending_id):
            raise KeyError(f"no pending write {pending_id} (see `hermes-context memory pending`)")
        who = actor or cli_actor()
        known: dict[str, Any] = {}
        if record is not None:
            known = {"origin": record.origin, "user_id": record.user_id, "shared": record.shared}
        self._audit(
            "rejected",
            _request_of(record) if record is not None else None,
            actor=who,
            provenance=provenance,
            pending_id=pending_id,
            rejected_by=who,
            **known,
        )
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


def _texts(request: WriteRequest) -> list[str]:
    """The new words a write would put in memory (a remove adds none)."""
    ops = [op for op in request.ops() if isinstance(op, Mapping)]  # the store refuses others
    texts = [op.get("content") for op in ops if op.get("action") != "remove"]
    return [t for t in texts if isinstance(t, str)]


def _logged_texts(request: WriteRequest) -> list[str]:
    """What an audit line previews: the new words, or the entry a remove names."""
    texts = _texts(request)
    if texts:
        return texts
    ops = [op for op in request.ops() if isinstance(op, Mapping)]
    return [op["old_text"] for op in ops if isinstance(op.get("old_text"), str)]


def _request_of(record: PendingWrite) -> WriteRequest:
    """The staged write as a request, for its audit line."""
    ops = tuple(dict(op) for op in record.operations)
    return WriteRequest(record.action, record.target, record.content, record.selected, ops)


def _detail(request: WriteRequest) -> dict[str, Any]:
    return {"action": request.action, "target": request.target}


def _provenance_of(record: PendingWrite) -> Provenance | None:
    try:
        return record.origin_of_words()
    except ValueError:
        return None
