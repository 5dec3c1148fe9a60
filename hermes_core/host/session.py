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
from hermes_core.errors import HermesError, SessionError
from hermes_core.host.absorb import AbsorbSteps
from hermes_core.host.async_twins import AsyncTwins
from hermes_core.host.compaction import joined
from hermes_core.host.events import EventListener, emit
from hermes_core.host.resume import open_record
from hermes_core.host.session_formats import host_format
from hermes_core.host.session_memory import SessionMemory, last_turn
from hermes_core.host.session_references import SessionReferences
from hermes_core.host.session_review import SessionReview
from hermes_core.host.session_skills import SKILL_TOOL, SessionSkills
from hermes_core.host.session_state import (
    SessionState,
    check_id,
    check_messages,
)
from hermes_core.host.session_taint import SessionTaint, WatchedView
from hermes_core.host.undo import UndoSteps
from hermes_core.host.view import ActiveView, sent_form
from hermes_core.memory.calls import MemoryEvent
from hermes_core.provenance import WriteContext, using
from hermes_core.sessions.store import SessionRecord, SessionStore
from hermes_core.tokens.reported import prompt_usage
from hermes_core.transcript.objects import as_message_list
from hermes_core.types import SessionInfo

if TYPE_CHECKING:
    from hermes_core.host.services import SessionHost

__all__ = ["Session"]

log = logging.getLogger("hermes_context.session")

Message = dict[str, Any]


class Session(UndoSteps, AbsorbSteps, AsyncTwins):
    """One conversation of one user; made by :meth:`hermes_core.host.Hermes.session`."""

    def __init__(
        self,
        host: SessionHost,
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
        self._told_full = False
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
        self.taint = SessionTaint()  # before the view: every message entering it is indexed
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
            scan=lambda text: host.plugins.scan_threat(text, "context"),
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

    @property
    def view(self) -> ActiveView:
        """The active view; whatever enters it is indexed for :meth:`handle_tool_call`."""
        return self._view

    @view.setter
    def view(self, value: ActiveView) -> None:
        # steps that start over (a reload, an undo) assign a fresh view: it is watched too,
        # and the index keeps what it knew (it never shrinks)
        watched = value if isinstance(value, WatchedView) else WatchedView.adopt(value, self.taint)
        self._view = watched

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
        """OpenAI tool schemas: memory and provider tools, ``session_search``,
        ``session_recall``, ``skill_manage``."""
        with self._lock:
            self._check_open()
            return [*self.memory.tools(self.info, self.store), *self.skills.tools()]

    def handle_tool_call(self, name: str, arguments: Mapping[str, Any] | str) -> str:
        """Run one of :meth:`tools`; always JSON text, errors included (the model reads it).
        A memory or skill write made by it is judged against what this session read
        (``memory.untrusted_writes``); the context is set here, never taken from arguments."""
        with self._lock:
            self._check_open()
            context = WriteContext(
                self.taint.index, session_id=self.session_id, user_id=self.info.user_id
            )
            if self.taint.index.full and not self._told_full:
                self._told_full = True
                self._emit("taint_index_full", {"entries": len(self.taint.index)})
            with using(context):
                if name == SKILL_TOOL:
                    return self.skills.handle(arguments)
                return self.memory.handle(self.info, self.store, name, arguments)

    def prepare(self, messages: Sequence[Any]) -> list[Message]:
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

    def _take(self, messages: Sequence[Any], *, with_recall: bool) -> None:
        """Absorb the host's list (SDK objects read as dicts; converted first when it speaks
        another format)."""
        fmt = self.formats
        given = as_message_list(messages) if fmt is None else fmt.incoming(messages)
        self._absorb(check_messages(given), with_recall=with_recall)
        if self.formats is not None:
            self.formats.remember(self.view.sent)

    def record_usage(self, usage: object) -> None:
        """After each response: its ``usage`` (a mapping, the SDK's object or the whole
        response, in any API's shape: tokens/reported.py) anchors the count."""
        with self._lock:
            self._check_open()
            reported = prompt_usage(usage)  # InvalidArgument before anything changes
            if reported is not None:
                sent = self.view.sent
                if len(sent) != self._sent_len:  # end_turn came first: anchor on what was sent
                    sent = sent[: self._sent_len]
                self.compressor.update_from_usage({"prompt_tokens": reported.tokens}, sent)
                cached = {"cached_prompt_tokens": reported.cached} if reported.cached else {}
                self._count({"requests": 1, "prompt_tokens": reported.tokens, **cached})
            self._save_state()

    def end_turn(self, messages: Sequence[Any]) -> None:
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
