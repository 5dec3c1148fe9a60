"""The secret shapes of issue 26 (item 4) neither reach the summariser nor stay in the summary
it sends back: URL credentials of any scheme, passwords given to commands, vendor keys."""

from __future__ import annotations

import json
from typing import Any

from fake_openai import FakeLLM, answer
from llm_settings import llm_settings

from hermes_core.compression.assemble import is_summary_message
from hermes_core.compression.engine import Compressor

_B = "aB3dE5fG7hJ9kL2mN4pQ6rS8tV0wX1yZ"
SECRETS = {
    "groq": "gsk_" + _B + _B[:20],
    "xai": "xai-" + _B * 2,
    "redis": "Red1sPw0rd",
    "docker": "D0ckerPw!",
    "sshpass": "Ssh9Pass",
}
LEAKY = (
    f"redis://:{SECRETS['redis']}@cache:6379/0 docker login -u me -p {SECRETS['docker']} "
    f"sshpass -p {SECRETS['sshpass']} ssh root@h GROQ {SECRETS['groq']} XAI {SECRETS['xai']}"
)


def _session() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for turn in range(40):
        messages += [
            {"role": "user", "content": f"step {turn}: {LEAKY}"},
            {"role": "assistant", "content": "ok\n" + "row " * 300},
        ]
    messages.append({"role": "user", "content": "carry on"})
    return messages


def test_new_shapes_neither_leave_nor_stay(fake_llm: FakeLLM) -> None:
    fake_llm.script(answer(f"## Goal\nDeploy.\n\n## Critical Context\n- {LEAKY}"))
    compressor = Compressor(llm_settings(fake_llm), context_length=16_000)
    result = compressor.compress(_session(), force=True)
    assert result.status == "compressed", result.reason and result.summarizer == "llm"
    assert fake_llm.requests
    for request in fake_llm.requests:  # the summariser request
        for name, secret in SECRETS.items():
            assert secret not in request.text, name
    summary = next(m for m in result.messages if is_summary_message(m))
    kept = json.dumps(summary) + (result.summary or "") + (compressor.previous_summary or "")
    for name, secret in SECRETS.items():  # the summary that is kept
        assert secret not in kept, name
    assert "[REDACTED:groq_key]" in summary["content"] and "Deploy." in summary["content"]
