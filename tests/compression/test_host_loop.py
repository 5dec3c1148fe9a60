"""A host-style loop against the loopback LLM: compress when due, report usage, go on."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeLLM, answer

from hermes_core.compression.assemble import is_summary_message
from hermes_core.compression.engine import Compressor
from hermes_core.config.settings import Settings
from hermes_core.tokens import count_tokens
from hermes_core.transcript.messages import to_wire
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


# --- a replayed long session, usage reported without the messages -----------------------

DATA = Path(__file__).resolve().parent.parent / "data" / "transcripts"


class ScriptedProvider:
    """Answers each request with a ``usage`` whose prompt count is ``ratio`` times our own
    estimate of what was sent (a provider whose tokenizer counts 30% more than ours)."""

    def __init__(self, ratio: float) -> None:
        self.ratio = ratio
        self.requests: list[int] = []

    def real(self, messages: list[dict[str, Any]]) -> int:
        return round(self.ratio * count_tokens(to_wire(messages)))

    def usage(self, wire: list[dict[str, Any]]) -> dict[str, int]:
        prompt = self.real(wire)
        self.requests.append(prompt)
        return {"prompt_tokens": prompt, "completion_tokens": 50}


def replay(
    compressor: Compressor, recorded: list[dict[str, Any]], provider: ScriptedProvider
) -> tuple[list[tuple[int, int]], int]:
    """A host loop over a recorded session: one request before each assistant message,
    calling only observe / should_compress / compress / update_from_usage(usage).

    Returns (the count the host acted on and the provider's real figure for the same list,
    per request after the first) and the number of compactions."""
    transcript: list[dict[str, Any]] = [recorded[0]]
    pairs: list[tuple[int, int]] = []
    compactions = 0
    for message in recorded[1:]:
        if message["role"] == "assistant":
            acted_on = compressor.observe(transcript)
            if provider.requests:  # from the first usage report on, the count is anchored
                pairs.append((acted_on, provider.real(transcript)))
            if compressor.should_compress()[0]:
                result = compressor.compress(transcript)
                if result.status == "unchanged":  # an early one that would cut too little
                    assert "early compaction" in str(result.reason), result.reason
                    assert compressor.count(transcript) < compressor.threshold_tokens
                else:
                    assert result.status in ("compressed", "pruned"), result.reason
                    transcript, compactions = result.messages, compactions + 1
            compressor.update_from_usage(provider.usage(to_wire(transcript)))
        transcript.append(message)  # in place, as hosts do: the reply, then tool results
    return pairs, compactions


def test_a_replayed_session_never_drifts_from_real_usage_without_the_messages_argument() -> None:
    recorded = json.loads((DATA / "coding-200turns.json").read_text(encoding="utf-8"))
    compressor = Compressor(context_length=64_000, summarizer="fallback")
    threshold = compressor.threshold_tokens
    provider = ScriptedProvider(ratio=1.3)
    pairs, compactions = replay(compressor, recorded, provider)
    assert compactions >= 4 and len(provider.requests) == 200
    for acted_on, real in pairs:  # the count the trigger acts on is the provider's figure
        assert abs(acted_on - real) <= max(3, real // 500), (acted_on, real)
    # so no request went over the threshold (give or take the rounding of one learned ratio)
    assert max(provider.requests) < threshold + 3
    assert compressor.running.correction_ratio == pytest.approx(1.3, abs=0.01)


def test_usage_after_a_compaction_anchors_on_the_list_it_returned() -> None:
    """compress() changed the transcript: the usage that follows is for its output, not for
    the longer list observed before it (anchoring on that would learn a ratio far too low)."""
    recorded = json.loads((DATA / "coding-50turns.json").read_text(encoding="utf-8"))
    compressor = Compressor(context_length=32_000, summarizer="fallback")
    provider = ScriptedProvider(ratio=1.3)
    compressor.observe(recorded)
    result = compressor.compress(recorded, force=True)
    assert result.status == "compressed"
    compressor.update_from_usage(provider.usage(to_wire(result.messages)))
    assert compressor.running.correction_ratio == pytest.approx(1.3, abs=0.01)
    follow_up = [*result.messages, {"role": "user", "content": "and now?"}]
    assert compressor.observe(follow_up) == pytest.approx(provider.real(follow_up), abs=3)


def test_usage_without_messages_uses_the_list_as_observed_even_if_it_grew_in_place() -> None:
    compressor = Compressor(context_length=128_000, summarizer="fallback")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Read the parser and tell me what it does. " * 20},
    ]
    estimate = compressor.observe(messages)
    messages.append({"role": "assistant", "content": "It parses. " * 200})  # before the report
    compressor.update_from_usage({"prompt_tokens": 2 * estimate})
    assert compressor.running.correction_ratio == pytest.approx(2.0)
    assert compressor.observe(messages[:2]) == 2 * estimate


def test_explicit_messages_still_anchor() -> None:
    compressor = Compressor(context_length=128_000, summarizer="fallback")
    sent = [{"role": "user", "content": "hello there " * 50}]
    compressor.observe([{"role": "user", "content": "something else entirely"}])
    compressor.update_from_usage({"prompt_tokens": 500}, sent)
    assert compressor.observe(sent) == 500
