"""Guided compaction: ``focus_topic`` and ``memory_context`` (hermes-agent's ``compress``
arguments) must change the summary, through the LLM's prompt and in the fallback."""

from __future__ import annotations

import json
from typing import Any

from fake_openai import FakeLLM, answer
from llm_settings import llm_settings

from hermes_core.compression.engine import Compressor
from hermes_core.compression.guidance import Guidance, summary_extra
from hermes_core.config.settings import Settings

FACT = "background: the billing migration touches the invoices table and the tax module"
NOTE = "Provider note: the user prefers PostgreSQL 16 for every new service."


def transcript(turns: int = 30) -> list[dict[str, Any]]:
    """A long chat whose one mention of the billing migration sits deep in the middle, at the
    end of a long message (where the fallback's per-turn line is cut)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for n in range(turns):
        user = f"Step {n}: tidy the logging module, part {n}. " + "Detail. " * 40
        if n == 6:
            user = "Detail. " * 40 + f"{FACT}."
        messages.append({"role": "user", "content": user})
        messages.append({"role": "assistant", "content": f"Done with step {n}. " + "Ok. " * 40})
    return messages


def summary_of(result: Any) -> str:
    return str(result.summary or "")


def test_fallback_keeps_the_focus_and_the_memory_notes() -> None:
    messages = transcript()
    plain = Compressor(Settings(), context_length=16_000, summarizer="fallback")
    unguided = plain.compress(messages, force=True)
    guided_c = Compressor(Settings(), context_length=16_000, summarizer="fallback")
    guided = guided_c.compress(
        messages, force=True, guidance=Guidance("billing migration", memory_context=NOTE)
    )
    assert unguided.status == guided.status == "compressed"
    said = "touches the invoices table and the tax module"
    assert said not in summary_of(unguided)  # the fallback alone cuts it off...
    text = summary_of(guided)
    assert "## Focus: billing migration" in text and said in text  # ...the focus keeps it
    assert "## From memory providers" in text and "PostgreSQL 16" in text
    assert "## From memory providers" not in summary_of(unguided)


def test_llm_prompt_carries_the_focus_and_the_memory_context() -> None:
    with FakeLLM() as llm:
        llm.script(answer("## Goal\nTidy logging.\n\n## Active Task\nBilling migration."))
        compressor = Compressor(llm_settings(llm), context_length=16_000)
        result = compressor.compress(
            transcript(), force=True, guidance=Guidance("billing migration", NOTE)
        )
        prompt = json.loads(llm.requests[0].raw)["messages"][-1]["content"]
    assert result.summarizer == "llm"
    assert "Focus of this compaction: billing migration" in prompt
    assert "=== MEMORY CONTEXT ===" in prompt and "PostgreSQL 16" in prompt


def test_llm_prompt_without_guidance_has_neither() -> None:
    with FakeLLM() as llm:
        llm.script(answer("## Goal\nTidy logging."))
        Compressor(llm_settings(llm), context_length=16_000).compress(transcript(), force=True)
        prompt = json.loads(llm.requests[0].raw)["messages"][-1]["content"]
    assert "Focus of this compaction" not in prompt and "MEMORY CONTEXT" not in prompt


def test_guidance_is_bounded_and_notes_are_not_doubled() -> None:
    guidance = Guidance("  x " * 500, memory_context="m" * 10_000)
    assert guidance.focus is not None and len(guidance.focus) <= 300
    assert len(guidance.memory_context) == 6_000
    assert not Guidance(None, "  ")
    extra = summary_extra(["same note", "other"], Guidance(None, "same note"))
    assert extra["provider_notes"] == ["other"] and extra["memory_context"] == "same note"
    assert summary_extra([], None) == {}
