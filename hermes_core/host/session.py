"""``Session``: one conversation's lifecycle, the calls a host makes around each request.

Spec 40 §2, in order: ``system_prompt`` once, then per request ``prepare`` (persist what is
new, inject recall into the API copy of the user's message, compress when due, commit the
compaction, return the wire list), ``record_usage`` (real prompt tokens anchor the count),
tools through ``handle_tool_call``, ``end_turn`` (persist the reply, sync providers), and
``close``. Everything a restart must not forget (the anti-thrash guard, the previous summary,
the learned token ratio, the frozen prompt blocks, where the host's list stood) lives with
the session in the store, so a new process resuming the same id carries on.

Every public method holds the session's lock: a host may call from several threads, and
the async twins run the same code on a worker thread.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.compression.engine import Compressor
from hermes_core.compression.hooks import host_hooks
from hermes_core.compression.result import CompressionEvent
from hermes_core.errors import HermesError, SessionError, StaleSessionError
from hermes_core.host.alignment import Mark, extends, mark_of
from hermes_core.host.async_twins import AsyncTwins
from hermes_core.host.compaction import CompactionSteps, joined
from hermes_core.host.events import EventListener, emit
from hermes_core.host.resume import open_record
from hermes_core.host.session_formats import host_format
from hermes_core.host.session_memory import SessionMemory, last_turn
from hermes_core.host.session_references import SessionReferences
from hermes_core.host.session_review import SessionReview, counted
from hermes_core.host.session_skills import SKILL_TOOL, SessionSkills
from hermes_core.host.session_state import (
    SessionState,
    check_id,
    check_items,
    check_messages,
)
from hermes_core.host.view import ActiveView, api_content_of, sent_form
from hermes_core.memory.calls import MemoryEvent
from hermes_core.sessions.store import SessionRecord, SessionStore
from hermes_core.transcript.messages import is_real_user_message, message_text
from hermes_core.types import SessionInfo

if TYPE_CHECKING:
    from hermes_core.host.hermes import Hermes

__all__ = ["Session"]

log = logging.getLogger("hermes_context.session")

#: tries of one call while other hosts keep writing the session; the last UNGUARDED_TRIES
#: append after whatever is stored by then (stale only when the session went on in a child)
MAX_REBASES = 10
UNGUARDED_TRIES = 3
Message = dict[str, Any]


class Session(CompactionSteps, AsyncTwins):
    """One conversation of one user; made by :meth:`hermes_core.host.Hermes.session`."""

    def __init__(
        self,
        host: Hermes,
        session_id: str,
        *,
        user_id: str | None = None,
        skip_memory: bool = False,
        workspace: str | os.PathLike[str] | None = None,
        on_event: EventListener | None = None,
        toolsets: Collection[str] | None = None,
        message_format: str = "openai",
    ) -> None:
        self.host = host
        self.formats = host_format(message_format)  # None: the host speaks OpenAI already
        self.settings = host.settings
        self.requested_id = check_id(session_id, "session_id")
        user = None if user_id is None else check_id(user_id, "user_id")
        self.skip_memory = bool(skip_memory)
        self.toolsets = frozenset(toolsets or ())
        self.workspace = Path(workspace).expanduser().resolve() if workspace else None
        self._listener = on_event
        self._lock = threading.RLock()
        self._closed = False
        self.store: SessionStore | None = host.session_store
        record = open_record(
            self.store, self.requested_id, user_id=user, model=self.settings.model.name or None
        )
        model = self.settings.model.name or None
        self.info = SessionInfo(
            session_id=record.id,
            user_id=user,
            parent_session_id=record.parent_session_id,
            home=host.home,
            model=model,
        )
        self.memory = SessionMemory(
            host, skip_memory=self.skip_memory, toolsets=self.toolsets, on_event=self._memory_event
        )
        self.compressor = Compressor(
            self.settings,
            context_length=self.settings.model.context_length,
            max_tokens=self.settings.model.max_tokens,
            model=model,
            hooks=self._compression_hooks(),
            on_event=self._compression_event,
        )
        self.view = ActiveView()
        self.state = SessionState.from_record(record.state)
        self._sent_len = 0  # how much of the view the last prepare() returned
        self._system_prompt: str | None = None
        self._base: str | None = None
        self._hydrate(record)
        self.memory.start(self.info)
        self.references = SessionReferences(
            self.workspace,
            settings=self.settings.references,
            compressor=self.compressor,
            hermes_home=host.home,
            emit=self._emit,
        )
        self.skills = SessionSkills(
            host,
            allowed=not self.skip_memory or SKILL_TOOL in self.toolsets,
            shared=user is not None,
        )
        self.review = SessionReview(
            host,
            self.info,
            enabled=not self.skip_memory,
            emit=self._emit,
            skill_tool=self.skills.for_review(),
        )

    # --- opening and resuming ----------------------------------------------------------------

    def _hydrate(self, record: SessionRecord) -> None:
        self._last_seq = 0  # the session's newest row as far as this object knows
        if self.store is not None:
            # the newest seq first: a row another process adds between the two reads then
            # makes our next write stale (a reload) instead of writing its message again
            self._last_seq = self.store.last_seq(record.id)
            rows = self.store.messages(record.id)
            self.view.extend(
                [sent_form(r) for r in rows], [r.seq for r in rows], [r.message for r in rows]
            )
        if self.state.compressor:
            self.compressor.restore_state(self.state.compressor)
        if self.state.model or self.state.context_length:
            if self.state.model:
                self.info = replace(self.info, model=self.state.model)
            self.compressor.set_model(
                self.info.model or "", context_length=self.state.context_length
            )

    # --- the host's calls ------------------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        """The active transcript as it was last sent (copies): a host that keeps no history of
        its own calls ``prepare(session.messages + new)``."""
        with self._lock:
            return [dict(m) for m in self.view.sent]

    def system_prompt(self, base: str) -> str:
        """``base`` + the frozen memory snapshot + provider blocks: the same bytes for the whole
        session (and after a restart), until a compaction rewrites the transcript anyway."""
        with self._lock:
            self._check_open()
            if not isinstance(base, str):
                raise HermesError(f"system_prompt(base) needs a string, got {type(base).__name__}")
            if self.state.blocks is None:
                self.state.blocks = self._compose_blocks()
                self._save_state()
            self._base = base
            self._system_prompt = joined(base, self.state.blocks)
            return self._system_prompt

    def tools(self) -> list[dict[str, Any]]:
        """OpenAI tool schemas: memory and provider tools, ``session_search``, ``skill_manage``."""
        with self._lock:
            self._check_open()
            return [*self.memory.tools(self.info, self.store), *self.skills.tools()]

    def handle_tool_call(self, name: str, arguments: Mapping[str, Any] | str) -> str:
        """Run one of :meth:`tools`; always JSON text, errors included (the model reads it)."""
        with self._lock:
            self._check_open()
            if name == SKILL_TOOL:
                return self.skills.handle(arguments)
            return self.memory.handle(self.info, self.store, name, arguments)

    def prepare(self, messages: Sequence[Mapping[str, Any]]) -> list[Message]:
        """Before each request: the list to send (wire form, in the host's message format;
        treat it as read-only)."""
        with self._lock:
            self._check_open()
            self._take(messages, with_recall=True)
            self._compress_when_due()
            self._sent_len = len(self.view.sent)
            self.compressor.observe(self.view.sent)
            self._save_state()
            if self.formats is not None:
                return self.formats.outgoing(self.view.sent, self.view.wire())
            return self.view.wire()

    def _take(self, messages: Sequence[Mapping[str, Any]], *, with_recall: bool) -> None:
        """Absorb the host's list (converted first when it speaks another format)."""
        given = messages if self.formats is None else self.formats.incoming(messages)
        self._absorb(check_messages(given), with_recall=with_recall)
        if self.formats is not None:
            self.formats.remember(self.view.sent)

    def record_usage(self, usage: Mapping[str, Any]) -> None:
        """After each response: its ``usage`` (``prompt_tokens`` is what counts)."""
        with self._lock:
            self._check_open()
            if not isinstance(usage, Mapping):
                raise HermesError(
                    f"record_usage() needs the response's usage mapping, got {type(usage).__name__}"
                )
            usage = usage if self.formats is None else self.formats.usage(usage)
            sent = self.view.sent
            if len(sent) != self._sent_len:  # end_turn came first: anchor on what was sent
                sent = sent[: self._sent_len]
            self.compressor.update_from_usage(usage, sent)
            prompt = usage.get("prompt_tokens")
            if isinstance(prompt, int) and not isinstance(prompt, bool) and prompt >= 0:
                self._count({"requests": 1, "prompt_tokens": prompt})
            self._save_state()

    def end_turn(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """The reply was delivered: persist it and hand the turn to the memory providers."""
        with self._lock:
            self._check_open()
            self._take(messages, with_recall=False)
            turn = last_turn(self.view.sent, self.state.last_user, self.state.user_turns)
            if turn is not None and turn.assistant.strip() and turn.turn_index > self.state.synced:
                self.memory.sync(self.info, turn)
                self.state.synced = turn.turn_index
            self.state.review = self.review.start_due(self.state.review, self.messages)
            self._save_state()

    def on_overflow(self, status: int, message: str) -> None:
        """The provider refused the prompt as too long: the next ``prepare`` compresses at once
        (learning the window when ``message`` states it) and strips images if it must."""
        with self._lock:
            self._check_open()
            learned = self.compressor.note_overflow(str(message))
            if learned:
                self.state.context_length = learned
            self.state.overflowed = True
            emit(
                self._listener,
                "overflow",
                self.session_id,
                {"status": status, "learned_context_length": learned},
            )
            self._save_state()

    def set_model(self, name: str, *, context_length: int | None = None) -> None:
        """The host switched models: thresholds follow, the session's state stays."""
        with self._lock:
            self._check_open()
            self.compressor.set_model(name, context_length=context_length)
            self.info = replace(self.info, model=name or None)
            self.state.model = name or None
            if context_length is not None:
                self.state.context_length = context_length
            self._save_state()

    def close(self) -> None:
        """Drain the provider sync (bounded), end the session row; safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self.state.review = self.review.close(self.state.review, self.messages)
                self.memory.end(self.info)
                if self.store is None or self.store.last_seq(self.session_id) == self._last_seq:
                    self._save_state()  # else another host served it since: its state is newer
                if self.store is not None:
                    self.store.end_session(self.session_id, "closed")
            finally:
                self.host.forget_session(self)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- new messages ----------------------------------------------------------------------------

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
        if self.store.get_session(self.session_id, user_id=self.info.user_id) is None:
            raise SessionError(f"session {self.session_id} disappeared from the store")
        # another host may have compacted it into a child (whatever the parent's end reason
        # says): the conversation goes on in the newest descendant
        record = open_record(self.store, self.session_id, user_id=self.info.user_id, model=None)
        if record.id != self.session_id:
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

    def _compose_blocks(self) -> str:
        blocks = [self.memory.system_blocks(self.info), self.skills.system_block()]
        return "\n\n".join(block for block in blocks if block)

    # --- plumbing --------------------------------------------------------------------------------

    def _compression_hooks(self) -> Any:
        hooks = host_hooks(self.host.plugins, self.info)
        return replace(hooks, pre_compress=lambda ms: self.memory.pre_compress(self.info, ms))

    def _compression_event(self, event: CompressionEvent) -> None:
        emit(self._listener, event.kind, self.session_id, event.data)

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        emit(self._listener, kind, self.session_id, data)

    def _memory_event(self, event: MemoryEvent) -> None:
        emit(self._listener, event.kind, self.session_id, event.data)

    def _count(self, deltas: Mapping[str, int]) -> None:
        if self.store is not None:
            self.store.add_counters(self.session_id, deltas)

    def _save_state(self) -> None:
        if self.store is None:
            return
        self.state.compressor = self.compressor.export_state()
        self.store.save_state(self.session_id, self.state.to_record())

    def _check_open(self) -> None:
        if self._closed:
            raise SessionError(f"session {self.session_id} is closed; open it again to go on")
