"""``Session.undo_compaction``: bring back the exact transcript from before a compaction.

Apart from the compaction steps because it is one idea with its own rules (docs/undo.md):
the restored view is the stored rows before compaction ``n`` byte for byte, followed by the
messages the host added since (they are the user's real conversation; later compactions are
undone with it); the undone summary is archived, never deleted; the compressor goes back to
its state before ``n`` and backs off as after "nothing to compress"; with
``compression.in_place: false`` the conversation goes back to the session ``n`` was
committed in, and the child sessions made since end ``"undone"``, so resuming does not
follow them. Refused, changing nothing: no store, nothing to undo, an unknown or undone
number, a compaction too old, a store another process moved on.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

from hermes_core.errors import SessionError, StaleSessionError
from hermes_core.host.compaction import CompactionSteps
from hermes_core.host.events import emit
from hermes_core.host.undo_restore import Restored, undo_in_store
from hermes_core.host.view import ActiveView, sent_form

__all__ = ["UndoSteps"]

Message = dict[str, Any]


class UndoSteps(CompactionSteps):
    """The undo half of a session (mixed into :class:`Session`)."""

    _sent_len: int

    def undo_compaction(self, n: int | None = None) -> list[Message]:
        """Undo compaction ``n`` (its number in the conversation's history; ``None``: the
        newest not undone) and return the active transcript now (copies, as ``messages``)."""
        with self._lock:
            self._check_open()
            if self.store is None:
                raise SessionError(
                    "undo_compaction needs a session store: without one nothing a compaction "
                    "removed was kept, so there is nothing to bring back (sessions.enabled: "
                    "true keeps every message)"
                )
            saved = self.compressor.export_state()
            left = self.session_id
            try:
                done = undo_in_store(
                    self.store,
                    session_id=left,
                    user_id=self.info.user_id,
                    state=replace(self.state, compressor=saved),
                    n=n,
                    compressor=self.compressor,
                    after_seq=self._last_seq,
                    wall_now=time.time(),
                )
            except StaleSessionError:
                self.compressor.restore_state(saved)
                self._reload()
                raise StaleSessionError(
                    f"session {left} was written, compacted or undone by another process "
                    "since this host read it, so nothing was undone; it is reloaded now (the "
                    f"conversation continues in {self.session_id}): check session.messages "
                    "and call undo_compaction again"
                ) from None
            except Exception:
                self.compressor.restore_state(saved)
                raise
            self._adopt_restored(done, left)
            return [dict(m) for m in self.view.sent]

    async def aundo_compaction(self, n: int | None = None) -> list[Message]:
        """The asyncio twin of :meth:`undo_compaction`."""
        return await asyncio.to_thread(self.undo_compaction, n)

    def _adopt_restored(self, done: Restored, left: str) -> None:
        """Hold what the store now holds: the view, the state, the session."""
        assert self.store is not None
        rows = done.rows
        self.view = ActiveView()
        self.view.extend(
            [sent_form(r) for r in rows], [r.seq for r in rows], [r.message for r in rows]
        )
        self.state = done.state
        self._sent_len = len(self.view)
        self._last_seq = self.store.last_seq(done.plan.session)
        if done.plan.session != left:
            self.info = replace(
                self.info,
                session_id=done.record.id,
                parent_session_id=done.record.parent_session_id,
            )
            self.memory.switch(self.info, left)
            emit(self._listener, "session_switched", left, {"back_to": done.record.id})
        plan = done.plan
        emit(
            self._listener,
            "compaction_undone",
            self.session_id,
            {
                "compaction": plan.record.n,
                "undone": list(plan.undone),
                "messages": len(rows),
                "appended": plan.appended,
                "abandoned": list(plan.abandon),
            },
        )
