"""``Compressor.set_model``: a host switched models mid-conversation; the threshold follows
the new model and window, the conversation's history with the compressor stays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_core.compression.engine import Compressor
from hermes_core.errors import ConfigError

DATA = Path(__file__).resolve().parent.parent / "data" / "transcripts"


def transcript() -> list[dict[str, Any]]:
    return json.loads((DATA / "coding-50turns.json").read_text(encoding="utf-8"))


def test_the_threshold_is_re_derived_for_the_new_window() -> None:
    compressor = Compressor(context_length=128_000, model="gpt-4o", summarizer="fallback")
    assert compressor.threshold_tokens == 96_000
    compressor.set_model("gpt-4.1", context_length=1_000_000)
    assert (compressor.model, compressor.context_length) == ("gpt-4.1", 1_000_000)
    assert compressor.threshold_tokens == 500_000
    compressor.set_model("gpt-4.1", max_tokens=65_535, context_length=200_000)
    assert compressor.threshold_tokens == 100_848  # spec 10 §3's worked example
    compressor.set_model("gpt-4o")  # window and reservation kept
    assert (compressor.context_length, compressor.max_tokens) == (200_000, 65_535)


def test_model_thresholds_apply_to_the_new_model() -> None:
    config = {"compression": {"model_thresholds": {"claude": 0.6, "gemini": 0.3}}}
    compressor = Compressor(config, context_length=1_000_000, model="gpt-4.1")
    assert compressor.threshold_tokens == 500_000
    compressor.set_model("claude-sonnet-4")
    assert compressor.threshold_tokens == 600_000
    assert any("model_thresholds['claude']" in step for step in compressor.threshold_provenance)
    compressor.set_model("gemini-2.5-pro", context_length=2_000_000)
    assert compressor.threshold_tokens == 600_000


def test_the_guard_the_summary_and_the_counters_are_kept() -> None:
    compressor = Compressor(context_length=32_000, model="gpt-4o", summarizer="fallback")
    messages = transcript()
    for _ in range(2):  # two ineffective compactions: blocked
        compressor.compress(messages, force=True)
        compressor.update_from_usage({"prompt_tokens": 40_000})
    summary = compressor.previous_summary
    compressor.set_model("claude-sonnet-4", context_length=48_000)
    assert compressor.threshold_tokens == 36_000
    go, reason = compressor.should_compress(40_000)
    assert go is False and reason is not None and "two ineffective" in reason
    assert compressor.previous_summary == summary is not None
    assert compressor.compactions == 2


def learned(compressor: Compressor, ratio: float) -> float:
    messages = transcript()
    compressor.update_from_usage({"prompt_tokens": round(ratio * compressor.observe(messages))})
    return compressor.running.correction_ratio


def test_the_learned_ratio_is_kept_when_the_encoding_stays() -> None:
    compressor = Compressor(context_length=128_000, model="gpt-4o", summarizer="fallback")
    assert learned(compressor, 1.4) == pytest.approx(1.4, abs=1e-4)
    compressor.set_model("claude-sonnet-4")  # o200k_base stands in for both
    assert compressor.counter.name == "tiktoken:o200k_base"
    assert compressor.running.correction_ratio == pytest.approx(1.4, abs=1e-4)


def test_the_learned_ratio_is_reset_when_the_encoding_changes() -> None:
    compressor = Compressor(context_length=128_000, model="gpt-4o", summarizer="fallback")
    learned(compressor, 1.4)
    compressor.set_model("gpt-4", context_length=32_000)
    assert compressor.counter.name == "tiktoken:cl100k_base"
    assert compressor.running.correction_ratio == 1.0 and compressor.running.samples == 0


def test_a_window_learned_from_an_overflow_belongs_to_its_model() -> None:
    compressor = Compressor(context_length=128_000, model="local-qwen", summarizer="fallback")
    compressor.note_overflow(
        "request (9216 tokens) exceeds the available context size (8192 tokens)"
    )
    compressor.set_model("local-qwen", max_tokens=1_000)
    assert compressor.context_length == 8_192  # same model: the server's n_ctx still holds
    compressor.set_model("gpt-4o")
    assert compressor.context_length == 128_000


def test_an_impossible_window_is_refused_and_changes_nothing() -> None:
    compressor = Compressor(context_length=128_000, model="gpt-4o", summarizer="fallback")
    with pytest.raises(ConfigError, match="max_tokens"):
        compressor.set_model("gpt-4.1", context_length=8_000, max_tokens=8_000)
    assert (compressor.model, compressor.threshold_tokens) == ("gpt-4o", 96_000)
