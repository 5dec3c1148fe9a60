"""``HermesSession``: the Agents SDK's session protocol backed by a hermes-context session.

The SDK reads the history once per run (``get_items``), then appends each step's items
(``add_items``: the user's input before the first request, then every model response with
its tool outputs). Everything goes through one :class:`hermes_core.Session` in the
Responses format, so the store, the compaction, recall and memory sync are ours:

* ``get_items()`` is the start of a run: what is due is compacted there and the compacted
  view is the history the SDK sends;
* ``add_items()`` stores the batch (a batch ending with the model's message ends the turn:
  the memory providers get it, the background review may start) and anchors our token count
  on the usage of the request just answered, read from the run's context (the SDK passes it
  to sessions whose methods take ``wrapper``), when that request was the list we prepared;
* ``model_input_filter`` (``RunConfig(call_model_input_filter=...)``, or
  :meth:`HermesSession.run_config`) prepares *every* request, so a run with many tool calls
  stays under the window too: within a run the SDK grows its list in memory without asking
  the session.

``pop_item`` and ``clear_session`` archive rows, never delete them (``hermes-context sessions
show --all ID`` prints them).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import importlib
import logging
import os
import threading
import weakref
from collections.abc import AsyncIterator, Collection, Mapping
from dataclasses import replace
from typing import Any

from hermes_core.errors import HermesError, InvalidArgument, SessionError
from hermes_core.formats import blank, from_openai
from hermes_core.host.events import EventListener, SessionEvent
from hermes_core.host.hermes import Hermes
from hermes_core.host.session import Session
from hermes_plugins.openai_agents.items import ends_reply, input_items, usage_record
from hermes_plugins.openai_agents.tools import agents_sdk

__all__ = ["HermesSession"]

log = logging.getLogger("hermes_context.openai_agents")

Item = dict[str, Any]


class HermesSession:
    """An Agents SDK session (``Runner.run(agent, input, session=...)``) kept in our store,
    compacted by our compressor, per user."""

    session_settings: Any = None  # the SDK's SessionSettings; None: no item limit

    def __init__(
        self,
        session_id: str,
        *,
        host: Hermes | None = None,
        user_id: str | None = None,
        skip_memory: bool = False,
        toolsets: Collection[str] | None = None,
        workspace: str | os.PathLike[str] | None = None,
        on_event: EventListener | None = None,
    ) -> None:
        if host is not None and not isinstance(host, Hermes):
            raise InvalidArgument.of("host", "a hermes_core.Hermes (Hermes.from_config())", host)
        self._owns_host = host is None
        self.host = host if host is not None else Hermes.from_config()
        self.session_id = session_id
        self.user_id = user_id
        self._options: dict[str, Any] = {
            "user_id": user_id,
            "skip_memory": skip_memory,
            "toolsets": toolsets,
            "workspace": workspace,  # the folder @file: and the git references read
        }
        self._listener = on_event
        self.compactions = 0  # compactions this object saw finish (compressed or pruned)
        try:
            self.hermes = self._open()
        except BaseException:
            if self._owns_host:  # a refused id (another user's) must not leak the host we made
                self.host.close()
            raise
        self._items: list[Item] | None = None  # the SDK's list as we know it (Responses items)
        self._cut = 0  # items before what get_items(limit) handed out
        self._usage: tuple[object, int] = (None, 0)  # the run's Usage and the entries read
        self._request_known = False  # the request being answered is what prepare returned
        self._diverged = False  # a compaction since the SDK took our view (no input filter)
        self._system: str | None = None
        self._prepared: list[Item] | None = None  # what add_items' prepare returned, for _items
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self._thread_lock = threading.Lock()
        self._closed = False

    def _open(self) -> Session:
        return self.host.session(
            self.session_id, message_format="responses", on_event=self._event, **self._options
        )

    def _event(self, event: SessionEvent) -> None:
        status = str(event.data.get("status", ""))
        if event.kind == "compression_finished" and status.startswith(("compressed", "pruned")):
            self.compactions += 1
        if self._listener is not None:
            self._listener(event)

    @contextlib.asynccontextmanager
    async def _lock(self) -> AsyncIterator[None]:
        """Calls one at a time, across tasks *and* threads: ``Runner.run_sync`` runs each call
        on a fresh loop, and two threads may share a session. Within a loop an asyncio lock
        queues the tasks; across loops a thread lock, taken by polling so that a cancelled
        task never leaves it held and the loop is never blocked."""
        loop = asyncio.get_running_loop()
        local = self._locks.get(loop)
        if local is None:
            local = self._locks[loop] = asyncio.Lock()
        async with local:
            while not self._thread_lock.acquire(blocking=False):
                await asyncio.sleep(0.002)
            try:
                yield
            finally:
                self._thread_lock.release()

    def _check_open(self, call: str) -> None:
        if self._closed:
            raise SessionError(
                f"{call}() on closed HermesSession {self.session_id!r}: open a new HermesSession "
                "with the same id to go on (the conversation is in the store)"
            )

    def _host_list(self) -> list[Item]:
        """The SDK's list as we know it; after a restart, our stored view in Responses form."""
        if self._items is None:
            payload = from_openai(self.hermes.messages, blank("responses"))
            items = payload.get("input") if isinstance(payload, Mapping) else payload
            self._items = list(items or [])
        return self._items

    # --- the SDK's session protocol ---------------------------------------------------------

    async def get_items(self, limit: int | None = None, wrapper: Any = None) -> list[Item]:
        """The history to send: the compacted view (compacting first when it is due). With
        ``limit``: the newest ``limit`` items of the conversation as the SDK holds it."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise InvalidArgument.of("limit", "an int or None", limit)
        async with self._lock():
            self._check_open("get_items")
            if limit is not None:
                items = self._host_list()
                self._cut = max(len(items) - max(limit, 0), 0)
                return copy.deepcopy(items[self._cut :])
            known = self._host_list()
            # an empty list is not handed in: the session would remember it as the host's
            # list, and the first real one would then read as a rewritten history
            sent = await self.hermes.aprepare(known) if known else []
            self._items, self._cut, self._prepared = list(sent), 0, None
            self._diverged = self._request_known = False
            return copy.deepcopy(self._items)

    async def add_items(self, items: list[Item], wrapper: Any = None) -> None:
        """Store the SDK's new items; a batch that ends with the model's message ends the
        turn. Nothing is stored or changed when an item cannot be read."""
        batch = input_items(items)
        async with self._lock():
            self._check_open("add_items")
            await self._anchor(wrapper)
            candidate = [*self._host_list(), *batch]
            self._prepared = None
            if ends_reply(batch):
                await self.hermes.aend_turn(candidate)
                self._request_known = False
            else:
                before = self.compactions
                self._prepared = await self.hermes.aprepare(candidate)
                self._diverged = self._diverged or self.compactions != before
                self._request_known = not self._diverged
            self._items = candidate

    async def pop_item(self, wrapper: Any = None) -> Item | None:
        """Take back the newest item (a retry, a correction): its row is archived, not
        deleted; ``None`` when the conversation is empty."""
        async with self._lock():
            self._check_open("pop_item")
            items = self._host_list()
            if not items:
                return None
            popped, rest = items[-1], items[:-1]
            if rest:
                await self.hermes.aprepare(rest)  # a shorter list: the rest is archived
            else:
                await asyncio.to_thread(self._archive_all)
            self._items, self._cut, self._prepared = rest, 0, None
            self._request_known = False
            return copy.deepcopy(popped)

    async def clear_session(self, wrapper: Any = None) -> None:
        """Start the conversation over under the same id: every row is archived (kept, out of
        the active view) and the compaction state is reset; the review's flush runs first."""
        async with self._lock():
            self._check_open("clear_session")
            await asyncio.to_thread(self._archive_all)
            self._items, self._cut, self._prepared = [], 0, None
            self._request_known = self._diverged = False

    def _archive_all(self) -> None:
        """Close our session (the review's flush, the providers' drain), archive its active
        rows with an empty state, and open it again, empty."""
        current = self.hermes.session_id
        self.hermes.close()
        store = self.host.session_store
        if store is not None:
            store.commit_compaction(current, [], [], in_place=True)
            store.save_state(current, {})
        self.hermes = self._open()
        self._system = None

    # --- every request: the input filter and the usage anchor --------------------------------

    async def model_input_filter(self, data: Any) -> Any:
        """``RunConfig.call_model_input_filter``: the request the SDK is about to send,
        prepared by our session (stored, compacted when due) and the agent's instructions
        with our frozen memory blocks."""
        agents_sdk()
        model_input_data = importlib.import_module("agents.run_config").ModelInputData
        given = input_items(data.model_data.input, "model input")
        async with self._lock():
            self._check_open("model_input_filter")
            known = self._host_list()
            full = [*known[: self._cut], *given] if self._cut else given
            sent = self._prepared if self._same(full, known) else None
            if sent is None:  # else add_items just prepared this very list: no second pass
                sent = await self.hermes.aprepare(full)
            self._prepared = None
            self._request_known = True
            instructions = await self._instructions(data.model_data.instructions)
        sent_items: list[Any] = copy.deepcopy(sent)
        return model_input_data(input=sent_items, instructions=instructions)

    @staticmethod
    def _same(given: list[Item], known: list[Item]) -> bool:
        """The SDK's list is the one we know (its ends compared: the SDK copies items)."""
        if len(given) != len(known) or not given:
            return False
        return given[-1] == known[-1] and given[0] == known[0]

    async def _instructions(self, given: str | None) -> str | None:
        if given is None or given == self._system:
            return given
        if not isinstance(given, str):
            return given
        self._system = await asyncio.to_thread(self.hermes.system_prompt, given)
        return self._system

    async def _anchor(self, wrapper: Any) -> None:
        """Anchor our count on the newest request's usage, read from the run's context (SDK
        0.20 and later pass it to sessions whose methods take ``wrapper``)."""
        usage = getattr(wrapper, "usage", None)
        entries = getattr(usage, "request_usage_entries", None)
        if not isinstance(entries, list):
            return
        owner, seen = self._usage
        fresh = entries[seen if owner is usage else 0 :]
        self._usage = (usage, len(entries))
        if fresh:
            await self._anchor_record(fresh[-1])

    async def _anchor_record(self, usage: object) -> None:
        """Record ``usage`` when the request it prices was the list our last prepare returned
        (once per request). A record we cannot read is logged and skipped: it never fails the
        host's turn."""
        if not self._request_known:
            return
        self._request_known = False
        try:
            record = usage_record(usage)
        except HermesError as exc:
            log.warning("session %s: usage not recorded: %s", self.session_id, exc)
            return
        await self.hermes.arecord_usage(record)

    async def on_llm_end(self, usage: object) -> None:
        """What :meth:`run_hooks` calls after each response (SDKs before 0.20)."""
        async with self._lock():
            if not self._closed:
                await self._anchor_record(usage)

    # --- for hosts ----------------------------------------------------------------------------

    async def arecord_usage(self, usage: object) -> None:
        """Anchor the count on a response's usage yourself (an SDK without ``wrapper``):
        ``HermesError`` for a record whose counts are not whole numbers."""
        record = usage_record(usage)
        async with self._lock():
            self._check_open("arecord_usage")
            await self.hermes.arecord_usage(record)

    def run_config(self, base: Any = None) -> Any:
        """``base`` (or a new ``RunConfig``) whose input filter prepares every request here;
        a filter ``base`` already has runs first."""
        config = base if base is not None else agents_sdk().RunConfig()
        theirs = getattr(config, "call_model_input_filter", None)
        if theirs is None:
            return replace(config, call_model_input_filter=self.model_input_filter)

        async def chained(data: Any) -> Any:
            first = theirs(data)
            if asyncio.iscoroutine(first):
                first = await first
            return await self.model_input_filter(replace(data, model_data=first))

        return replace(config, call_model_input_filter=chained)

    def run_hooks(self) -> Any:
        """``RunHooks`` that anchor our count on each response's usage: ``Runner.run(...,
        hooks=session.run_hooks())`` on SDKs before 0.20 (later ones hand the usage to the
        session themselves; passing both records each response once)."""
        from hermes_plugins.openai_agents.tools import usage_hooks

        return usage_hooks(self)

    def tools(self) -> list[Any]:
        """Our memory tools as the SDK's ``FunctionTool`` objects, bound to this session."""
        from hermes_plugins.openai_agents.tools import hermes_tools

        return hermes_tools(self)

    def system_prompt(self, base: str) -> str:
        """``base`` with our frozen memory blocks (what the input filter does to the agent's
        instructions), for a host that sets the instructions itself."""
        self._check_open("system_prompt")
        self._system = self.hermes.system_prompt(base)
        return self._system

    async def call_tool(self, name: str, arguments: str | Mapping[str, Any]) -> str:
        """Run one of our tools; JSON text always, errors included (the model reads them)."""
        if self._closed:
            return '{"success": false, "error": "the session is closed"}'
        try:
            return await self.hermes.ahandle_tool_call(name, arguments)
        except HermesError as exc:
            import json

            return json.dumps({"success": False, "error": str(exc)})

    async def on_overflow(self, status: int, message: str) -> None:
        """The provider refused a request as too long: the next request is compacted at once."""
        await asyncio.to_thread(self.hermes.on_overflow, status, message)

    def close(self) -> None:
        """End our session (the review's flush, the providers' drain); safe to call twice.
        A host made for this session is closed too."""
        if self._closed:
            return
        self._closed = True
        try:
            self.hermes.close()
        finally:
            if self._owns_host:
                self.host.close()

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)

    async def __aenter__(self) -> HermesSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __enter__(self) -> HermesSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
