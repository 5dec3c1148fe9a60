"""How a session takes in the host's messages: what is new, what a rewritten history means,
and what to do when another host wrote the session meanwhile.

Apart from :class:`~hermes_core.host.session.Session` because it is one idea with its own
rules: the host's new messages go after what another host stored, never over it; a session
another host compacted into a child is followed there; a call that keeps losing the race ends
with an append after whatever is stored by then.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hermes_core.errors import SessionError, StaleSessionError
from hermes_core.host.alignment import Mark, extends, mark_of
from hermes_core.host.compaction import CompactionSteps
from hermes_core.host.events import emit
from hermes_core.host.resume import UNDONE, open_record
from hermes_core.host.session_review import counted
from hermes_core.host.session_state import SessionState, check_items
from hermes_core.host.view import ActiveView, api_content_of
from hermes_core.transcript.messages import is_real_user_message, message_text

if TYPE_CHECKING:
    from hermes_core.host.session_references import SessionReferences
    from hermes_core.sessions.store import SessionRecord

__all__ = ["MAX_REBASES", "UNGUARDED_TRIES", "AbsorbSteps"]

#: tries of one call while other hosts keep writing the session; the last UNGUARDED_TRIES
#: append after whatever is stored by then (stale only when the session went on in a child)
MAX_REBASES = 10
UNGUARDED_TRIES = 3
Message = dict[str, Any]


class AbsorbSteps(CompactionSteps):
    """The message-taking half of a session (mixed into :class:`Session`)."""

    references: SessionReferences

    def _hydrate(self, record: SessionRecord) -> None:
        raise NotImplementedError

    def _absorb(self, messages: list[Message], *, with_recall: bool) -> None:
        """Take in what is new in the host's list (persisted in one transaction). When
        another process wrote to the session meanwhile, reload it and decide again: what the
        host added to the view it held goes after the other process's rows, never over them
        (a message the other host also stored is kept twice rather than risk losing one).
        While other hosts keep winning the race, the new messages are appended after whatever
        is stored by then (the store orders writers), so a busy session cannot starve a call."""
        start = self._new_start(messages)  # against the view this host holds now
        attempt = messages
        for tries in range(1, MAX_REBASES + 1):
            try:
                guarded = tries <= MAX_REBASES - UNGUARDED_TRIES
                self._absorb_once(attempt, with_recall=with_recall, given=messages, guarded=guarded)
                return
            except StaleSessionError:
                self._reload()
                if start is not None and self._new_start(messages) is None:
                    attempt = [*self.view.sent, *(dict(m) for m in messages[start:])]
        raise SessionError(
            f"session {self.session_id} kept changing under this call (other hosts wrote or "
            f"compacted it {MAX_REBASES} times in a row); nothing of this call was stored: try "
            "it again"
        )

    def _reload(self) -> None:
        """Read the session back from the store (another process served it meanwhile)."""
        assert self.store is not None
        held = self.store.get_session(self.session_id, user_id=self.info.user_id)
        if held is None:
            raise SessionError(f"session {self.session_id} disappeared from the store")
        # another host may have compacted it into a child (whatever the parent's end reason
        # says): the conversation goes on in the newest descendant; or undone a compaction
        # (it ended "undone"): the conversation went back, and goes on from there
        record = open_record(self.store, self.session_id, user_id=self.info.user_id, model=None)
        if record.id != self.session_id and held.end_reason == UNDONE:
            left = self.session_id
            parent = record.parent_session_id
            self.info = replace(self.info, session_id=record.id, parent_session_id=parent)
            self.memory.switch(self.info, left)
            emit(self._listener, "session_switched", left, {"back_to": record.id})
        elif record.id != self.session_id:
            left = self.session_id
            parent = record.parent_session_id or left
            self.info = replace(self.info, session_id=record.id, parent_session_id=parent)
            self.memory.switch(self.info, parent)
            emit(self._listener, "session_switched", left, {"child": record.id})
        self.view = ActiveView()
        self.state = SessionState.from_record(record.state)
        self._hydrate(record)

    def _absorb_once(
        self, messages: list[Message], *, with_recall: bool, given: list[Message], guarded: bool
    ) -> None:
        """``messages``: what to hold afterwards; ``given``: the host's own list (its mark
        tells the host's next list apart, even when ``messages`` was rebased)."""
        start = self._new_start(messages)
        if start is None:
            self._replace_history(check_items(messages), with_recall=with_recall)
            return
        # unguarded: rows another host stored since this view was read stay out of it (the
        # host's new messages end what is sent); the next write is stale and reloads them
        self._absorb_from(
            messages, start, with_recall=with_recall, mark=mark_of(given), guarded=guarded
        )

    def _absorb_from(
        self,
        messages: list[Message],
        start: int,
        *,
        with_recall: bool,
        mark: Mark,
        guarded: bool = True,
    ) -> None:
        """Store and view ``messages[start:]``, the new ones (one transaction); ``mark``
        remembers the host's list; ``guarded``: refused as stale when another process wrote
        since this view was read (unguarded: appended after whatever is stored by then)."""
        originals = [dict(m) for m in check_items(messages, start)]
        if not originals:
            self.state.host_mark = mark
            return
        forms = list(originals)
        last = forms[-1]
        if with_recall and is_real_user_message(last):
            forms[-1] = self.memory.api_copy(self.info, self.references.attach(last))
        # the state that knows about the new rows goes with them (one transaction): a failed
        # append changes nothing, so the host's retry hands the same messages in again
        state = replace(self.state, host_mark=mark)
        for message in originals:
            if is_real_user_message(message):
                state.user_turns += 1
                state.last_user = message_text(message)
        state.review = counted(self.settings, self.state.review, originals)
        seqs: list[int | None] = [None] * len(forms)
        if self.store is not None:
            api = [api_content_of(o, f) for o, f in zip(originals, forms, strict=True)]
            state.compressor = self.compressor.export_state()
            seqs = list(
                self.store.append_messages(
                    self.session_id,
                    originals,
                    api_contents=api,
                    state=state.to_record(),
                    after_seq=self._last_seq if guarded else None,
                )
            )
            self._last_seq = max([self._last_seq, *(s for s in seqs if s is not None)])
        self.state = state
        self.view.extend(forms, seqs, originals)

    def _new_start(self, messages: list[Message]) -> int | None:
        """Where the host's new messages begin; ``None`` when it rewrote its history."""
        if not self.view.sent and self.state.host_mark is None:
            return 0
        marks: list[Mark | None] = [self.state.host_mark, mark_of(self.view.sent)]
        lengths = [m.length for m in marks if m is not None and extends(messages, m)]
        if lengths:
            return max(lengths)
        if not messages:
            return len(messages)  # nothing handed in: nothing new, nothing to replace
        return None

    def _replace_history(self, messages: list[Message], *, with_recall: bool) -> None:
        """The host's list no longer extends what we hold: it is the new truth. Rows still in it
        keep their seq and API copy; the others are archived (never deleted). A new user
        message at the end is then taken in as in :meth:`_absorb_once` (its attachments and
        recall go to the API copy, the store keeps the user's words)."""
        forms, found = self.view.reuse(messages)
        fresh_ask = bool(forms) and not found[-1] and is_real_user_message(forms[-1])
        fresh_ask = fresh_ask and with_recall
        kept = messages[:-1] if fresh_ask else messages
        if not self._commit(forms[: len(kept)], in_place=True, stale_raises=True):
            raise SessionError(
                "the store refused to record the rewritten history, so nothing was changed; "
                "try the call again (see the store_error event for the reason)"
            )
        self.state.host_mark = mark_of(kept)
        emit(self._listener, "transcript_replaced", self.session_id, {"messages": len(kept)})
        if fresh_ask:
            self._absorb_from(messages, len(kept), with_recall=True, mark=mark_of(messages))
