"""``HonchoProvider``: the hermes-context hooks on top of :class:`HonchoBackend`.

The SDK is imported here at module import time (through the backend), so a host without
the ``honcho`` extra gets "needs its extra: pip install '/path/to/hermes-context[honcho]'" at load.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from typing import Any

import honcho  # type: ignore[import-untyped]  # noqa: F401 - the extra check happens here
import httpx
from honcho.http.exceptions import HonchoError  # type: ignore[import-untyped]

from hermes_core import provider_kit
from hermes_core.errors import ProviderError
from hermes_core.markers import hookimpl
from hermes_core.plugins import PluginContext
from hermes_core.types import SessionInfo, Turn
from hermes_plugins.honcho.backend import HonchoBackend
from hermes_plugins.honcho.formatting import CHARS_PER_TOKEN, is_trivial, query_terms, render
from hermes_plugins.honcho.identity import session_key, user_peer_id
from hermes_plugins.honcho.settings import HonchoSettings, parse_settings
from hermes_plugins.honcho.tools import SCHEMAS, TOOL_NAMES, ToolRunner

#: what a failing backend may raise; anything else is a bug and is logged with its type
_BACKEND_ERRORS = (HonchoError, httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError)
_WARN_EVERY = 60.0  # seconds between repeated warnings about the same failure kind


class HonchoProvider:
    """Honcho memory: recall the user's representation, store turns, offer memory tools."""

    external_memory_provider = True

    def __init__(self, context: PluginContext, *, http_client: httpx.Client | None = None):
        self.settings: HonchoSettings = parse_settings(context.config)
        self.log = context.logger
        self.backend = HonchoBackend(self.settings, self.log, http_client=http_client)
        self.tools = ToolRunner(self.backend)
        #: child session id -> the session whose Honcho conversation it continues
        self._continues: dict[str, str] = {}
        self._warned: dict[str, float] = {}
        self._lock = threading.Lock()

    # --- helpers -----------------------------------------------------------------------

    def _warn_once(self, what: str, exc: BaseException) -> None:
        """One warning per failure kind per minute; never the exception text of a request
        (it can echo headers), only its type and status."""
        kind = f"{what}:{type(exc).__name__}"
        now = time.monotonic()
        with self._lock:
            last = self._warned.get(kind)
            if last is not None and now - last < _WARN_EVERY:
                return
            self._warned[kind] = now
        status = getattr(exc, "status_code", None) or getattr(exc, "status", None)
        suffix = f" (HTTP {status})" if status else ""
        self.log.warning("honcho %s failed: %s%s", what, type(exc).__name__, suffix)

    def _key(self, session: SessionInfo) -> str:
        with self._lock:
            root = self._continues.get(session.session_id)
        if root is not None and self.settings.session_strategy == "per-session":
            session = SessionInfo(session_id=root, user_id=session.user_id)
        return session_key(session, self.settings)

    # --- hooks -------------------------------------------------------------------------

    @hookimpl
    def memory_prefetch(self, query: str, session: SessionInfo) -> str | None:
        """The user's card, Honcho's conclusions and matching past messages for ``query``."""
        if self.settings.recall_mode == "tools" or is_trivial(query):
            return None
        user_peer = user_peer_id(session, self.settings)
        try:
            recalled = self.backend.recall(user_peer, query, query_terms(query))
        except _BACKEND_ERRORS as exc:
            self._warn_once("recall", exc)
            return None
        return render(recalled, self.settings.context_tokens * CHARS_PER_TOKEN)

    @hookimpl
    def memory_sync(self, turn: Turn, session: SessionInfo) -> None:
        """Add the user's and the assistant's messages to the session's Honcho session."""
        user_peer = user_peer_id(session, self.settings)
        extra = {"hermes_session": session.session_id, "turn": turn.turn_index}
        self.backend.add_turn(user_peer, self._key(session), turn.user, turn.assistant, extra)

    @hookimpl
    def memory_session_switch(self, session: SessionInfo, parent_session_id: str) -> None:
        """A compaction child keeps writing to its parent's Honcho session."""
        with self._lock:
            root = self._continues.get(parent_session_id, parent_session_id)
            self._continues[session.session_id] = root

    @hookimpl
    def memory_tools(self, session: SessionInfo) -> list[dict[str, Any]] | None:
        if self.settings.recall_mode == "context":
            return None
        return [json.loads(json.dumps(schema)) for schema in SCHEMAS]

    @hookimpl
    def memory_handle_tool(
        self, session: SessionInfo, name: str, arguments: Mapping[str, Any]
    ) -> str | None:
        if name not in TOOL_NAMES:
            return None
        if self.settings.recall_mode == "context":
            return json.dumps({"ok": False, "error": "honcho tools are off (recall_mode)"})
        try:
            user_peer = user_peer_id(session, self.settings)
        except provider_kit.InvalidPrincipal as exc:
            return json.dumps({"ok": False, "error": str(exc)})
        try:
            return self.tools.run(user_peer, name, arguments)
        except _BACKEND_ERRORS as exc:
            self._warn_once(f"tool {name}", exc)
            return json.dumps(
                {
                    "ok": False,
                    "error": f"Honcho is unavailable ({type(exc).__name__}); try again later "
                    "or continue without it",
                }
            )

    @hookimpl
    def memory_forget(self, user_id: str | None) -> dict[str, int]:
        """Delete the user's peer data (``HonchoBackend.forget_peer``); a failure is raised
        as a ProviderError naming the kind of failure, never the request."""
        user_peer = user_peer_id(SessionInfo("forget", user_id), self.settings)
        try:
            return self.backend.forget_peer(user_peer)
        except _BACKEND_ERRORS as exc:
            raise ProviderError(
                f"honcho could not delete peer {user_peer} ({type(exc).__name__}); part of it "
                "may be deleted: run forget again"
            ) from None

    @hookimpl
    def memory_shutdown(self) -> None:
        """Close the SDK's HTTP connections; there is no local queue to flush."""
        self.backend.close()
