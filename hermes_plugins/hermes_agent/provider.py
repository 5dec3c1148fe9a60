"""hermes-agent's ``MemoryProvider`` backed by our session: file memory, session search and
our external provider (when our config names one).

hermes-agent runs it beside its built-in memory (``memory.provider: hermes_context``):
``initialize`` opens our session for the hermes session id and the platform user, the system
prompt gets our frozen memory blocks, ``prefetch`` recalls from our external provider,
``sync_turn`` stores the turn in our store and queues it for the provider, and the tools are
``hc_memory``, ``hc_session_search`` and the provider's own. ``on_pre_compress`` hands our
provider's notes to the compaction (hermes-agent passes them on as ``memory_context``).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from agent.memory_provider import MemoryProvider

from hermes_core import Session
from hermes_core.errors import HermesError
from hermes_plugins.hermes_agent.carry import carry_taint
from hermes_plugins.hermes_agent.observer import feed_recall, feed_turn, see_or_blind
from hermes_plugins.hermes_agent.runtime import clean_user, context_home, runtime
from hermes_plugins.hermes_agent.tools import (
    arguments_of,
    guarded,
    our_name,
    schemas_before_session,
    schemas_for_host,
    tool_error,
)

__all__ = ["PROVIDER_NAME", "HermesContextMemory"]

log = logging.getLogger("hermes_context.hermes_agent")
PROVIDER_NAME = "hermes_context"
#: hermes-agent's subagents, cron runs and flushes must not write the user's memory
_PRIMARY = {"", "primary"}


class HermesContextMemory(MemoryProvider):  # type: ignore[misc]
    """Selected with ``memory.provider: hermes_context`` (after ``hermes-context hermes-agent
    install`` put the loader shim in ``$HERMES_HOME/plugins/hermes_context``)."""

    def __init__(self) -> None:
        self._session: Session | None = None
        self._session_id: str | None = None
        self._home: Path | None = None
        self._holder = f"memory-{id(self)}"
        self._writes = True

    @property
    def name(self) -> str:
        return PROVIDER_NAME

    def is_available(self) -> bool:
        return True  # local files and SQLite: nothing to reach

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        def start() -> None:
            if not isinstance(session_id, str) or not session_id.strip():
                raise HermesError(f"initialize needs a session id, got {session_id!r}")
            self._writes = str(kwargs.get("agent_context") or "") in _PRIMARY
            user = clean_user(kwargs.get("user_id"))
            runtime().note_user(session_id, user)
            self._bind(session_id, context_home(kwargs.get("hermes_home")), user)

        guarded("memory initialize", None, start)

    def _bind(self, session_id: str, home: Path, user: str | None) -> None:
        self._release()
        self._session = runtime().acquire(home, session_id, self._holder, user_id=user)
        self._session_id, self._home = session_id, home

    def _release(self) -> None:
        if self._session is not None and self._home is not None and self._session_id:
            runtime().release(self._home, self._session_id, self._holder)
        self._session, self._session_id = None, None

    def _need(self, what: str) -> Session:
        if self._session is None:
            raise HermesError(f"{what} was called before initialize: no session to use")
        return self._session

    # --- prompt and recall --------------------------------------------------------------------

    def system_prompt_block(self) -> str:
        return guarded(
            "system_prompt_block", "", lambda: self._need("system_prompt_block").system_prompt("")
        )

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """The user message as the model will read it, attachments expanded, indexed before
        the model can copy from it (``sync_turn`` comes only after the turn)."""
        guarded("on_turn_start", None, lambda: feed_turn(self._need("on_turn_start"), message))

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        def recall() -> str:
            session = self._need("prefetch")
            if not isinstance(query, str) or not query.strip():
                return ""
            # the same message again, for a hermes-agent path without ``on_turn_start``
            feed_turn(session, query)
            found = session.memory.manager.prefetch(query, session.info)
            feed_recall(session, found)  # the model reads it: a write copying it is held
            return found

        return guarded("prefetch", "", recall)

    # --- after a turn ---------------------------------------------------------------------------

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """The turn goes into our store (and on to our provider, in order, off the thread)."""

        def store() -> None:
            session = self._need("sync_turn")
            if not self._writes:
                return
            if messages is None:
                raise HermesError("sync_turn needs the turn's messages to store it")
            if not isinstance(messages, list):
                raise HermesError(f"messages must be a list, got {type(messages).__name__}")
            session.end_turn([m for m in messages if m.get("role") != "system"])

        guarded("sync_turn", None, store)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        def notes() -> str:
            session = self._need("on_pre_compress")
            found = session.memory.pre_compress(session.info, messages)
            return "\n\n".join(n for n in found if isinstance(n, str) and n.strip())

        return guarded("on_pre_compress", "", notes)

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        def switch() -> None:
            if not isinstance(new_session_id, str) or not new_session_id.strip():
                raise HermesError(f"on_session_switch needs a session id, got {new_session_id!r}")
            if new_session_id == self._session_id:
                return
            session = self._need("on_session_switch")
            user = session.info.user_id
            runtime().note_user(new_session_id, user)
            self._bind(new_session_id, self._home or context_home(None), user)
            if not reset:  # the model keeps what it read: so does the child's index
                carry_taint(session.taint.index, self._need("on_session_switch").taint.index)

        guarded("on_session_switch", None, switch)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        if self._writes and isinstance(messages, list) and messages:
            self.sync_turn("", "", messages=messages)

    def shutdown(self) -> None:
        guarded("memory shutdown", None, self._release)

    # --- tools ----------------------------------------------------------------------------------

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        def schemas() -> list[dict[str, Any]]:
            if self._session is not None:
                return schemas_for_host(self._session)
            return schemas_before_session(runtime().host(context_home(None)))

        return guarded("memory tools", [], schemas)

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        def run() -> str:
            session = self._need(f"tool {tool_name}")
            see_or_blind(session)
            return session.handle_tool_call(our_name(str(tool_name)), arguments_of(args))

        return guarded(f"tool {tool_name}", tool_error(f"{tool_name} failed; see the log"), run)

    def backup_paths(self) -> list[str]:
        """Our home lives inside hermes-agent's unless ``HERMES_CONTEXT_HOME`` moved it."""
        home = context_home(None)
        return [str(home)]
