"""``hermes_core.compress(focus=...)``: the one-shot front door takes a focus like a session
does, and it reaches the LLM summariser's request and the fallback summary."""

from __future__ import annotations

import json

import pytest
from fake_openai import FakeLLM, answer
from llm_settings import llm_settings
from test_guidance import FACT, transcript

import hermes_core as hc


def test_compress_focus_reaches_the_llm_request(fake_llm: FakeLLM) -> None:
    fake_llm.script(answer("## Goal\nTidy logging.\n\n## Active Task\nBilling migration."))
    result = hc.compress(
        transcript(),
        context_length=16_000,
        config=llm_settings(fake_llm),
        summarizer="llm",
        force=True,
        focus="billing migration",
    )
    prompt = json.loads(fake_llm.requests[0].raw)["messages"][-1]["content"]
    assert result.summarizer == "llm"
    assert "Focus of this compaction: billing migration" in prompt


def test_compress_focus_reaches_the_fallback() -> None:
    common = {"context_length": 16_000, "summarizer": "fallback", "force": True}
    plain = hc.compress(transcript(), **common)  # type: ignore[arg-type]
    guided = hc.compress(transcript(), focus="billing migration", **common)  # type: ignore[arg-type]
    said = FACT.split(": ", 1)[1]
    assert said not in str(plain.summary)
    assert "## Focus: billing migration" in str(guided.summary) and said in str(guided.summary)


@pytest.mark.parametrize("bad", [3, ["billing"], b"billing"])
def test_compress_refuses_a_focus_that_is_not_text(bad: object) -> None:
    with pytest.raises(hc.InvalidArgument, match="focus must be text or None"):
        hc.compress(transcript(), context_length=16_000, focus=bad)  # type: ignore[arg-type]
