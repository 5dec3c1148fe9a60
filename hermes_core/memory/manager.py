"""The memory manager: recall before a request, sync after it, tools, lifecycle, shutdown.

Why a manager in the core rather than in each provider: the rules that keep a turn safe are
the same for every provider. A provider that hangs must cost at most ``prefetch_timeout`` (and
is skipped while still stuck); one that raises must not break the turn; recalled text must be
scanned and fenced as data; everything handed to a provider must be redacted first; syncing
must never make the user wait, and must land in order. Providers only answer hooks.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final, Protocol

from hermes_core.memory.calls import (
    Call,
    MemoryEvent,
    ShutdownReport,
    StuckCalls,
    landed_writes,
    redacted,
    redacted_messages,
    tool_name,
)
from hermes_core.memory.recall import Recall, screen_recall, wrap_provider_block, wrap_recall
from hermes_core.redact import redact
from hermes_core.types import Finding, SessionInfo, Turn

if TYPE_CHECKING:
    from hermes_core.config.settings import Settings
    from hermes_core.plugins.manager import PluginHost

__all__ = ["CORE_TOOLS", "MemoryEvent", "MemoryManager", "ShutdownReport", "redacted_messages"]

log = logging.getLogger("hermes_context.memory")
CORE_TOOLS: Final = frozenset({"memory", "session_search", "session_recall", "skill_manage"})


class PluginsAndSettings(Protocol):
    """What the manager needs of a host (a :class:`~hermes_core.host.Hermes` has both)."""

    @property
    def plugins(self) -> PluginHost: ...

    @property
    def settings(self) -> Settings: ...


class MemoryManager:
    """Memory for one host: ``prefetch``, ``sync``, ``tools``, ``handle_tool_call`` and the
    lifecycle, usable without the rest of a session loop."""

    def __init__(
        self,
        host: PluginsAndSettings,
        *,
        prefetch_timeout: float | None = None,
        tool_timeout: float = 30.0,
        sync_timeout: float = 30.0,
        lifecycle_timeout: float = 5.0,
        on_event: Callable[[MemoryEvent], None] | None = None,
        scan: Callable[[str], Sequence[Finding]] | None = None,
        include: Callable[[str], bool] | None = None,
        stuck: StuckCalls | None = None,
    ) -> None:
        """``include`` decides which plugins take part (a session with ``skip_memory`` leaves
        the external provider out); ``stuck`` is shared by a host's managers."""
        self.plugins = host.plugins
        default = host.settings.memory.prefetch_timeout
        self.timeout = prefetch_timeout if prefetch_timeout is not None else default
        self.tool_timeout = tool_timeout
        self.on_event = on_event
        self.events: deque[MemoryEvent] = deque(maxlen=1000)  # the newest, for hosts and tests
        self._scan = scan or (lambda text: self.plugins.scan_threat(text, "context"))
        stuck = stuck if stuck is not None else StuckCalls()
        self._stuck: dict[str, Call] = stuck.calls
        self._stuck_lock = stuck.lock
        self._include = include
        self.sync_timeout = sync_timeout
        self.lifecycle_timeout = lifecycle_timeout
        self._owners: dict[str, str] | None = None  # tool name -> plugin, from tools()
        self._queue: queue.Queue[tuple[Turn, SessionInfo] | None] = queue.Queue()
        self._pending = 0
        self._idle = threading.Condition()
        self._synced = 0
        self._closed = False
        self._worker = threading.Thread(
            target=self._sync_loop, name="hermes-memory-sync", daemon=True
        )
        self._worker.start()

    # --- events -------------------------------------------------------------------------------

    def _emit(self, kind: str, **data: Any) -> None:
        event = MemoryEvent(kind, redacted(data))  # provider errors may quote a key
        self.events.append(event)
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:  # a host's listener must not break memory
                log.debug("memory event listener failed", exc_info=True)

    def _implementations(self, hook: str) -> list[str]:
        names = self.plugins.implementations(hook)
        return names if self._include is None else [n for n in names if self._include(n)]

    def _external(self, plugin: str) -> bool:
        record = self.plugins.records.get(plugin)
        return bool(record and record.external_provider)

    def _bounded(self, plugin: str) -> bool:
        """Every plugin but the built-ins gets its own thread and a time limit."""
        record = self.plugins.records.get(plugin)
        return not (record and record.builtin)

    def _call(self, plugin: str, hook: str, timeout: float, **kwargs: Any) -> tuple[bool, Any]:
        """One plugin's hook: inline for a built-in, else bounded (and skipped while stuck)."""

        def call() -> tuple[bool, Any]:
            return self.plugins.call_one(hook, plugin, **kwargs)

        if not self._bounded(plugin):
            return call()
        return self._timed(plugin, call, timeout, hook)

    def _each(self, hook: str, timeout: float, **kwargs: Any) -> list[Any]:
        """Every plugin's answer to ``hook`` (failures and timeouts left out)."""
        answers = []
        for plugin in self._implementations(hook):
            ok, value = self._call(plugin, hook, timeout, **kwargs)
            if ok and value is not None:
                answers.append(value)
        return answers

    # --- recall -------------------------------------------------------------------------------

    def prefetch(self, query: str, session: SessionInfo) -> str:
        """The ``<memory-context>`` block for the user's message ("" when nothing is recalled).

        Each external provider gets ``prefetch_timeout`` seconds on its own thread; one still
        running from an earlier turn is skipped until it returns. Every item is scanned
        (``context`` scope); hits are withheld and reported as ``recall_blocked`` events.
        """
        query = redact(query if isinstance(query, str) else "")
        recalls: list[Recall] = []
        for plugin in self._implementations("memory_prefetch"):
            text = self._recall_from(plugin, query, session)
            if not text:
                continue
            recall = screen_recall(plugin, text, self._scan)
            for excerpt, ids in recall.withheld:
                self._emit("recall_blocked", provider=plugin, patterns=ids, excerpt=excerpt)
            recalls.append(recall)
        return wrap_recall(recalls)

    def _recall_from(self, plugin: str, query: str, session: SessionInfo) -> str | None:
        ok, value = self._call(
            plugin, "memory_prefetch", self.timeout, query=query, session=session
        )
        if not ok:
            return None
        return value if isinstance(value, str) and value.strip() else None

    def _timed(
        self, plugin: str, call: Callable[[], tuple[bool, Any]], timeout: float, hook: str
    ) -> tuple[bool, Any]:
        with self._stuck_lock:
            running = self._stuck.get(plugin)
            if running is not None and not running.done.is_set():
                skipped = True
            else:
                skipped = False
                self._stuck.pop(plugin, None)  # it came back: include it again from now on
        if skipped:
            self._emit("provider_skipped", provider=plugin, hook=hook)
            return False, None
        started = Call(call)
        if not started.done.wait(timeout):
            with self._stuck_lock:
                self._stuck[plugin] = started
            self._emit("provider_timeout", provider=plugin, hook=hook, seconds=timeout)
            log.warning("memory provider '%s' did not answer %s in %.1f s", plugin, hook, timeout)
            return False, None
        ok, value = started.result
        if not ok:
            self._emit("provider_error", provider=plugin, hook=hook, error=str(value))
        return ok, value

    # --- sync ---------------------------------------------------------------------------------

    def sync(self, turn: Turn, session: SessionInfo) -> bool:
        """Queue a completed turn for every provider (FIFO: turn N lands before N+1); returns
        at once. Interrupted or empty turns (no user text or no reply) are not synced."""
        if self._closed or not turn.user.strip() or not turn.assistant.strip():
            return False
        clean = replace(
            turn,
            user=redact(turn.user),
            assistant=redact(turn.assistant),
            messages=tuple(redacted(dict(m)) for m in turn.messages),
        )
        with self._idle:
            self._pending += 1
        self._queue.put((clean, session))
        return True

    def _sync_loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            turn, session = item
            try:
                for plugin in self._implementations("memory_sync"):
                    ok, value = self._call(
                        plugin, "memory_sync", self.sync_timeout, turn=turn, session=session
                    )
                    if not ok and value is not None and not self._bounded(plugin):
                        self._emit(
                            "provider_error", provider=plugin, hook="memory_sync", error=str(value)
                        )
            except BaseException:  # the worker must outlive any provider
                log.exception("memory sync of one turn failed")
            finally:
                with self._idle:
                    self._pending -= 1
                    self._synced += 1
                    self._idle.notify_all()

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every queued turn was handed to the providers; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    # --- tools --------------------------------------------------------------------------------

    def tools(self, session: SessionInfo) -> list[dict[str, Any]]:
        """Every memory tool schema. An external provider's tool named like a core tool (or
        like a tool already offered) is dropped with a ``tool_dropped`` event: core names win."""
        schemas: list[dict[str, Any]] = []
        owners: dict[str, str] = {}
        for plugin in self._implementations("memory_tools"):
            ok, value = self._call(plugin, "memory_tools", self.lifecycle_timeout, session=session)
            if not ok or not isinstance(value, list):
                continue
            for schema in value:
                name = tool_name(schema)
                if name is None:
                    continue
                clash = name in owners or (self._external(plugin) and name in CORE_TOOLS)
                if clash:
                    self._emit("tool_dropped", provider=plugin, tool=name)
                    log.warning("tool '%s' of '%s' dropped: the name is taken", name, plugin)
                    continue
                owners[name] = plugin
                schemas.append(schema)
        self._owners = owners
        return schemas

    def handle_tool_call(self, session: SessionInfo, name: str, arguments: Any) -> str:
        """Run a memory tool; always JSON text. A provider that raises or hangs gets an error
        result for the model, never an exception."""
        if self._owners is None:
            self.tools(session)
        plugin = (self._owners or {}).get(name)
        if plugin is None:
            return json.dumps({"success": False, "error": f"unknown memory tool {name!r}"})
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                return json.dumps({"success": False, "error": "arguments are not valid JSON"})
        if not isinstance(arguments, Mapping):
            return json.dumps({"success": False, "error": "arguments must be a JSON object"})
        args = redacted(dict(arguments)) if self._bounded(plugin) else dict(arguments)
        ok, value = self._call(
            plugin,
            "memory_handle_tool",
            self.tool_timeout,
            session=session,
            name=name,
            arguments=args,
        )
        if not ok:
            return json.dumps({"success": False, "error": f"memory provider '{plugin}' failed"})
        if not isinstance(value, str):
            return json.dumps({"success": False, "error": f"tool {name!r} gave no answer"})
        if name == "memory" and not self._bounded(plugin):
            self._mirror(args, value, session)
        return value

    def _mirror(self, args: Mapping[str, Any], answer: str, session: SessionInfo) -> None:
        """Tell the providers about a built-in memory write that landed (not a staged one)."""
        for action, target, text in landed_writes(args, answer):
            self.on_write(action, target, text, session)

    # --- lifecycle ----------------------------------------------------------------------------

    def system_blocks(self, session: SessionInfo) -> str:
        """Static text for the system prompt (the frozen file-memory snapshot and the like)."""
        blocks = []
        for plugin in self._implementations("memory_system_block"):
            ok, block = self._call(
                plugin, "memory_system_block", self.lifecycle_timeout, session=session
            )
            if not ok or not isinstance(block, str) or not block.strip():
                continue
            if self._bounded(plugin):  # not ours: screened and fenced like recalled text
                recall = screen_recall(plugin, block, self._scan)
                for excerpt, ids in recall.withheld:
                    self._emit("recall_blocked", provider=plugin, patterns=ids, excerpt=excerpt)
                block = wrap_provider_block(recall)
            if block:
                blocks.append(block)
        return "\n\n".join(blocks)

    def session_start(self, session: SessionInfo) -> None:
        self._each("memory_session_start", self.lifecycle_timeout, session=session)

    def session_end(self, session: SessionInfo, reason: str = "closed") -> None:
        self._each("memory_session_end", self.lifecycle_timeout, session=session, reason=reason)

    def session_switch(self, session: SessionInfo, parent_session_id: str) -> None:
        self._each(
            "memory_session_switch",
            self.lifecycle_timeout,
            session=session,
            parent_session_id=parent_session_id,
        )

    def pre_compress(
        self, messages: Sequence[Mapping[str, Any]], session: SessionInfo
    ) -> list[str]:
        """Notes providers want the summariser to see before the middle is compacted."""
        clean = redacted_messages(messages)
        notes = self._each(
            "memory_on_pre_compress", self.lifecycle_timeout, messages=clean, session=session
        )
        return [n for n in notes if isinstance(n, str) and n.strip()]

    def on_write(self, action: str, target: str, content: str, session: SessionInfo | None) -> None:
        """Mirror a built-in memory write to the providers (redacted)."""
        if target not in ("memory", "user") or action not in ("add", "replace", "remove"):
            return
        self._each(
            "memory_on_write",
            self.lifecycle_timeout,
            action=action,
            target=target,
            content=redact(content),
            session=session,
        )

    def close(self, timeout: float = 5.0) -> ShutdownReport:
        """Drain the sync queue for up to ``timeout`` seconds, report what was abandoned and
        stop the worker; the providers keep running (a session ends, the host goes on)."""
        if self._closed and not self._worker.is_alive():
            return ShutdownReport(synced=self._synced, abandoned=[], stuck=self._still_stuck())
        self._closed = True
        self.flush(timeout)
        abandoned: list[str] = []
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                abandoned.append(f"session {item[1].session_id} turn {item[0].turn_index}")
        if abandoned:
            self._emit("sync_abandoned", turns=abandoned)
            log.warning("memory shutdown abandoned %d unsynced turns", len(abandoned))
        self._queue.put(None)
        return ShutdownReport(synced=self._synced, abandoned=abandoned, stuck=self._still_stuck())

    def shutdown(self, timeout: float = 5.0) -> ShutdownReport:
        """:meth:`close`, then shut the providers down (in reverse order): the host is done."""
        report = self.close(timeout)
        for plugin in reversed(self._implementations("memory_shutdown")):
            self._call(plugin, "memory_shutdown", timeout)  # a hung one is left behind
        return ShutdownReport(
            synced=report.synced, abandoned=report.abandoned, stuck=self._still_stuck()
        )

    def _still_stuck(self) -> list[str]:
        with self._stuck_lock:
            return [name for name, call in self._stuck.items() if not call.done.is_set()]
