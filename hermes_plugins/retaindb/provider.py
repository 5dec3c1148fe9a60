"""``RetainDBProvider``: recall, write-behind sync and tools for the RetainDB service.

Sync never waits for the network: the turn goes into the SQLite queue
(``$HERMES_HOME/retaindb_queue.db``) and the writer thread delivers it. Recall is a short
synchronous search bound to the session's user. Everything is bound to ``session.user_id``
(sent in its canonical form, ``provider_kit.principal``), or to ``plugin_config.retaindb.user_id``
when the session has none; session ids are sent canonical too (``s-...``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import httpx

from hermes_core import provider_kit
from hermes_core.errors import ProviderError
from hermes_core.markers import hookimpl
from hermes_core.plugins import PluginContext
from hermes_core.types import SessionInfo, Turn
from hermes_plugins.retaindb.client import RetainDBClient, RetainDBError
from hermes_plugins.retaindb.formatting import owned, recall_text
from hermes_plugins.retaindb.queue import DeliveryFailed, QueuedTurn, WriteBehindQueue
from hermes_plugins.retaindb.settings import RetainDBSettings, parse_settings, read_api_key
from hermes_plugins.retaindb.tools import TOOL_NAMES, TOOL_SCHEMAS, RetainDBTools

QUEUE_FILE = "retaindb_queue.db"


def session_key(session: SessionInfo) -> str:
    """The ``session_id`` sent to RetainDB: the host's, in its canonical form (``s-chat-42``)."""
    return provider_kit.canonical_id(session.session_id, provider_kit.SESSION_KIND)


class RetainDBProvider:
    """The ``retaindb`` external memory provider."""

    external_memory_provider = True

    def __init__(
        self,
        context: PluginContext,
        *,
        transport: httpx.BaseTransport | None = None,
        start_writer: bool = True,
    ) -> None:
        self.settings: RetainDBSettings = parse_settings(context.config)
        self._log = context.logger
        api_key = read_api_key(self.settings)
        self.client = RetainDBClient(
            self.settings.base_url,
            api_key,
            self.settings.project,
            timeout=self.settings.timeout,
            transport=transport,
        )
        self.tools = RetainDBTools(self.client, self.settings)
        self.queue = WriteBehindQueue(
            context.home / QUEUE_FILE,
            self._deliver,
            max_attempts=self.settings.max_attempts,
            backoff_base=self.settings.backoff_base,
            backoff_cap=self.settings.backoff_cap,
            logger=self._log,
        )
        self._recall_failing = False
        self._recall_paused_until = 0.0
        self._closed = False
        if start_writer:
            self.queue.start()  # replays rows an earlier process left pending

    def principal(self, session: SessionInfo) -> str:
        """The ``user_id`` every call for ``session`` is bound to, in its canonical form
        (``u-alice``; the configured ``user_id`` without one); the empty user id is refused."""
        return provider_kit.principal(session, self.settings.user_id)

    # --- hooks -------------------------------------------------------------------------------

    @hookimpl
    def memory_prefetch(self, query: str, session: SessionInfo) -> str | None:
        if not query.strip():
            return None
        if time.monotonic() < self._recall_paused_until:
            return None  # the last recall timed out: do not make this turn wait too
        user_id = self.principal(session)
        try:
            found = self.client.search(
                user_id, query, limit=self.settings.top_k, timeout=self.settings.recall_timeout
            )
        except RetainDBError as exc:
            if exc.timed_out:
                self._recall_paused_until = time.monotonic() + self.settings.recall_cooldown
            if not self._recall_failing:
                self._recall_failing = True
                self._log.warning("RetainDB recall failed, continuing without it: %s", exc)
            return None
        self._recall_failing = False
        mine = owned(found, user_id, self.settings.project)
        return recall_text(mine, query, self.settings.snippet_chars)

    @hookimpl
    def memory_sync(self, turn: Turn, session: SessionInfo) -> None:
        if not (turn.user.strip() or turn.assistant.strip()):
            return
        payload = {
            "content": f"User: {turn.user}\nAssistant: {turn.assistant}",
            "metadata": {"kind": "turn", "turn_index": turn.turn_index},
        }
        self.queue.enqueue(self.principal(session), session_key(session), payload)

    @hookimpl
    def memory_tools(self, session: SessionInfo) -> list[dict[str, Any]] | None:
        return [dict(schema) for schema in TOOL_SCHEMAS]

    @hookimpl
    def memory_handle_tool(
        self, session: SessionInfo, name: str, arguments: Mapping[str, Any]
    ) -> str | None:
        if name not in TOOL_NAMES:
            return None
        args: Mapping[str, Any] = arguments if isinstance(arguments, Mapping) else {}
        try:
            user_id = self.principal(session)
        except provider_kit.InvalidPrincipal as exc:
            return json.dumps({"ok": False, "error": str(exc)})
        return self.tools.handle(user_id, session_key(session), name, args)

    @hookimpl
    def memory_forget(self, user_id: str | None) -> dict[str, int]:
        """Drop the user's queued turns (so none is sent later), then delete every memory
        RetainDB keeps for them in the project; a failure is raised as a ProviderError."""
        user = self.principal(SessionInfo("forget", user_id))
        queued = self.queue.forget(user)
        try:
            deleted = self.client.delete_user(user)
        except RetainDBError as exc:
            raise ProviderError(
                f"retaindb could not delete the user's memories ({exc}); {queued} queued "
                "turn(s) were dropped; run forget again"
            ) from None
        return {"queued turns": queued, "memories": deleted}

    @hookimpl
    def memory_shutdown(self) -> None:
        self.close()

    # --- helpers -----------------------------------------------------------------------------

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every queued turn was delivered (or parked); False on timeout."""
        return self.queue.flush(timeout)

    def close(self) -> None:
        """Drain for ``drain_timeout`` s; what is left stays queued for the next start."""
        if self._closed:
            return
        self._closed = True
        left = self.queue.close(self.settings.drain_timeout)
        self.client.close()
        if left["pending"]:
            self._log.warning(
                "RetainDB: %d turn(s) not delivered yet; they stay in %s and are sent at the "
                "next start",
                left["pending"],
                self.queue.path,
            )

    def _deliver(self, turn: QueuedTurn) -> None:
        """The queue's sender: one POST per row, keyed by the row's idempotency key."""
        try:
            self.client.remember(
                turn.user_id,
                str(turn.payload.get("content", "")),
                idempotency_key=turn.idempotency_key,
                session_id=turn.session_id,
                metadata=dict(turn.payload.get("metadata") or {}),
            )
        except RetainDBError as exc:
            raise DeliveryFailed(str(exc), retryable=exc.retryable) from None
