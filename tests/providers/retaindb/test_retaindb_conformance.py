"""The core's provider conformance suite, run against RetainDB on the loopback fake."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("httpx")

from fake_retaindb import FakeRetainDB
from retaindb_support import API_KEY_ENV, provider_config

from hermes_core.host import Hermes
from hermes_core.memory.manager import MemoryManager
from hermes_core.testing import ProviderConformance, make_host
from hermes_core.types import SessionInfo
from hermes_plugins.retaindb import RetainDBProvider


def _provider(host: Hermes) -> RetainDBProvider:
    provider = host.plugins.get_plugin("retaindb")
    assert isinstance(provider, RetainDBProvider)
    return provider


def _tool(manager: MemoryManager, session: SessionInfo, name: str, **args: Any) -> dict[str, Any]:
    answer = json.loads(manager.handle_tool_call(session, name, args))
    assert answer.get("ok"), answer
    return dict(answer)


def _matching(manager: MemoryManager, session: SessionInfo, text: str) -> list[dict[str, Any]]:
    found = _tool(manager, session, "retaindb_search", query=text, limit=50)["results"]
    return [record for record in found if text in record["content"]]


class TestRetainDBConformance(ProviderConformance):
    @pytest.fixture
    def provider_host(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Hermes]:
        fake = FakeRetainDB().start()
        self.fake = fake
        monkeypatch.setenv(API_KEY_ENV, fake.api_key)
        home = tmp_path / "home"
        home.mkdir()
        config = provider_config(fake, drain_timeout=1.0)
        host = make_host(
            home,
            {
                "memory": {"provider": "retaindb", "prefetch_timeout": 1.0},
                "plugin_config": {"retaindb": config},
            },
            builtins=None,
        )
        try:
            yield host
        finally:
            fake.heal()
            host.close()
            fake.stop()

    def settle(self, host: Hermes, manager: MemoryManager) -> None:
        """The manager's queue hands turns to ours; ours must reach the server too."""
        assert manager.flush(10.0), "the sync queue did not drain in 10 s"
        assert _provider(host).flush(10.0), "the RetainDB queue did not drain in 10 s"

    def forget(self, host: Hermes, manager: MemoryManager, session: SessionInfo, text: str) -> None:
        for record in _matching(manager, session, text):
            _tool(manager, session, "retaindb_forget", id=record["id"])

    def update(
        self, host: Hermes, manager: MemoryManager, session: SessionInfo, old: str, new: str
    ) -> None:
        for record in _matching(manager, session, old):
            _tool(manager, session, "retaindb_forget", id=record["id"])
            _tool(manager, session, "retaindb_remember", content=new)

    def tool_search(
        self, host: Hermes, manager: MemoryManager, session: SessionInfo, text: str
    ) -> str:
        arguments = {"query": text, "limit": 50}
        return str(manager.handle_tool_call(session, "retaindb_search", arguments))

    def tool_remember(
        self, host: Hermes, manager: MemoryManager, session: SessionInfo, fact: str
    ) -> bool:
        manager.handle_tool_call(session, "retaindb_remember", {"content": fact})
        return True

    @contextlib.contextmanager
    def provider_down(self, host: Hermes) -> Iterator[None]:
        self.fake.fail(500)
        try:
            yield
        finally:
            self.fake.heal()

    @contextlib.contextmanager
    def provider_hung(self, host: Hermes) -> Iterator[None]:
        self.fake.delay = 30.0
        try:
            yield
        finally:
            self.fake.heal()
