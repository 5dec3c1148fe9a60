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


def test_the_openai_sdk_loop_on_the_hosts_page_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The second example, with the real ``openai`` client against the loopback server: a
    responder plays the model (a memory tool call, then the answer)."""
    from fake_openai import FakeLLM, Recorded, Step
    from sdk_payloads import chat_completion, chat_usage, reply, require_sdk, tool_call

    require_sdk("openai")
    text = (ROOT / "docs" / "hosts.md").read_text(encoding="utf-8")
    block = re.findall(r"```python\n(.*?)```", text, re.DOTALL)[1]
    assert "from openai import OpenAI" in block
    arguments = {"action": "add", "target": "user", "content": "Works on the billing API."}
    calling = {"role": "assistant", "content": None}
    calling["tool_calls"] = [tool_call("call_1", "memory", arguments)]
    answer = {"role": "assistant", "content": "Noted: the billing API."}

    def model(request: Recorded) -> Step:
        sent = request.json["messages"]
        message = answer if sent[-1]["role"] == "tool" else calling
        return reply(chat_completion(message, chat_usage(60 * len(sent), cached=32)))

    with FakeLLM() as llm:
        llm.responder = model
        monkeypatch.setenv("HERMES_HOME", str(tmp_path))
        monkeypatch.setenv("LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("LLM_API_KEY", "sk-local")
        exec(compile(block, "docs/hosts.md", "exec"), {"__name__": "hosts_doc"})
        requests = [r.json for r in llm.requests]
    assert capsys.readouterr().out.strip() == answer["content"]
    assert len(requests) == 2  # the tool round and the answer
    sent = requests[1]["messages"]
    assert sent[2] == {"refusal": None, "annotations": [], **calling}  # as the server sent it
    assert sent[3]["role"] == "tool" and json.loads(sent[3]["content"])["success"] is True
    assert {t["function"]["name"] for t in requests[0]["tools"]} >= {"memory"}
    profile = tmp_path / "memories" / "users" / "alice" / "USER.md"
    assert "Works on the billing API." in profile.read_text(encoding="utf-8")
