"""Compressor state across a restart: export, JSON, restore into a new compressor with a
new monotonic clock. What must survive: the anti-thrash verdicts, cooldowns (their remaining
time), the learned ratio, the iterative summary, the "nothing to compress" backoff."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from hermes_core.compression.engine import Compressor
from hermes_core.compression.state import MAX_TIMER_S, STATE_VERSION
from hermes_core.llm import LLMError
from hermes_core.types import SummaryContext

DATA = Path(__file__).resolve().parent.parent / "data" / "transcripts"
OVER = 40_000  # a prompt figure over the 24,000 threshold of a 32,000 window


class Clock:
    """A clock the test moves by hand (monotonic or wall)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def transcript() -> list[dict[str, Any]]:
    return json.loads((DATA / "coding-50turns.json").read_text(encoding="utf-8"))


def make(clock: Clock, wall: Clock, summarizer: Any = "fallback", **config: Any) -> Compressor:
    return Compressor(
        {"compression": config} if config else None,
        context_length=32_000,
        summarizer=summarizer,
        clock=clock,
        wall_clock=wall,
    )


def restart(state: Mapping[str, Any], wall: Clock, **kwargs: Any) -> tuple[Compressor, Clock]:
    """A new process: a new monotonic clock that has nothing to do with the old one."""
    clock = Clock(7.0)
    compressor = make(clock, wall, **kwargs)
    compressor.restore_state(json.loads(json.dumps(state)))  # what a store gives back
    return compressor, clock


def two_strikes(compressor: Compressor) -> None:
    messages = transcript()
    for _ in range(2):
        compressor.compress(messages, force=True)
        compressor.update_from_usage({"prompt_tokens": OVER})  # still over: ineffective


def test_two_strikes_stay_blocked_after_a_restart() -> None:
    wall = Clock(1_700_000_000.0)
    compressor = make(Clock(50_000.0), wall)
    two_strikes(compressor)
    assert compressor.should_compress(OVER)[0] is False
    state = compressor.export_state()
    assert state["v"] == STATE_VERSION
    restored, clock = restart(state, wall)
    go, reason = restored.should_compress(OVER)
    assert go is False and reason is not None and "two ineffective" in reason
    assert make(Clock(7.0), wall).should_compress(OVER)[0] is True  # what a blank one does
    clock.advance(299)
    assert restored.should_compress(OVER)[0] is False
    clock.advance(1)
    assert restored.should_compress(OVER) == (True, None)  # the one probe, as in-process
    assert restored.compactions == 2
    assert restored.previous_summary == compressor.previous_summary is not None


def test_wall_time_that_passed_while_down_counts_against_the_block() -> None:
    wall = Clock(1_700_000_000.0)
    compressor = make(Clock(50_000.0), wall)
    two_strikes(compressor)
    state = compressor.export_state()
    wall.advance(200)
    restored, clock = restart(state, wall)
    assert restored.should_compress(OVER)[0] is False
    clock.advance(100)
    assert restored.should_compress(OVER)[0] is True
    wall.advance(-10_000)  # a wall clock that went backwards never lengthens a block
    again, clock = restart(state, wall)
    clock.advance(300)
    assert again.should_compress(OVER)[0] is True


def test_the_learned_ratio_is_kept() -> None:
    wall = Clock(1_700_000_000.0)
    compressor = make(Clock(0.0), wall)
    messages = transcript()
    estimate = compressor.observe(messages)
    compressor.update_from_usage({"prompt_tokens": round(1.37 * estimate)})
    restored, _clock = restart(compressor.export_state(), wall)
    assert restored.running.correction_ratio == pytest.approx(1.37, abs=1e-4)
    assert restored.running.samples == 1
    assert restored.observe(messages) == pytest.approx(1.37 * estimate, abs=2)


def slow_summarizer(
    messages: Sequence[Mapping[str, Any]], previous: str | None, budget: int, ctx: SummaryContext
) -> str:
    raise LLMError("no answer within 60 s", kind="timeout")


def test_a_cooldown_keeps_its_remaining_time() -> None:
    wall = Clock(1_700_000_000.0)
    clock = Clock(10_000.0)
    compressor = make(clock, wall, summarizer=slow_summarizer)
    result = compressor.compress(transcript(), force=True)
    assert result.summarizer == "fallback"  # layer 3, after a 60 s timeout cooldown
    clock.advance(20)
    restored, new_clock = restart(compressor.export_state(), wall, summarizer=slow_summarizer)
    go, reason = restored.should_compress(OVER)
    assert go is False and reason == "summary cooldown: 40 s left after a timeout"
    new_clock.advance(39)
    assert restored.should_compress(OVER)[0] is False
    new_clock.advance(1)
    assert restored.should_compress(OVER)[0] is True


