"""``plan_compaction`` through the real plugin host: what a plugin is shown (redacted copies,
the task, the focus, the session), how several answers combine, and isolation."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_core import hookimpl
from hermes_core.compression.engine import Compressor
from hermes_core.compression.guidance import Guidance
from hermes_core.compression.hooks import host_hooks
from hermes_core.compression.result import CompressionResult
from hermes_core.config.settings import Settings
from hermes_core.hookspecs import HOOK_POLICIES
from hermes_core.host import Hermes
from hermes_core.testing import make_host, record_hooks
from hermes_core.types import Message, SessionInfo

SESSION = SessionInfo(session_id="s1", user_id="u1")
SECRET = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


def transcript(rounds: int = 12) -> list[dict[str, Any]]:
    """Requests, ``terminal`` calls with 60-line results, replies; round 4's result quotes a
    key."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for n in range(rounds):
        output = "\n".join(f"test {k} of suite {n} ok" for k in range(60))
        if n == 4:
            output += f"\nexport OPENAI_API_KEY={SECRET}"
        messages += [
            {"role": "user", "content": f"Round {n}: run suite {n}. " + "Context. " * 40},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{n}",
                        "type": "function",
                        "function": {
                            "name": "terminal",
                            "arguments": json.dumps({"command": f"pytest suite_{n}"}),
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"call_{n}", "content": output},
            {"role": "assistant", "content": f"Suite {n} passes. " + "Ok. " * 30},
        ]
    return messages


def result_of(span: Sequence[Message], n: int) -> int:
    return next(i for i, m in enumerate(span) if m.get("tool_call_id") == f"call_{n}")


class Planner:
    """Marks the result of round ``n``; records what it was shown."""

    def __init__(self, n: int, mark: str, *, vandal: bool = False) -> None:
        self.n, self.mark, self.vandal = n, mark, vandal
        self.seen: list[dict[str, Any]] = []

    @hookimpl
    def plan_compaction(
        self, messages: list[Message], task: str, focus: str | None, session: SessionInfo | None
    ) -> dict[int, str]:
        shown = json.dumps(messages)  # as given, before any vandalism
        self.seen.append({"messages": shown, "task": task, "focus": focus, "session": session})
        if self.vandal:
            for message in messages:
                message["content"] = "vandalised"
        return {result_of(messages, self.n): self.mark}


class Broken:
    @hookimpl
    def plan_compaction(self) -> dict[int, str]:
        raise RuntimeError("planner boom")


def compress(
    host: Hermes, session: SessionInfo | None = SESSION, focus: str | None = None
) -> CompressionResult:
    compressor = Compressor(
        Settings(),
        context_length=8_000,
        hooks=host_hooks(host.plugins, session, mode="fallback"),
    )
    result = compressor.compress(transcript(), force=True, guidance=Guidance(focus))
    assert result.status == "compressed", result.reason
    return result


def calls_in(result: CompressionResult, n: int) -> int:
    return sum(1 for m in result.messages if m.get("tool_call_id") == f"call_{n}")


def test_the_hook_is_a_collecting_hook() -> None:
    assert HOOK_POLICIES["plan_compaction"] == ("collect", "0.4.0")


def test_the_plugin_sees_redacted_copies_the_task_the_focus_and_the_session(
    tmp_path: Path,
) -> None:
    host = make_host(tmp_path)
    planner = Planner(4, "keep", vandal=True)
    host.plugins.register(planner, name="planner")
    result = compress(host, focus="suite 4")
    shown = planner.seen[0]
    assert shown["session"] == SESSION and shown["focus"] == "suite 4"
    assert shown["task"].startswith("Round 11: run suite 11.")
    text = json.dumps(transcript())
    assert SECRET in text and SECRET not in shown["messages"]
    assert "[REDACTED:openai_key]" in shown["messages"]
    # the plugin wrote over its copies; the kept result is the original, key and all
    kept = next(m for m in result.messages if m.get("tool_call_id") == "call_4")
    assert SECRET in kept["content"] and "vandalised" not in json.dumps(result.messages)
    host.close()


def test_without_a_session_the_plugin_gets_none(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    planner = Planner(4, "keep")
    host.plugins.register(planner, name="planner")
    compress(host, session=None)
    assert planner.seen[0]["session"] is None and planner.seen[0]["focus"] is None
    host.close()


def test_two_plugins_disagree_and_keep_wins(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    host.plugins.register(Planner(5, "drop"), name="dropper")
    host.plugins.register(Broken(), name="broken")
    host.plugins.register(Planner(5, "keep"), name="keeper")
    result = compress(host)
    assert calls_in(result, 5) == 1 and result.stats["plan"]["answers"] == 2
    assert [e.plugin for e in host.plugins.call_errors] == ["broken"]
    host.close()


def test_one_plugin_drop_is_honoured_and_the_original_archived(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    host.plugins.register(Planner(5, "drop"), name="dropper")
    result = compress(host, focus="suite 5")
    assert result.stats["plan"]["dropped"] == 2  # the call went with its result
    assert calls_in(result, 5) == 0
    assert any(m.get("tool_call_id") == "call_5" for m in result.archived)
    host.close()


def test_no_plugin_no_call_and_no_plan(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    with record_hooks(host) as recorder:
        result = compress(host)
    assert "plan" not in result.stats and recorder.named("plan_compaction") == []
    host.close()
