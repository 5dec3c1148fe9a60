"""Memory and session settings proven through ``config.yaml`` and a real host, so a key that
the code stopped reading fails here: a test that builds the objects with explicit arguments
cannot see that (issue 27, item 10)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from pg import pg_dsn

from hermes_core.host import Hermes

__all__ = ["pg_dsn"]


def _host(home: Path, config: dict[str, Any]) -> Hermes:
    path = home / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return Hermes.from_config(path, home=home)


def _memory(session: Any, **arguments: Any) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(session.handle_tool_call("memory", arguments))
    return answer


@pytest.mark.parametrize(("limit", "lands"), [(40, False), (200, True)])
def test_user_char_limit_bounds_user_md(isolated_home: Path, limit: int, lands: bool) -> None:
    note = "The user prefers answers in British English, short."  # 51 characters
    with _host(isolated_home, {"memory": {"user_char_limit": limit}}) as host:
        answer = _memory(host.session("s1"), action="add", target="user", content=note)
    assert answer.get("success", False) is lands, answer
    user_md = isolated_home / "memories" / "USER.md"
    assert (user_md.is_file() and note in user_md.read_text(encoding="utf-8")) is lands
    if not lands:
        assert str(limit) in json.dumps(answer)


def _tool_names(session: Any) -> list[str]:
    return [tool["function"]["name"] for tool in session.tools()]


@pytest.mark.parametrize(
    ("memory_enabled", "user_enabled"), [(False, True), (True, False), (False, False)]
)
def test_each_memory_target_switch_is_read(
    isolated_home: Path, memory_enabled: bool, user_enabled: bool
) -> None:
    memories = isolated_home / "memories"
    memories.mkdir()
    (memories / "MEMORY.md").write_text("The build runs with make ci.", encoding="utf-8")
    (memories / "USER.md").write_text("The user is called Robin.", encoding="utf-8")
    config = {"memory": {"memory_enabled": memory_enabled, "user_profile_enabled": user_enabled}}
    with _host(isolated_home, config) as host:
        session = host.session("s1")
        prompt = session.system_prompt("You are helpful.")
        assert ("make ci" in prompt) is memory_enabled
        assert ("Robin" in prompt) is user_enabled
        if not (memory_enabled or user_enabled):
            assert "memory" not in _tool_names(session)
            return
        for target, enabled in (("memory", memory_enabled), ("user", user_enabled)):
            answer = _memory(session, action="add", target=target, content=f"A note for {target}.")
            assert answer.get("success", False) is enabled, (target, answer)


def test_sessions_pool_size_caps_the_postgres_pool(isolated_home: Path, pg_dsn: str) -> None:
    psycopg_pool = pytest.importorskip("psycopg_pool")
    config = {"sessions": {"backend": "postgres", "dsn": pg_dsn, "pool_size": 2}}
    with _host(isolated_home, config) as host:
        host.session("s1")  # opens the store, and with it the pool
        backend: Any = host.plugins.get_plugin("postgres")
        database = backend.database()
        try:
            held: list[Any] = []
            release = threading.Event()

            def hold() -> None:
                with database.pool.connection():
                    held.append(True)
                    release.wait()

            holders = [threading.Thread(target=hold) for _ in range(2)]
            for thread in holders:
                thread.start()
            while len(held) < 2:
                release.wait(0.01)
            with pytest.raises(psycopg_pool.PoolTimeout):
                database.pool.getconn(timeout=0.5)  # a third connection: over the cap
            release.set()
            for thread in holders:
                thread.join()
        finally:
            database.release()
