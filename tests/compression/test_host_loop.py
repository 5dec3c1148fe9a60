"""A host-style loop against the loopback LLM: compress when due, report usage, go on."""

from __future__ import annotations

import itertools
import json
from typing import Any

from fake_openai import FakeLLM, answer

from hermes_core.compression.assemble import is_summary_message
from hermes_core.compression.engine import Compressor
from hermes_core.config.settings import Settings
from hermes_core.transcript.validation import validate_messages

READ = "\n".join(f"{n:5}|    value_{n} = compute(value_{n - 1})  # step {n}" for n in range(1, 120))
REPLY = " ".join(
    f"I checked branch {n} of the parser, the guard on the empty sequence, and the retry path."
    for n in range(40)
)


def turn(i: int) -> list[dict[str, Any]]:
    call = f"call_{i}"
    args = json.dumps({"path": f"src/module_{i}.py"})
    return [
        {"role": "user", "content": f"Step {i}: look at src/module_{i}.py and fix the bug."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call,
                    "type": "function",
                    "function": {"name": "read_file", "arguments": args},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call, "content": json.dumps({"content": READ})},
        {"role": "assistant", "content": f"Fixed module {i}: guarded the empty case. {REPLY}"},
    ]


def test_sixty_turns_compress_at_the_threshold_and_never_thrash(fake_llm: FakeLLM) -> None:
    fake_llm.default = answer("## Goal\nFix the modules one by one.\n\n## Completed Actions\nMany.")
    settings = Settings()
    settings.auxiliary.compression.base_url = fake_llm.base_url
    settings.auxiliary.compression.model = "aux"
    compressor = Compressor(settings, context_length=32_000)
    threshold = compressor.threshold_tokens
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    compacted_at: list[int] = []
    for i in range(60):
        messages.extend(turn(i)[:1])  # the user's new message arrives
        tokens = compressor.observe(messages)
        due, _reason = compressor.should_compress()
        assert due == (tokens >= threshold)  # the trigger is the threshold, nothing else
        if due:
            result = compressor.compress(messages)
            assert result.status in ("compressed", "pruned"), result.reason
            assert result.tokens_after < threshold
            assert compressor.should_compress(compressor.count(result.messages))[0] is False
            messages = result.messages
            compacted_at.append(i)
        sent = list(messages)
        compressor.update_from_usage({"prompt_tokens": compressor.count(sent)}, sent)
        messages.extend(turn(i)[1:])  # the reply, with its tool round
        assert validate_messages(messages) == []
    assert len(compacted_at) >= 3
    assert all(b - a >= 2 for a, b in itertools.pairwise(compacted_at))
    assert validate_messages(messages) == []
    assert sum(1 for m in messages if is_summary_message(m)) <= 1
    summaries = [r for r in fake_llm.requests if r.path.endswith("/chat/completions")]
    assert summaries  # the LLM summarised at least once when pruning was not enough
