"""The core's provider conformance suite, run against Honcho on the loopback fake."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("honcho")

from fake_honcho import FakeHoncho

from hermes_core.host import Hermes
from hermes_core.testing import ProviderConformance, make_host
from hermes_core.types import SessionInfo


def _search(manager: Any, session: SessionInfo, text: str) -> list[dict[str, Any]]:
    answer = json.loads(
        manager.handle_tool_call(session, "honcho_search", {"query": text, "limit": 50})
    )
    assert answer["ok"], answer
    return [record for record in answer["results"] if text in record["content"]]


class TestHonchoConformance(ProviderConformance):
    @pytest.fixture
    def provider_host(self, tmp_path: Path, fake: FakeHoncho, honcho_env: str) -> Iterator[Hermes]:
        config = {
            "memory": {"provider": "honcho", "prefetch_timeout": 1.0},
            "plugin_config": {
                "honcho": {
                    "base_url": fake.base_url,
                    "workspace": "conformance",
                    "timeout": 2.0,
                    "max_retries": 0,
                }
            },
        }
        host = make_host(tmp_path, config, builtins=None)
        self.fake = fake  # pytest builds one instance per test, so this is per test
        try:
            yield host
        finally:
            fake.clear_faults()  # release hung handlers before the host drains its queue
            host.close()

    def forget(self, host: Hermes, manager: Any, session: SessionInfo, text: str) -> None:
        records = _search(manager, session, text)
        assert records, f"nothing of {session.user_id}'s contains {text!r}"
        for record in records:
            answer = json.loads(
                manager.handle_tool_call(session, "honcho_forget", {"id": record["id"]})
            )
            assert answer["ok"], answer

    def update(self, host: Hermes, manager: Any, session: SessionInfo, old: str, new: str) -> None:
        records = _search(manager, session, old)
        assert records, f"nothing of {session.user_id}'s contains {old!r}"
        first, *rest = records
        answer = json.loads(
            manager.handle_tool_call(
                session, "honcho_conclude", {"content": new, "replaces": first["id"]}
            )
        )
        assert answer["ok"], answer
        for record in rest:
            manager.handle_tool_call(session, "honcho_forget", {"id": record["id"]})

    def tool_search(self, host: Hermes, manager: Any, session: SessionInfo, text: str) -> str:
        arguments = {"query": text, "limit": 50}
        return str(manager.handle_tool_call(session, "honcho_search", arguments))

    def tool_remember(self, host: Hermes, manager: Any, session: SessionInfo, fact: str) -> bool:
        manager.handle_tool_call(session, "honcho_conclude", {"content": fact})
        return True

    def provider_down(self, host: Hermes) -> AbstractContextManager[Any]:
        return self.fake.faulty("500")

    def provider_hung(self, host: Hermes) -> AbstractContextManager[Any]:
        return self.fake.faulty("delay", seconds=30.0)
