"""docs/hosts.md's integration runs as written, against a stand-in for the host's LLM client."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Response:
    message: dict[str, Any]
    usage: dict[str, int]


class FakeClient:
    """Answers once with a memory tool call, then with text; records what it was sent."""

    def __init__(self) -> None:
        self.sent: list[list[dict[str, Any]]] = []

    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Response:
        self.sent.append(messages)
        usage = {"prompt_tokens": 40 * len(messages), "completion_tokens": 5}
        if len(self.sent) == 1:
            arguments = {"action": "add", "target": "user", "content": "Works on the API."}
            call = {
                "id": "call_1",
                "type": "function",
                "function": {"name": "memory", "arguments": json.dumps(arguments)},
            }
            return Response({"role": "assistant", "content": None, "tool_calls": [call]}, usage)
        return Response({"role": "assistant", "content": "src/app.py and tests/."}, usage)


def test_the_integration_on_the_hosts_page_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (ROOT / "docs" / "hosts.md").read_text(encoding="utf-8")
    block = re.findall(r"```python\n(.*?)```", text, re.DOTALL)[0]
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    client = FakeClient()
    namespace: dict[str, Any] = {"llm": client, "my_tools": [], "run_my_tool": None}
    exec(compile(block, "docs/hosts.md", "exec"), namespace)
    assert len(client.sent) == 2  # the tool round and the answer
    assert client.sent[1][-1]["role"] == "tool"
    assert json.loads(client.sent[1][-1]["content"])["success"] is True
    profile = tmp_path / "memories" / "users" / "alice" / "USER.md"
    assert "Works on the API." in profile.read_text(encoding="utf-8")
