"""``Mem0Provider``: the hermes-context external memory provider backed by Mem0.

Every call is bound to the session's principal (``provider_kit.principal``: the canonical
form of ``session.user_id``, ``u-alice``, which Mem0 never trims or refuses; the configured
``user_id`` for a single-user home); search results are filtered by user on the server and
again here; update and delete fetch the record first and refuse another user's. A circuit
breaker pauses calls after repeated failures so a dead service costs no turn its timeout.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import httpx
import mem0  # type: ignore[import-untyped]  # noqa: F401 - missing extra fails at load

from hermes_core import provider_kit
from hermes_core.errors import ProviderError
from hermes_core.markers import hookimpl
from hermes_core.plugins import PluginContext
from hermes_core.redact import redact
from hermes_core.types import SessionInfo, Turn
from hermes_plugins.mem0 import tools
from hermes_plugins.mem0.backend import Mem0Backend, Record
from hermes_plugins.mem0.breaker import CircuitBreaker
from hermes_plugins.mem0.formatting import (
    as_json,
    error,
    owned,
    owner,
    recall_text,
    tool_record,
)
from hermes_plugins.mem0.settings import Mem0Settings, parse_settings

_T = TypeVar("_T")


class Paused(ProviderError):
    """The circuit breaker is open: Mem0 failed repeatedly and calls are paused."""


class Mem0Provider:
    """Recall, sync and four tools over Mem0 (hosted platform or local OSS store)."""

    external_memory_provider = True

    def __init__(
        self,
        context: PluginContext,
        *,
        clock: Callable[[], float] = time.monotonic,
        http_client: httpx.Client | None = None,
    ) -> None:
        self.settings: Mem0Settings = parse_settings(context.config)
        self.log = context.logger
        self.breaker = CircuitBreaker(
            self.settings.breaker_threshold, self.settings.breaker_cooldown, clock
        )
        self.backend = Mem0Backend(self.settings, http_client=http_client)
        self._warned = False

    # --- plumbing ----------------------------------------------------------------------

    def principal(self, session: SessionInfo) -> str:
        """The Mem0 ``user_id`` every call is bound to: the session's user id in its canonical
        form (``u-alice``), else the configured default; the empty user id is refused."""
        return provider_kit.principal(session, self.settings.user_id)

    def _call(self, what: str, function: Callable[[], _T]) -> _T:
        """Run one backend call through the breaker; failures are logged once per streak."""
        if not self.breaker.allow():
            raise Paused(
                f"mem0 is paused for {self.breaker.seconds_left():.0f} s after "
                f"{self.breaker.failures} consecutive failures"
            )
        try:
            result = function()
        except Exception as exc:
            opened = self.breaker.failure()
            detail = redact(" ".join(str(exc).split())[:300])
            if opened:
                self.log.warning(
                    "mem0 %s failed (%s: %s); %d consecutive failures, pausing calls for %.0f s",
                    what,
                    type(exc).__name__,
                    detail,
                    self.breaker.failures,
                    self.settings.breaker_cooldown,
                )
            elif not self._warned:
                self.log.warning("mem0 %s failed (%s: %s)", what, type(exc).__name__, detail)
            self._warned = True
            raise
        self.breaker.success()
        self._warned = False
        return result

    # --- hooks -------------------------------------------------------------------------

    @hookimpl
    def memory_prefetch(self, query: str, session: SessionInfo) -> str | None:
        """The user's memories relevant to ``query``, one a line; None on any failure."""
        if not query.strip():
            return None
        user = self.principal(session)
        top_k = self.settings.top_k
        try:
            records = self._call("recall", lambda: self.backend.search(query, user, top_k))
        except Exception:  # noqa: BLE001 - recall is best effort; _call logged it
            return None
        return recall_text(owned(records, user)[:top_k])

    @hookimpl
    def memory_sync(self, turn: Turn, session: SessionInfo) -> None:
        """Store the turn under the user; raises on failure so the core logs the lost turn."""
        messages = [
            {"role": role, "content": text}
            for role, text in (("user", turn.user), ("assistant", turn.assistant))
            if text.strip()
        ]
        if not messages:
            return
        user = self.principal(session)
        metadata = {"session_id": session.session_id, "source": "hermes-context"}
        self._call("sync", lambda: self.backend.add(messages, user, metadata, self.settings.infer))

    @hookimpl
    def memory_tools(self, session: SessionInfo) -> list[dict[str, Any]]:
        return tools.schemas()

    @hookimpl
    def memory_handle_tool(
        self, session: SessionInfo, name: str, arguments: Mapping[str, Any]
    ) -> str | None:
        """Run a ``mem0_*`` tool for the session's user; every failure is a JSON error."""
        if name not in tools.NAMES:
            return None
        if not isinstance(arguments, Mapping):
            return error("arguments must be a JSON object")
        try:
            user = self.principal(session)
        except provider_kit.InvalidPrincipal as exc:
            return error(str(exc))
        try:
            if name == tools.SEARCH:
                return self._search(arguments, user)
            if name == tools.ADD:
                return self._add(arguments, user, session)
            if name == tools.UPDATE:
                return self._update(arguments, user)
            return self._delete(arguments, user)
        except tools.BadArguments as exc:
            return error(str(exc))
        except Paused as exc:
            return error(f"{exc}; try again later", retryable=True)
        except Exception as exc:  # noqa: BLE001 - the model gets an answer, never a traceback
            return error(f"mem0 could not complete {name} ({type(exc).__name__})", retryable=True)

    @hookimpl
    def memory_forget(self, user_id: str | None) -> dict[str, int]:
        """Delete every memory Mem0 keeps under the user's principal (``delete_all``);
        raises a ProviderError on failure, so the person is reported as not forgotten."""
        user = self.principal(SessionInfo("forget", user_id))
        try:
            deleted = self._call("forget", lambda: self.backend.delete_all(user))
        except Exception as exc:  # noqa: BLE001 - any failure: the person is not forgotten
            raise ProviderError(
                f"mem0 could not delete the user's memories ({type(exc).__name__}: "
                f"{redact(str(exc))[:200]}); nothing is known to be deleted, run forget again"
            ) from None
        # the platform does not say how many: one user's memories, all of them
        return {"memories": deleted} if deleted is not None else {"users": 1}

    @hookimpl
    def memory_shutdown(self) -> None:
        self.backend.close()

    # --- tools -------------------------------------------------------------------------

    def _search(self, arguments: Mapping[str, Any], user: str) -> str:
        tools.check_known(arguments, {"query", "limit"})
        query = tools.text_argument(arguments, "query", limit=4_000)
        limit = tools.limit_argument(arguments, self.settings.top_k)
        records = self._call("search", lambda: self.backend.search(query, user, limit))
        return as_json({"results": [tool_record(r) for r in owned(records, user)[:limit]]})

    def _add(self, arguments: Mapping[str, Any], user: str, session: SessionInfo) -> str:
        tools.check_known(arguments, {"content"})
        content = tools.text_argument(arguments, "content")
        metadata = {"session_id": session.session_id, "source": "hermes-context:tool"}
        message = [{"role": "user", "content": content}]
        records = self._call(
            "add", lambda: self.backend.add(message, user, metadata, self.settings.infer)
        )
        return as_json({"stored": [tool_record(r) for r in records]})

    def _owned_record(self, memory_id: str, user: str) -> Record | None:
        record = self._call("get", lambda: self.backend.get(memory_id))
        return record if record is not None and owner(record) == user else None

    def _update(self, arguments: Mapping[str, Any], user: str) -> str:
        tools.check_known(arguments, {"memory_id", "content"})
        memory_id = tools.text_argument(arguments, "memory_id", limit=200)
        content = tools.text_argument(arguments, "content")
        if self._owned_record(memory_id, user) is None:
            return _not_yours(memory_id)
        self._call("update", lambda: self.backend.update(memory_id, content))
        return as_json({"updated": memory_id, "memory": content})

    def _delete(self, arguments: Mapping[str, Any], user: str) -> str:
        tools.check_known(arguments, {"memory_id"})
        memory_id = tools.text_argument(arguments, "memory_id", limit=200)
        if self._owned_record(memory_id, user) is None:
            return _not_yours(memory_id)
        self._call("delete", lambda: self.backend.delete(memory_id))
        return as_json({"deleted": memory_id})


def _not_yours(memory_id: str) -> str:
    """One answer for unknown and foreign ids, so ids of other users reveal nothing."""
    return error(
        f"no memory with id {memory_id!r} belongs to this user; find ids with mem0_search",
        memory_id=memory_id,
    )
