"""The ``file_memory`` plugin in a real host: frozen snapshots, the tool, user isolation, and
scanning through every loaded ``scan_threat`` plugin."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core.host import Hermes
from hermes_core.markers import hookimpl
from hermes_core.plugins import PluginSpec
from hermes_core.testing import make_host
from hermes_core.types import Finding, SessionInfo, Turn
from hermes_plugins.file_memory import FileMemoryPlugin


class ToyScanner:
    """Stands in for the threat scanner: flags the word EVIL (strict scope only)."""

    def __init__(self) -> None:
        self.scopes: list[str] = []

    @hookimpl
    def scan_threat(self, content: str, scope: str) -> list[Finding]:
        self.scopes.append(scope)
        return [Finding("toy_evil", "override", "toy")] if "EVIL" in content else []


def build(home: Path, **memory: Any) -> Hermes:
    specs = [PluginSpec("file_memory", FileMemoryPlugin, builtin=True)]
    host = make_host(home, {"memory": memory} if memory else {}, builtins=specs)
    host.plugins.register(ToyScanner(), name="toy_scanner")
    return host


@pytest.fixture
def host(hermes_home: Path) -> Iterator[Hermes]:
    with build(hermes_home) as h:
        yield h


def session(sid: str = "s1", user: str | None = None) -> SessionInfo:
    return SessionInfo(session_id=sid, user_id=user)


def tool(host: Hermes, s: SessionInfo, **arguments: Any) -> dict[str, Any]:
    answer = host.plugins.call("memory_handle_tool", session=s, name="memory", arguments=arguments)
    result: dict[str, Any] = json.loads(answer)
    return result


def block(host: Hermes, s: SessionInfo) -> str:
    return "\n".join(host.plugins.call("memory_system_block", session=s))


def test_the_snapshot_is_frozen_for_the_session(host: Hermes) -> None:
    first = session("s1")
    assert tool(host, first, action="add", target="memory", content="uses uv")["success"]
    host.plugins.call("memory_session_start", session=first)
    frozen = block(host, first)
    assert "uses uv" in frozen
    assert tool(host, first, action="add", target="memory", content="runs on Fridays")["success"]
    assert block(host, first) == frozen  # same session: the prompt does not change
    assert "runs on Fridays" in block(host, session("s2"))  # the next session sees it
    host.plugins.call("memory_session_end", session=first, reason="closed")
    assert "runs on Fridays" in block(host, first)  # a resumed session takes a new snapshot


def test_tool_schema_and_unknown_tools(host: Hermes) -> None:
    (tools,) = host.plugins.call("memory_tools", session=session())
    assert [t["function"]["name"] for t in tools] == ["memory"]
    none = host.plugins.call("memory_handle_tool", session=session(), name="other", arguments={})
    assert none is None


def test_writes_are_scanned_by_the_hosts_scanners_in_strict_scope(
    hermes_home: Path,
) -> None:
    specs = [PluginSpec("file_memory", FileMemoryPlugin, builtin=True)]
    with make_host(hermes_home, builtins=specs) as h:
        scanner = ToyScanner()
        h.plugins.register(scanner, name="toy_scanner")
        result = tool(h, session(), action="add", target="user", content="an EVIL plan")
        assert result["success"] is False and "toy_evil" in result["error"]
        assert set(scanner.scopes) == {"strict"}
        assert not (hermes_home / "memories" / "USER.md").exists()


def test_two_users_never_see_each_others_profile(host: Hermes, hermes_home: Path) -> None:
    alice, bob = session("a", "alice"), session("b", "bob")
    assert tool(host, alice, action="add", target="user", content="Alice is vegetarian")["success"]
    assert tool(host, bob, action="add", target="user", content="Bob prefers Rust")["success"]
    assert "Bob" not in block(host, alice) and "vegetarian" in block(host, alice)
    assert "Alice" not in block(host, bob) and "Rust" in block(host, bob)
    assert tool(host, bob, action="remove", target="user", old_text="vegetarian")["reason"] == (
        "no_match"
    )
    assert (hermes_home / "memories" / "users" / "alice" / "USER.md").is_file()


def test_consolidation_count_restarts_after_each_turn(hermes_home: Path) -> None:
    with build(hermes_home, memory_char_limit=20) as h:
        s = session()
        assert tool(h, s, action="add", target="memory", content="x" * 15)["success"]
        for _ in range(3):
            last = tool(h, s, action="add", target="memory", content="y" * 15)
        assert "Stop retrying" in last["error"]
        h.plugins.call("memory_sync", turn=Turn(user="hi", assistant="ok"), session=s)
        assert tool(h, s, action="remove", target="memory", old_text="x")["success"]


def test_switched_off_memory_offers_no_tool_and_no_block(hermes_home: Path) -> None:
    with build(hermes_home, memory_enabled=False, user_profile_enabled=False) as h:
        assert h.plugins.call("memory_tools", session=session()) == []
        assert h.plugins.call("memory_system_block", session=session()) == []


def test_write_approval_stage_through_the_tool(hermes_home: Path) -> None:
    with build(hermes_home, write_approval="stage") as h:
        result = tool(h, session(), action="add", target="memory", content="maybe")
        assert result["staged"] is True
        assert (hermes_home / "pending" / "memory" / f"{result['pending_id']}.json").is_file()
        assert block(h, session("other")) == ""
