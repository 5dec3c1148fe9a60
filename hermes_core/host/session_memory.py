"""A session's side of memory: which plugins take part, its tools, recall and sync.

Why apart from :class:`~hermes_core.host.session.Session`: the gates are policy of their own.
``skip_memory`` (a bridge host's mode) shuts the external provider out of every hook and
leaves the built-in file memory closed too unless the host asks for the ``memory`` tool
(the seed's double gate); ``session_search`` (and ``session_recall``, its sibling over this
conversation's own archive) likewise needs asking for. Everything here goes
through the :class:`~hermes_core.memory.manager.MemoryManager`, which bounds, scans, fences
and redacts.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from hermes_core.errors import SessionError
from hermes_core.memory.calls import MemoryEvent
from hermes_core.memory.home import open_store
from hermes_core.memory.manager import MemoryManager
from hermes_core.memory.recall import with_recall
from hermes_core.memory.store import MemoryStore
from hermes_core.memory.use_marks import mark_recalled
from hermes_core.memory.used import texts_of_answer
from hermes_core.redact import redact
from hermes_core.sessions.recall_tool import SESSION_RECALL_SCHEMA, run_session_recall
from hermes_core.sessions.search_tool import SESSION_SEARCH_SCHEMA, run_session_search
from hermes_core.sessions.store import SessionStore
from hermes_core.transcript.messages import is_real_user_message, message_text
from hermes_core.types import SessionInfo, Turn

if TYPE_CHECKING:
    from hermes_core.host.services import SessionHost

__all__ = ["SessionMemory", "last_turn"]

log = logging.getLogger("hermes_context.session")

Message = dict[str, Any]
#: the tools over the session store, behind the same gate (search_allowed)
_STORE_TOOLS = frozenset({"session_search", "session_recall"})


class SessionMemory:
    """The memory manager of one session, behind the session's gates."""

    def __init__(
        self,
        host: SessionHost,
        *,
        skip_memory: bool,
        toolsets: Collection[str],
        on_event: Callable[[MemoryEvent], None],
    ) -> None:
        self.host = host
        self.skip_memory = skip_memory
        self.toolsets = frozenset(toolsets)
        self.manager = MemoryManager(
            host,
            prefetch_timeout=host.settings.memory.prefetch_timeout,
            on_event=on_event,
            include=self.plugin_allowed,
            stuck=host.stuck_calls,
        )
        #: (target, entry) marked used this turn: each at most once a turn
        self._marked: set[tuple[str, str]] = set()
        self._store: MemoryStore | None = None

    def plugin_allowed(self, name: str) -> bool:
        """Whether plugin ``name`` takes part in this session's memory hooks."""
        if not self.skip_memory:
            return True
        record = self.host.plugins.records.get(name)
        return bool(record and record.builtin) and "memory" in self.toolsets

    def search_allowed(self, store: SessionStore | None) -> bool:
        return store is not None and (not self.skip_memory or "session_search" in self.toolsets)

    # --- prompt, tools -----------------------------------------------------------------------

    def system_blocks(self, info: SessionInfo) -> str:
        return self.manager.system_blocks(info)

    def tools(self, info: SessionInfo, store: SessionStore | None) -> list[dict[str, Any]]:
        schemas = self.manager.tools(info)
        if self.search_allowed(store):
            schemas.extend((SESSION_SEARCH_SCHEMA, SESSION_RECALL_SCHEMA))
        return schemas

    def handle(
        self,
        info: SessionInfo,
        store: SessionStore | None,
        name: str,
        arguments: Mapping[str, Any] | str,
    ) -> str:
        if name not in _STORE_TOOLS:
            return self.manager.handle_tool_call(info, name, arguments)
        if store is None or not self.search_allowed(store):
            return _error(f"{name} is not available in this session")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                return _error("arguments are not valid JSON")
        if not isinstance(arguments, Mapping):
            return _error("arguments must be a JSON object")
        run = run_session_search if name == "session_search" else run_session_recall
        try:
            answer = run(
                store,
                arguments,
                user_id=info.user_id,
                current_session_id=info.session_id,
                scan=lambda text: self.host.plugins.scan_threat(text, "context"),
            )
        except SessionError as exc:
            return _error(f"{name} failed: {exc}")
        except Exception as exc:  # noqa: BLE001 - the model gets an error, the turn goes on
            log.warning("%s failed: %s: %s", name, type(exc).__name__, redact(str(exc)))
            return _error(f"{name} failed unexpectedly ({type(exc).__name__}); try again or go on")
        self.note_recalled(info, texts_of_answer(answer))
        return answer

    # --- recall and sync ---------------------------------------------------------------------

    def api_copy(self, info: SessionInfo, message: Message) -> Message:
        """The API copy of the user's new message, recalled memory appended (the stored one
        keeps the user's own words). No recall at all with ``skip_memory``."""
        if self.skip_memory:
            return message
        self._marked.clear()  # a new turn
        block = self.manager.prefetch(message_text(message), info)
        if not block:
            return message
        self.note_recalled(info, [block])
        return with_recall(message, block)

    def note_recalled(self, info: SessionInfo, texts: list[str]) -> None:
        """Mark used the entries of this user's built-in memory that ``texts`` (what a
        recall brought back to the model) hold, each once a turn (docs/memory.md)."""
        record = self.host.plugins.records.get("file_memory")
        if record is None or record.status != "active" or not self.plugin_allowed("file_memory"):
            return
        try:
            if self._store is None:
                home = info.home or self.host.home
                documents = self.host.memory_documents(home)
                self._store = open_store(
                    home, self.host.settings, user_id=info.user_id, documents=documents
                )
            self._marked.update(mark_recalled(self._store, texts, self._marked))
        except Exception as exc:  # noqa: BLE001 - a date is a help: the turn goes on
            log.warning(
                "recalled memory not marked used: %s: %s", type(exc).__name__, redact(str(exc))
            )

    def sync(self, info: SessionInfo, turn: Turn | None) -> None:
        if turn is not None:
            self.manager.sync(turn, info)

    def start(self, info: SessionInfo) -> None:
        self.manager.session_start(info)

    def switch(self, info: SessionInfo, parent_session_id: str) -> None:
        self.manager.session_switch(info, parent_session_id)

    def pre_compress(self, info: SessionInfo, messages: Any) -> list[str]:
        return self.manager.pre_compress(messages, info)

    def end(self, info: SessionInfo) -> None:
        """End the session for the providers and drain its sync queue (bounded)."""
        self.manager.session_end(info, "closed")
        self.manager.close(timeout=5.0)


def last_turn(sent: list[Message], user_text: str | None, turn_index: int) -> Turn | None:
    """The newest exchange: the user's own words and the reply that followed."""
    user_at = next((i for i in range(len(sent) - 1, -1, -1) if is_real_user_message(sent[i])), None)
    if user_at is None or user_text is None:
        return None
    after = sent[user_at + 1 :]
    replies = [message_text(m) for m in after if m.get("role") == "assistant"]
    reply = next((r for r in reversed(replies) if r.strip()), "")
    return Turn(user=user_text, assistant=reply, messages=tuple(after), turn_index=turn_index)


def _error(message: str) -> str:
    return json.dumps({"success": False, "error": message})
