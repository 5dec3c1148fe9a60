"""The core's provider conformance suite, run against this package as installed."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core.host import Hermes
from hermes_core.memory.manager import MemoryManager
from hermes_core.testing import ProviderConformance, make_host
from hermes_core.types import SessionInfo


class TestKeywordMemoryConformance(ProviderConformance):
    @pytest.fixture
    def provider_host(self, tmp_path: Path) -> Iterator[Hermes]:
        config = {"memory": {"provider": "keyword_memory", "prefetch_timeout": 1.0}}
        host = make_host(tmp_path, config, builtins=None)
        yield host
        host.close()

    @contextlib.contextmanager
    def provider_down(self, host: Hermes) -> Iterator[None]:
        plugin: Any = host.plugins.get_plugin("keyword_memory")
        real = plugin._search

        def broken(user: str, query: str) -> list[tuple[int, str]]:
            raise RuntimeError("the database is gone")

        plugin._search = broken
        try:
            yield
        finally:
            plugin._search = real

    @contextlib.contextmanager
    def provider_hung(self, host: Hermes) -> Iterator[None]:
        plugin: Any = host.plugins.get_plugin("keyword_memory")
        real, release = plugin._search, threading.Event()

        def hung(user: str, query: str) -> list[tuple[int, str]]:
            release.wait(30)
            return []

        plugin._search = hung
        try:
            yield
        finally:
            plugin._search = real
            release.set()

    def tool_search(
        self, host: Hermes, manager: MemoryManager, session: SessionInfo, text: str
    ) -> str:
        arguments = {"query": text}
        return str(manager.handle_tool_call(session, "keyword_memory_search", arguments))

    def _ids(self, manager: MemoryManager, session: SessionInfo, text: str) -> list[int]:
        answer = manager.handle_tool_call(session, "keyword_memory_search", {"query": text})
        return [r["id"] for r in json.loads(answer)["results"] if text in r["text"]]

    def forget(self, host: Hermes, manager: MemoryManager, session: SessionInfo, text: str) -> None:
        for memory_id in self._ids(manager, session, text):
            manager.handle_tool_call(session, "keyword_memory_forget", {"id": memory_id})

    def update(
        self, host: Hermes, manager: MemoryManager, session: SessionInfo, old: str, new: str
    ) -> None:
        for memory_id in self._ids(manager, session, old):
            manager.handle_tool_call(
                session, "keyword_memory_update", {"id": memory_id, "text": new}
            )


def test_another_users_id_is_refused(tmp_path: Path) -> None:
    host = make_host(tmp_path, {"memory": {"provider": "keyword_memory"}}, builtins=None)
    manager = MemoryManager(host)
    try:
        from hermes_core.types import Turn

        alice, bob = SessionInfo("a", user_id="alice"), SessionInfo("b", user_id="bob")
        manager.sync(Turn(user="alice likes oolong", assistant="ok"), alice)
        manager.flush()
        answer = manager.handle_tool_call(alice, "keyword_memory_search", {"query": "oolong"})
        memory_id = json.loads(answer)["results"][0]["id"]
        refused = manager.handle_tool_call(bob, "keyword_memory_forget", {"id": memory_id})
        assert "no memory" in json.loads(refused)["error"]
        assert "oolong" in manager.prefetch("oolong?", alice)
    finally:
        manager.shutdown(1.0)
        host.close()
