"""Issue 15's "done when": two ``Hermes`` objects in two processes, with different homes and
the same DSN, serve one user's sessions alternately. Each sees the other's turns, memory
writes from both land, session search finds them, and another user's data never appears."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path
from typing import Any

import pytest
from two_hosts import host_process


class Host:
    """One host process and its command queues."""

    def __init__(self, context: Any, config: dict[str, Any], home: Path) -> None:
        self.inbox = context.Queue()
        self.outbox = context.Queue()
        self.process = context.Process(
            target=host_process, args=(config, str(home), self.inbox, self.outbox)
        )
        self.process.start()

    def ask(self, kind: str, session_id: str, user: str, text: str) -> Any:
        self.inbox.put((kind, session_id, user, text))
        ok, value = self.outbox.get(timeout=300)
        assert ok, value
        return value

    def stop(self) -> None:
        self.inbox.put(None)
        self.process.join(timeout=120)
        assert self.process.exitcode == 0


@pytest.fixture
def hosts(pg_dsn: str, tmp_path: Path) -> Any:
    config = {
        "sessions": {"backend": "postgres", "dsn": pg_dsn},
        "memory": {"backend": "postgres"},
    }
    context = multiprocessing.get_context("spawn")
    pair = [Host(context, config, tmp_path / name) for name in ("east", "west")]
    yield pair
    for host in pair:
        host.stop()


def test_two_hosts_serve_one_user_alternately(hosts: list[Host]) -> None:
    east, west = hosts
    # another user, on the same database, with words alice will search for
    east.ask("turn", "mallory-chat", "mallory", "the kumquat deploy key is in vault")
    east.ask("remember", "mallory-chat", "mallory", "mallory keeps kumquat notes")

    seen = []
    for turn in range(6):
        host = (east, west)[turn % 2]
        seen = host.ask("turn", "alice-chat", "alice", f"kumquat step {turn} of the rollout")
        # every host sees every earlier turn, whoever served it
        assert seen[-2:] == [
            f"kumquat step {turn} of the rollout",
            f"noted: kumquat step {turn} of the rollout",
        ]
        assert [c for c in seen if c.startswith("kumquat step")] == [
            f"kumquat step {n} of the rollout" for n in range(turn + 1)
        ]
    assert not any("mallory" in c or "vault" in c for c in seen)

    assert east.ask("remember", "alice-chat", "alice", "alice deploys kumquat on fridays")[
        "success"
    ]
    assert west.ask("remember", "alice-chat", "alice", "alice pins kumquat to version 3")["success"]
    prompt = east.ask("prompt", "alice-later", "alice", "")
    assert "alice deploys kumquat on fridays" in prompt
    assert "alice pins kumquat to version 3" in prompt
    assert "mallory" not in prompt

    # a later session, on either host, finds the earlier conversation; never mallory's
    for host in (east, west):
        found = host.ask("search", f"alice-new-{id(host)}", "alice", "kumquat rollout")
        text = json.dumps(found)
        assert "alice-chat" in text
        assert "mallory" not in text and "vault" not in text
