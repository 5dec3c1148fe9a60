"""``SupermemoryProvider``: the hook implementations, each bound to the session's user.

Prefetch searches the user's container and never raises; sync stores the turn as one
document (errors propagate to the core, which logs them); the tools store, search and
forget within the same container. The SDK is imported here at module import time so a
missing extra is reported by the host as "needs its extra".
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from typing import Any

import supermemory  # noqa: F401 - import-time check for the 'supermemory' extra

from hermes_core.errors import ProviderError
from hermes_core.markers import hookimpl
from hermes_core.plugins import PluginContext
from hermes_core.provider_kit import InvalidPrincipal
from hermes_core.types import SessionInfo, Turn
from hermes_plugins.supermemory.backend import BackendError, MetadataValue, SupermemoryBackend
from hermes_plugins.supermemory.formatting import recall_text, turn_content
from hermes_plugins.supermemory.scope import container_tag, principal
from hermes_plugins.supermemory.settings import parse_settings, read_api_key
from hermes_plugins.supermemory.tools import TOOL_NAMES, ToolCall, tool_schemas

#: queries shorter than this (after stripping) start no recall work
MIN_QUERY_CHARS = 3


class _FailureLog:
    """Warn once when calls start failing, stay quiet while they keep failing."""

    def __init__(self, logger: logging.Logger) -> None:
        self._logger = logger
        self._lock = threading.Lock()
        self._failing = False

    def failed(self, what: str, error: BackendError) -> None:
        with self._lock:
            first, self._failing = not self._failing, True
        if first:
            self._logger.warning("supermemory %s failed: %s", what, error)
        else:
            self._logger.debug("supermemory %s failed again: %s", what, error)

    def succeeded(self) -> None:
        with self._lock:
            recovered, self._failing = self._failing, False
        if recovered:
            self._logger.info("supermemory answers again")


class SupermemoryProvider:
    """External memory provider backed by Supermemory (SDK 5.x)."""

    external_memory_provider = True

    def __init__(self, context: PluginContext) -> None:
        self.settings = parse_settings(context.config)
        self.log = context.logger
        self.backend = SupermemoryBackend(self.settings, read_api_key(self.settings))
        self._failures = _FailureLog(self.log)

    def tag_for(self, session: SessionInfo) -> str:
        """The container tag every call for this session is bound to (``hermes_u-alice``);
        the empty user id is refused (:class:`InvalidPrincipal`)."""
        user = principal(session, self.settings.default_user)
        return container_tag(self.settings.container_tag, user)

    # --- hooks ----------------------------------------------------------------------------

    @hookimpl
    def memory_prefetch(self, query: str, session: SessionInfo) -> str | None:
        """Search the user's container for the query; ``None`` on nothing or on failure."""
        text = (query or "").strip()
        if len(text) < MIN_QUERY_CHARS:
            return None
        tag = self.tag_for(session)  # the empty user id raises here: not a backend failure
        try:
            hits = self.backend.search(tag, text, self.settings.max_recall_results, retries=0)
        except BackendError as exc:
            self._failures.failed("recall", exc)
            return None
        except Exception as exc:  # noqa: BLE001 - prefetch must never raise
            self._failures.failed("recall", BackendError(type(exc).__name__))
            return None
        self._failures.succeeded()
        return recall_text(hits)

    @hookimpl
    def memory_sync(self, turn: Turn, session: SessionInfo) -> None:
        """Store the completed turn as one document in the user's container."""
        content = turn_content(turn)
        if not content:
            return
        metadata: dict[str, MetadataValue] = {
            "session_id": session.session_id,
            "turn_index": turn.turn_index,
            "source": "turn",
        }
        tag = self.tag_for(session)
        try:
            self.backend.add(tag, content, metadata)
        except BackendError as exc:
            self._failures.failed("sync", exc)
            raise ProviderError(f"supermemory: the turn was not stored: {exc}") from None
        self._failures.succeeded()

    @hookimpl
    def memory_tools(self, session: SessionInfo) -> list[dict[str, Any]] | None:
        return tool_schemas()

    @hookimpl
    def memory_handle_tool(
        self, session: SessionInfo, name: str, arguments: Mapping[str, Any]
    ) -> str | None:
        if name not in TOOL_NAMES:
            return None
        try:
            tag = self.tag_for(session)
        except InvalidPrincipal as exc:
            return json.dumps({"error": str(exc)})
        call = ToolCall(
            backend=self.backend,
            tag=tag,
            session_id=session.session_id,
            default_limit=self.settings.max_recall_results,
            on_failure=lambda exc: self._failures.failed(name, exc),
        )
        return call.run(name, arguments)

    @hookimpl
    def memory_forget(self, user_id: str | None) -> dict[str, int]:
        """Delete the user's whole container (``DELETE /ns/{tag}``: the tag is theirs
        alone); a failure is raised as a ProviderError saying nothing was deleted."""
        tag = self.tag_for(SessionInfo("forget", user_id))
        try:
            return self.backend.delete_namespace(tag)
        except BackendError as exc:
            raise ProviderError(
                f"supermemory could not delete container {tag}: {exc}; run forget again"
            ) from None

    @hookimpl
    def memory_shutdown(self) -> None:
        """Close the connection pool (nothing is queued: sync runs on the core's worker)."""
        self.backend.close()
