"""The core's provider conformance suite, run against Supermemory's loopback fake."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("supermemory")

from fake_supermemory import FakeServer
from supermemory_support import host_for

from hermes_core.host import Hermes
from hermes_core.memory.manager import MemoryManager
from hermes_core.testing import ProviderConformance
from hermes_core.types import SessionInfo


def _search(manager: MemoryManager, session: SessionInfo, text: str) -> list[dict[str, Any]]:
    answer = json.loads(
        manager.handle_tool_call(session, "supermemory_search", {"query": text, "limit": 20})
    )
    assert "results" in answer, answer
    return [hit for hit in answer["results"] if text in hit["text"] and hit["document_id"]]


def _forget(manager: MemoryManager, session: SessionInfo, document_id: str) -> None:
    arguments = {"document_id": document_id}
    answer = json.loads(manager.handle_tool_call(session, "supermemory_forget", arguments))
    assert answer.get("ok") or "belongs" in answer.get("error", ""), answer


class TestSupermemoryConformance(ProviderConformance):
    @pytest.fixture
    def provider_host(self, tmp_path: Path, fake: FakeServer, api_key: str) -> Iterator[Hermes]:
        # The client timeout (3 s) is longer than memory.prefetch_timeout (1 s) on purpose:
        # the hung case then exercises the core's timeout and skip-while-stuck logic.
        self.fake = fake
        host = host_for(tmp_path, fake, timeout=3.0)
        yield host
        host.close()

    def forget(self, host: Hermes, manager: MemoryManager, session: SessionInfo, text: str) -> None:
        for document_id in {hit["document_id"] for hit in _search(manager, session, text)}:
            _forget(manager, session, document_id)

    def update(
        self, host: Hermes, manager: MemoryManager, session: SessionInfo, old: str, new: str
    ) -> None:
        hits = _search(manager, session, old)
        assert hits, f"nothing to update: no memory contains {old!r}"
        for document_id in {hit["document_id"] for hit in hits}:
            _forget(manager, session, document_id)
        stored = json.loads(
            manager.handle_tool_call(session, "supermemory_store", {"content": new})
        )
        assert stored.get("ok"), stored

    def tool_search(
        self, host: Hermes, manager: MemoryManager, session: SessionInfo, text: str
    ) -> str:
        arguments = {"query": text, "limit": 20}
        return str(manager.handle_tool_call(session, "supermemory_search", arguments))

    def tool_remember(
        self, host: Hermes, manager: MemoryManager, session: SessionInfo, fact: str
    ) -> bool:
        manager.handle_tool_call(session, "supermemory_store", {"content": fact})
        return True

    def provider_down(self, host: Hermes) -> AbstractContextManager[Any]:
        return self.fake.faulty(status=500)

    def provider_hung(self, host: Hermes) -> AbstractContextManager[Any]:
        return self.fake.faulty(delay=30.0)