def test_the_nothing_to_compress_backoff_survives() -> None:
    wall = Clock(1_700_000_000.0)
    compressor = Compressor(
        context_length=4_096, summarizer="fallback", clock=Clock(0.0), wall_clock=wall
    )
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "word " * 4_000},
    ]
    tokens = compressor.observe(messages)
    assert compressor.compress(messages).reason.startswith("nothing to compress")
    state = compressor.export_state()
    restored = Compressor(
        context_length=4_096, summarizer="fallback", clock=Clock(3.0), wall_clock=wall
    )
    restored.restore_state(state)
    go, reason = restored.should_compress(tokens)
    assert go is False and reason is not None and reason.startswith("nothing to compress")
    assert restored.should_compress(int(tokens * 1.3))[0] is True  # grown by a quarter


@pytest.mark.parametrize(
    "state",
    [
        None,
        "v1",
        [1, 2],
        {"v": 99, "guard": {}},
        {"v": "1"},
    ],
    ids=repr,
)
def test_unusable_state_is_ignored_with_a_warning(
    state: Any, caplog: pytest.LogCaptureFixture
) -> None:
    compressor = make(Clock(0.0), Clock(0.0))
    blank = compressor.export_state()
    with caplog.at_level(logging.WARNING, logger="hermes_context.compression"):
        compressor.restore_state(state)
    assert "ignoring compressor state" in caplog.text
    assert compressor.export_state() == blank


@pytest.mark.parametrize(
    "section, value",
    [
        ("guard", {"version": 1, "strikes": "two"}),
        ("guard", {"version": 7}),
        ("guard", {"version": 1, "cooldown_s": float("nan")}),
        ("guard", {"version": 1, "pending": {"tokens_before": 1}}),
        ("guard", [1]),
        ("summary", {"previous": 42}),
        ("summary", {"compactions": -1}),
        ("ratio", {"counter": "tiktoken:o200k_base", "value": "fast", "samples": 1}),
        ("ratio", {"counter": "tiktoken:o200k_base", "value": -1.0, "samples": 1}),
        ("backoff", {"nothing_at": "soon"}),
        ("window", {"learned": 1.5, "model": None}),
        ("window", {"overflow_due": "yes"}),
        ("idle", {"idle_for_s": "long"}),
    ],
)
def test_a_malformed_section_is_skipped_and_the_rest_restored(
    section: str, value: Any, caplog: pytest.LogCaptureFixture
) -> None:
    wall = Clock(1_700_000_000.0)
    compressor = make(Clock(50_000.0), wall)
    two_strikes(compressor)
    good = compressor.export_state()
    bad = {**good, section: value}
    with caplog.at_level(logging.WARNING, logger="hermes_context.compression"):
        restored, _clock = restart(bad, wall)
    assert f"ignoring malformed compressor state section {section!r}" in caplog.text
    if section != "guard":
        assert restored.should_compress(OVER)[0] is False  # the strikes came back
    if section != "summary":
        assert restored.compactions == 2


def test_an_empty_state_is_a_new_conversation_not_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    compressor = make(Clock(0.0), Clock(0.0))
    blank = compressor.export_state()
    with caplog.at_level(logging.WARNING, logger="hermes_context.compression"):
        compressor.restore_state({})
    assert caplog.text == "" and compressor.export_state() == blank


def test_a_corrupt_timer_cannot_block_longer_than_the_guard_ever_does() -> None:
    wall = Clock(1_700_000_000.0)
    compressor = make(Clock(0.0), wall)
    state = compressor.export_state()
    state["guard"] = {**state["guard"], "cooldown_s": 1e300, "cooldown_kind": "timeout"}
    restored, clock = restart(state, wall)
    assert restored.should_compress(OVER)[0] is False
    clock.advance(MAX_TIMER_S)
    assert restored.should_compress(OVER)[0] is True


def test_a_ratio_learned_for_another_encoding_is_not_restored() -> None:
    wall = Clock(0.0)
    compressor = make(Clock(0.0), wall)
    messages = transcript()
    compressor.update_from_usage({"prompt_tokens": 2 * compressor.observe(messages)})
    state = compressor.export_state()
    other = Compressor(
        context_length=32_000, model="gpt-4", summarizer="fallback", clock=Clock(0.0)
    )  # cl100k_base, not o200k_base
    other.restore_state(state)
    assert other.running.correction_ratio == 1.0 and other.running.samples == 0


def test_the_exported_state_is_plain_json() -> None:
    compressor = make(Clock(0.0), Clock(0.0))
    two_strikes(compressor)
    state = compressor.export_state()
    assert json.loads(json.dumps(state, allow_nan=False)) == state
