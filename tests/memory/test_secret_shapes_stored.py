"""The secret shapes of issue 26 (item 4) are kept out of what memory stores and sends: the
bodies handed to memory providers, MEMORY.md (and anything else the memory tool writes under
the home), and the RetainDB write-behind queue on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_core.markers import hookimpl
from hermes_core.memory.manager import MemoryManager
from hermes_core.testing import make_host
from hermes_core.types import SessionInfo, Turn

_B = "aB3dE5fG7hJ9kL2mN4pQ6rS8tV0wX1yZ"
SECRETS = {
    "redis url": ("redis://:Red1sPw0rd@cache:6379/0", "Red1sPw0rd"),
    "amqp url": ("amqp://app:Amqp9Pass@mq:5672/", "Amqp9Pass"),
    "docker login": ("docker login -u me -p D0ckerPw9 registry.io", "D0ckerPw9"),
    "sshpass": ("sshpass -p Ssh9Pass ssh root@h", "Ssh9Pass"),
    "groq key": ("GROQ_KEY " + "gsk_" + _B + _B[:20], "gsk_" + _B),
    "xai key": ("key xai-" + _B * 2, "xai-" + _B),
}
ALICE = SessionInfo("s1", user_id="alice")


def _on_disk(root: Path) -> str:
    return "".join(
        p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file()
    )


class _Recorder:
    external_memory_provider = True

    def __init__(self) -> None:
        self.seen: list[Any] = []

    @hookimpl
    def memory_sync(self, turn: Turn, session: SessionInfo) -> None:
        self.seen.append(turn)

    @hookimpl
    def memory_prefetch(self, query: str, session: SessionInfo) -> str | None:
        self.seen.append(query)
        return None

    @hookimpl
    def memory_on_write(self, action: str, target: str, content: str, session: Any) -> None:
        self.seen.append(content)


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_provider_bodies_are_redacted(tmp_path: Path, name: str) -> None:
    text, secret = SECRETS[name]
    with make_host(tmp_path) as host:
        recorder = _Recorder()
        host.plugins.register(recorder, name="recorder")
        manager = MemoryManager(host, prefetch_timeout=1.0)
        manager.prefetch(f"what about {text}", ALICE)
        manager.sync(Turn(user=f"use {text}", assistant=f"ok, {text}"), ALICE)
        manager.flush(5)
        manager.shutdown(1.0)
    sent = repr(recorder.seen)
    assert recorder.seen and secret not in sent and "[REDACTED:" in sent


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_the_memory_tool_stores_none_of_them(tmp_path: Path, name: str) -> None:
    text, secret = SECRETS[name]
    with make_host(tmp_path / "home", builtins=None) as host:
        session = host.session("s1")
        answer = session.handle_tool_call(
            "memory", {"action": "add", "target": "memory", "content": f"Deploy notes: {text}"}
        )
        session.close()
    assert secret not in _on_disk(tmp_path / "home"), answer
    assert secret not in answer


def test_the_retaindb_queue_on_disk_holds_none_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("httpx")
    from hermes_core.testing import plugin_context
    from hermes_plugins.retaindb import RetainDBProvider

    monkeypatch.setenv("RETAINDB_TEST_KEY", "test-key-1234567890")
    config = {
        "base_url": "http://127.0.0.1:9",
        "api_key_env": "RETAINDB_TEST_KEY",
        "project": "p1",
    }
    with make_host(tmp_path / "home") as host:
        provider = RetainDBProvider(plugin_context("retaindb", tmp_path / "home", config))
        host.plugins.register(provider, name="retaindb")
        manager = MemoryManager(host, prefetch_timeout=0.5)
        for text, _secret in SECRETS.values():
            manager.sync(Turn(user=f"use {text}", assistant="done"), ALICE)
        manager.flush(5)
        rows = json.dumps(provider.queue.rows())
        provider.memory_sync(Turn(user=f"raw {SECRETS['groq key'][0]}", assistant=""), ALICE)
        disk = _on_disk(tmp_path / "home") + json.dumps(provider.queue.rows())
        manager.shutdown(0.5)
    assert "[REDACTED:" in rows
    for _text, secret in SECRETS.values():
        assert secret not in disk
