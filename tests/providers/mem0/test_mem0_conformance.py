"""The core's provider conformance suite, run against Mem0 in local mode (real qdrant and
SDK, loopback embeddings) and in platform mode (real MemoryClient, loopback REST fake)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mem0")

from fake_mem0 import FakeMem0
from mem0_support import API_KEY, oss_config

from hermes_core.host import Hermes
from hermes_core.testing import ProviderConformance, make_host
from hermes_core.types import SessionInfo


class _Mem0Adapters(ProviderConformance):
    """forget/update through the mem0_* tools; down/hung through the fake's faults."""

    fake: FakeMem0

    def _matching(self, manager: Any, session: SessionInfo, text: str) -> list[dict[str, Any]]:
        answer = manager.handle_tool_call(session, "mem0_search", {"query": text, "limit": 50})
        return [r for r in json.loads(answer)["results"] if text in r["memory"]]

    def forget(self, host: Hermes, manager: Any, session: SessionInfo, text: str) -> None:
        for record in self._matching(manager, session, text):
            answer = manager.handle_tool_call(session, "mem0_delete", {"memory_id": record["id"]})
            assert json.loads(answer) == {"deleted": record["id"]}

    def update(self, host: Hermes, manager: Any, session: SessionInfo, old: str, new: str) -> None:
        records = self._matching(manager, session, old)
        assert records, f"no memory holds {old}"
        for record in records:
            content = record["memory"].replace(old, new) if new.count(old) == 0 else new
            arguments = {"memory_id": record["id"], "content": content}
            answer = json.loads(manager.handle_tool_call(session, "mem0_update", arguments))
            assert answer.get("updated") == record["id"], answer

    def tool_search(self, host: Hermes, manager: Any, session: SessionInfo, text: str) -> str:
        return str(manager.handle_tool_call(session, "mem0_search", {"query": text, "limit": 50}))

    def tool_remember(self, host: Hermes, manager: Any, session: SessionInfo, fact: str) -> bool:
        manager.handle_tool_call(session, "mem0_add", {"content": fact})
        return True

    @contextlib.contextmanager
    def _fault(self, fault: int | str) -> Iterator[None]:
        self.fake.set_fault(fault)
        try:
            yield
        finally:
            self.fake.set_fault(None)

    def provider_down(self, host: Hermes) -> contextlib.AbstractContextManager[Any]:
        return self._fault(500)

    def provider_hung(self, host: Hermes) -> contextlib.AbstractContextManager[Any]:
        return self._fault("delay")


class TestMem0LocalConformance(_Mem0Adapters):
    @pytest.fixture
    def provider_host(self, tmp_path: Path, fake: FakeMem0, mem0_env: None) -> Iterator[Hermes]:
        self.fake = fake
        settings = {
            "mode": "oss",
            "oss_config": oss_config(tmp_path, fake.url, {"$env": "FAKE_OPENAI_KEY"}),
            "infer": False,
            "timeout": 0.3,
        }
        config = {
            "memory": {"provider": "mem0", "prefetch_timeout": 1.0},
            "plugin_config": {"mem0": settings},
        }
        environ = {"FAKE_OPENAI_KEY": "loopback-only"}
        host = make_host(tmp_path / "home", config, builtins=None, environ=environ)
        yield host
        host.close()


class TestMem0PlatformConformance(_Mem0Adapters):
    @pytest.fixture
    def provider_host(self, tmp_path: Path, fake: FakeMem0, mem0_env: None) -> Iterator[Hermes]:
        self.fake = fake
        settings = {"mode": "platform", "host": fake.url, "infer": False, "timeout": 0.3}
        config = {
            "memory": {"provider": "mem0", "prefetch_timeout": 1.0},
            "plugin_config": {"mem0": settings},
        }
        host = make_host(tmp_path / "home", config, builtins=None)
        assert API_KEY  # read from MEM0_API_KEY by the provider (mem0_env)
        yield host
        host.close()
