"""Undoing a compaction in the store: the rows back and the state with them, in one commit.

Shared by :meth:`Session.undo_compaction <hermes_core.host.session.Session.undo_compaction>`
(a live host) and ``hermes-context sessions restore`` (none), so both do exactly the same:
read the conversation's history from the session's state, plan (host/undo_plan.py), and
commit with :meth:`UndoableSessionStore.restore_view
<hermes_core.sessions.UndoableSessionStore.restore_view>`: every row of the restored view is the
stored row it was (its message and the API copy that was sent), archived rows come back as
new rows (copies: rows never change nor move), the undone summary and stand-ins are archived,
and the state that records the undo goes in the same transaction, so a crash cannot leave a
restored view whose history says it is still compacted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from hermes_core.errors import SessionError, StaleSessionError
from hermes_core.host.session_state import SessionState
from hermes_core.host.undo_history import CompactionRecord, History, Undone, to_runs
from hermes_core.host.undo_plan import RowKey, UndoPlan, plan_undo
from hermes_core.host.view import sent_form
from hermes_core.sessions.store import (
    SessionRecord,
    SessionStore,
    StoredMessage,
    UndoableSessionStore,
)

if TYPE_CHECKING:
    from hermes_core.compression.engine import Compressor

__all__ = ["Restored", "left_at", "rewind", "undo_in_store"]


@dataclass(frozen=True)
class Restored:
    """What an undo did: its plan, the active rows now (in the session the conversation
    continues in), that session's record, and the state written with them."""

    plan: UndoPlan
    rows: list[StoredMessage]
    record: SessionRecord
    state: SessionState


def rewind(
    compressor: Compressor,
    current: Mapping[str, Any],
    snapshot: Mapping[str, Any],
    sent: Sequence[Mapping[str, Any]],
) -> None:
    """Put the compressor back as it was before the undone compaction (anti-thrash guard,
    previous summary, compaction count), keeping what it learnt since about the model (the
    token ratio, a window an overflow stated), then back off the way it does after "nothing
    to compress", so the next request does not compact the restored transcript again: until
    it grows by a quarter, or 300 s pass, or it reaches the window's edge (it would not fit).
    A forced compaction, and an overflow the provider reports, still compact at once."""
    merged = {key: value for key, value in snapshot.items() if key != "idle"}
    for key in ("ratio", "window"):
        if isinstance(current.get(key), Mapping):
            merged[key] = current[key]
    window = merged.get("window")
    if isinstance(window, Mapping):
        merged["window"] = {**window, "overflow_due": False}
    compressor.restore_state(merged)
    compressor.hold_after_undo(compressor.count(list(sent)))


def undo_in_store(
    store: SessionStore,
    *,
    session_id: str,
    user_id: str | None,
    state: SessionState,
    n: int | None,
    compressor: Compressor,
    after_seq: int | None,
    wall_now: float,
) -> Restored:
    """Undo compaction ``n`` (``None``: the newest not undone) of the conversation that is in
    ``session_id`` now with ``state``; ``compressor`` is rewound (:func:`rewind`) to make the
    state to write. ``after_seq``: the newest seq of ``session_id`` the caller knows
    (:class:`StaleSessionError` when the store moved on). Refusals are
    :class:`SessionError`, and change nothing in the store."""
    if not isinstance(store, UndoableSessionStore):
        raise SessionError(
            f"this session store ({getattr(store, 'backend', type(store).__name__)}) cannot "
            "undo a compaction: it has no restore_view (see UndoableSessionStore); the "
            "built-in sqlite and postgres stores can. Nothing was changed"
        )
    last = store.last_seq(session_id)
    if after_seq is not None and last != after_seq:
        raise StaleSessionError(f"session {session_id!r} changed since it was read")
    active = store.messages(session_id)
    plan = plan_undo(state.history, n, session=session_id, active=[r.seq for r in active])
    rows = _rows(store, plan, user_id)
    chosen = [_row(rows, key) for key in plan.target]
    target = plan.session
    kept = {r.seq for r in rows[target].values() if r.active}
    origins = [seq if sid == target and seq in kept else None for sid, seq in plan.target]
    known = left_at(state.history.since(plan.record.n))
    known[session_id] = last
    # a session the conversation left for a child is as it was then, unless another process
    # undid a compaction since (and wrote there): the store checks each session it writes
    target_last = known[target] if target in known else store.last_seq(target)
    fresh = sum(origin is None for origin in origins)
    inserted = range(target_last + 1, target_last + 1 + fresh)
    view = (session_id, [r.seq for r in active])
    new_state = _undone_state(state, plan, inserted, view, wall_now)
    snapshot = plan.record.compressor or {}
    rewind(compressor, state.compressor, snapshot, [sent_form(r) for r in chosen])
    new_state.compressor = compressor.export_state()
    commit = store.restore_view(
        target,
        [dict(r.message) for r in chosen],
        origins,
        api_contents=[r.api_content for r in chosen],
        state=new_state.to_record(),
        abandon=plan.abandon,
        after_seq=target_last,
        abandon_after_seq={sid: known[sid] for sid in plan.abandon if sid in known},
    )
    made = sorted(set(commit.seqs) - kept)
    if made != list(inserted):  # a backend numbered the copies otherwise: record what it did
        new_state = _undone_state(state, plan, made, view, wall_now)
        new_state.compressor = compressor.export_state()
        store.save_state(target, new_state.to_record())
    record = store.get_session(target, user_id=user_id)
    if record is None:
        raise SessionError(f"session {target} disappeared from the store during the undo")
    return Restored(plan=plan, rows=store.messages(target), record=record, state=new_state)


def left_at(records: Sequence[CompactionRecord]) -> dict[str, int]:
    """The newest seq of each session when the conversation last left it for a child, as
    ``records`` (oldest first) tell it (a record without ``last`` tells nothing)."""
    out: dict[str, int] = {}
    for record in records:
        if record.into != record.session and record.last is not None:
            out[record.session] = record.last
    return out


def _undone_state(
    state: SessionState,
    plan: UndoPlan,
    inserted: Sequence[int],
    view: tuple[str, list[int]],
    wall_now: float,
) -> SessionState:
    history = History(list(state.history.records))
    by = Undone(
        at=wall_now,
        by=plan.record.n,
        session=plan.session,
        inserted=to_runs(inserted),
        view_session=view[0],
        view=to_runs(view[1]),
        after=history.next_number() - 1,
        k=history.undos() + 1,
    )
    history.mark_undone(plan.record.n, plan.undone, by)
    return replace(state, history=history, overflowed=False)


def _rows(
    store: SessionStore, plan: UndoPlan, user_id: str | None
) -> dict[str, dict[int, StoredMessage]]:
    """Every row of the sessions the plan names (the user's own only)."""
    out: dict[str, dict[int, StoredMessage]] = {}
    for sid in dict.fromkeys([plan.session, *plan.sessions]):
        if store.get_session(sid, user_id=user_id) is None:
            raise SessionError(
                f"session {sid}, which holds part of the transcript to restore, is not in the "
                "store (or not this user's); nothing was changed"
            )
        out[sid] = {r.seq: r for r in store.messages(sid, include_archived=True)}
    return out


def _row(rows: Mapping[str, Mapping[int, StoredMessage]], key: RowKey) -> StoredMessage:
    found = rows.get(key[0], {}).get(key[1])
    if found is None:
        raise SessionError(
            f"row {key[1]} of session {key[0]}, part of the transcript to restore, is not in "
            "the store any more; nothing was changed"
        )
    return found
