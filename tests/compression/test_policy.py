"""Compression policy: threshold resolution, budgets, cooldowns and the anti-thrash guard."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from hermes_core.compression.policy import (
    DEFAULT_COOLDOWN_S,
    MAX_STRIKES,
    NO_PROVIDER_COOLDOWN_S,
    NOTHING_TO_COMPRESS_BACKOFF_S,
    PROBE_AFTER_S,
    TIMEOUT_LADDER_S,
    CompressionGuard,
    Threshold,
    from_settings,
    resolve_threshold,
    summary_budget,
    tail_budget,
    tail_message_floor,
)
from hermes_core.config.settings import CompressionSettings


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


THRESHOLD = 100_000
BEFORE = 120_000
NO_SAVINGS = 120_000
EFFECTIVE = 50_000


def make_guard() -> tuple[CompressionGuard, FakeClock]:
    clock = FakeClock()
    return CompressionGuard(clock=clock), clock


def compact(guard: CompressionGuard, summarizer: str | None = "llm", probe: bool = False) -> None:
    guard.record_compaction(
        tokens_before=BEFORE, tokens_after=60_000, summarizer=summarizer, probe=probe
    )


def strike(guard: CompressionGuard) -> None:
    compact(guard)
    assert guard.record_usage(NO_SAVINGS, THRESHOLD) == "ineffective"


# --------------------------------------------------------------------------- threshold


@pytest.mark.parametrize(
    ("context_length", "max_tokens", "expected"),
    [
        (128_000, 0, 96_000),
        (200_000, 0, 150_000),
        (1_000_000, 0, 500_000),
        (200_000, 65_535, 100_848),
    ],
)
def test_worked_examples(context_length: int, max_tokens: int, expected: int) -> None:
    result = resolve_threshold(context_length=context_length, max_tokens=max_tokens)
    assert result.tokens == expected
    assert result.window == context_length - max_tokens
    assert result.provenance[-1] == f"trigger at {expected:,} tokens"


def test_provenance_of_a_small_window() -> None:
    result = resolve_threshold(context_length=128_000)
    assert result == Threshold(
        tokens=96_000,
        window=128_000,
        percent=0.75,
        provenance=(
            "window 128,000 tokens",
            "threshold 0.50 (the default)",
            "raised to 0.75: window 128,000 < 512,000",
            "trigger at 96,000 tokens",
        ),
    )


def test_provenance_names_the_output_reservation() -> None:
    result = resolve_threshold(context_length=200_000, max_tokens=65_535)
    assert result.provenance[0] == "window 134,465 tokens (context 200,000 - max_tokens 65,535)"
    assert "raised to 0.75: context 200,000 < 512,000" in result.provenance


def test_non_positive_max_tokens_means_no_reservation() -> None:
    assert resolve_threshold(context_length=128_000, max_tokens=-5).window == 128_000


def test_longest_model_key_wins_case_insensitively() -> None:
    table = {"glm": 0.40, "GLM-5": 0.60, "claude": 0.30}
    result = resolve_threshold(context_length=1_000_000, model="glm-5.2", model_thresholds=table)
    assert result.tokens == 600_000
    assert "threshold 0.60 from model_thresholds['GLM-5'] (model glm-5.2)" in result.provenance
    short = resolve_threshold(context_length=1_000_000, model="zai/GLM-4", model_thresholds=table)
    assert short.tokens == 400_000
    assert "threshold 0.40 from model_thresholds['glm'] (model zai/GLM-4)" in short.provenance


def test_unmatched_or_missing_model_uses_config() -> None:
    table = {"glm": 0.40, "": 0.10}
    for model in ("gpt-4o", None, ""):
        result = resolve_threshold(
            context_length=1_000_000, model=model, threshold=0.55, model_thresholds=table
        )
        assert result.tokens == 550_000
        assert "threshold 0.55 from config" in result.provenance


def test_floor_applies_only_below_512k() -> None:
    at_floor = resolve_threshold(context_length=512_000)
    assert at_floor.tokens == 256_000
    assert not any(step.startswith("raised") for step in at_floor.provenance)
    below = resolve_threshold(context_length=511_999)
    assert below.tokens == int(511_999 * 0.75)


def test_floor_never_lowers_a_higher_percent() -> None:
    result = resolve_threshold(context_length=128_000, threshold=0.80)
    assert result.tokens == 102_400
    assert result.percent == 0.80
    assert not any(step.startswith("raised") for step in result.provenance)


def test_85_percent_cap() -> None:
    result = resolve_threshold(context_length=128_000, threshold=0.95)
    assert result.tokens == 108_800
    assert result.percent == 0.85
    assert "capped at 85% of the window: 108,800" in result.provenance


def test_threshold_tokens_cap() -> None:
    result = resolve_threshold(context_length=128_000, threshold_tokens=90_000)
    assert result.tokens == 90_000
    assert result.provenance[-2:] == (
        "capped by threshold_tokens: 90,000",
        "trigger at 90,000 tokens",
    )
    loose = resolve_threshold(context_length=128_000, threshold_tokens=200_000)
    assert loose.tokens == 96_000
    assert not any("threshold_tokens" in step for step in loose.provenance)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"context_length": 0}, "context_length must be positive"),
        ({"context_length": -10}, "context_length must be positive"),
        ({"context_length": 8_000, "max_tokens": 8_000}, "must be smaller than context_length"),
        ({"context_length": 8_000, "max_tokens": 9_000}, "must be smaller than context_length"),
        ({"context_length": 8_000, "threshold": 0.0}, "threshold must be a fraction"),
        ({"context_length": 8_000, "threshold": 1.5}, "threshold must be a fraction"),
        ({"context_length": 8_000, "threshold_tokens": 0}, "threshold_tokens must be positive"),
        ({"context_length": 8_000, "model_thresholds": {"x": 2.0}}, "model_thresholds['x']"),
    ],
)
def test_invalid_inputs(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        resolve_threshold(**kwargs)


def test_from_settings() -> None:
    compression = CompressionSettings(
        threshold=0.6, model_thresholds={"qwen": 0.7}, threshold_tokens=650_000
    )
    assert from_settings(compression, context_length=1_000_000).tokens == 600_000
    tuned = from_settings(compression, context_length=1_000_000, model="qwen3-coder")
    assert tuned.tokens == 650_000
    assert from_settings(CompressionSettings(), context_length=128_000).tokens == 96_000
    reserved = from_settings(CompressionSettings(), context_length=200_000, max_tokens=65_535)
    assert reserved.tokens == 100_848


@given(
    context_length=st.integers(1, 4_000_000),
    reserve=st.floats(0, 0.99),
    pct=st.floats(0.05, 1.0),
    cap=st.none() | st.integers(1, 4_000_000),
)
def test_threshold_bounds(context_length: int, reserve: float, pct: float, cap: int | None) -> None:
    max_tokens = int(context_length * reserve)
    result = resolve_threshold(
        context_length=context_length, max_tokens=max_tokens, threshold=pct, threshold_tokens=cap
    )
    assert 0 <= result.tokens <= int(result.window * 0.85)
    assert cap is None or result.tokens <= cap
    assert result.provenance[-1] == f"trigger at {result.tokens:,} tokens"


# --------------------------------------------------------------------------- budgets


def test_tail_budget() -> None:
    assert tail_budget(96_000, 128_000, 0.20) == 19_200
    assert tail_budget(500_000, 1_000_000, 0.01) == 50_000  # clamped up to 0.10
    assert tail_budget(100_000, 1_000_000, 0.95) == 80_000  # clamped down to 0.80
    assert tail_budget(500_000, 1_000_000, 0.80) == 200_000  # 20% of the window
    assert tail_budget(96_000, 128_000, 0.80) == 25_600


def test_summary_budget() -> None:
    assert summary_budget(128_000) == 6_400
    assert summary_budget(1_000_000) == 10_000
    assert summary_budget(16_000) == 1_000
    with pytest.raises(ValueError):
        summary_budget(0)


def test_tail_message_floor() -> None:
    assert tail_message_floor(20) == 8
    assert tail_message_floor(3) == 3
    assert tail_message_floor(0) == 0


# --------------------------------------------------------------------------- guard: trigger


def test_should_compress_basics() -> None:
    guard, _ = make_guard()
    assert guard.should_compress(THRESHOLD, THRESHOLD) == (True, None)
    assert guard.should_compress(THRESHOLD - 1, THRESHOLD) == (False, None)
    assert guard.should_compress(BEFORE, THRESHOLD, enabled=False) == (
        False,
        "compression disabled",
    )


def test_force_ignores_blocks_and_enabled() -> None:
    guard, _ = make_guard()
    guard.record_summary_failure("no_provider")
    assert guard.should_compress(BEFORE, THRESHOLD)[0] is False
    assert guard.should_compress(BEFORE, THRESHOLD, enabled=False, force=True) == (True, None)
    assert guard.should_compress(10, THRESHOLD, force=True) == (True, None)


# --------------------------------------------------------------------------- guard: anti-thrash


def test_one_strike_does_not_block_two_do() -> None:
    guard, clock = make_guard()
    strike(guard)
    assert guard.blocked_reason() is None
    strike(guard)
    assert guard.blocked_reason() == "two ineffective compactions in a row; next probe in 300 s"
    assert guard.should_compress(BEFORE, THRESHOLD) == (False, guard.blocked_reason())
    clock.advance(180)
    assert guard.blocked_reason() == "two ineffective compactions in a row; next probe in 120 s"


def test_still_over_threshold_is_a_strike_even_with_savings() -> None:
    guard, _ = make_guard()
    for _ in range(MAX_STRIKES):
        compact(guard)
        assert guard.record_usage(THRESHOLD + 1, THRESHOLD) == "ineffective"  # 17% saved
    assert guard.blocked_reason() is not None


def test_ten_percent_savings_is_effective_and_resets_strikes() -> None:
    guard, _ = make_guard()
    strike(guard)
    guard.record_compaction(tokens_before=90_000, tokens_after=1, summarizer="llm", probe=False)
    assert guard.record_usage(81_000, THRESHOLD) == "effective"
    strike(guard)
    assert guard.blocked_reason() is None
    guard.record_compaction(tokens_before=90_000, tokens_after=1, summarizer="llm", probe=False)
    assert guard.record_usage(81_001, THRESHOLD) == "ineffective"
    assert guard.blocked_reason() is not None


def test_usage_without_a_compaction_decides_nothing() -> None:
    guard, _ = make_guard()
    assert guard.record_usage(NO_SAVINGS, THRESHOLD) is None
    strike(guard)
    assert guard.record_usage(NO_SAVINGS, THRESHOLD) is None  # only the first report judges
    assert guard.blocked_reason() is None


def test_probe_after_300_s_exactly_once() -> None:
    guard, clock = make_guard()
    strike(guard)
    strike(guard)
    clock.advance(PROBE_AFTER_S - 1)
    assert not guard.is_probe()
    assert guard.blocked_reason() is not None
    clock.advance(1)
    assert guard.is_probe()
    assert guard.should_compress(BEFORE, THRESHOLD) == (True, None)
    compact(guard, probe=guard.is_probe())
    assert not guard.is_probe()
    assert guard.blocked_reason() == "probe compaction awaiting its usage report"
    clock.advance(10 * PROBE_AFTER_S)
    assert guard.blocked_reason() == "probe compaction awaiting its usage report"


def test_ineffective_probe_blocks_again() -> None:
    guard, clock = make_guard()
    strike(guard)
    strike(guard)
    clock.advance(PROBE_AFTER_S)
    compact(guard, probe=True)
    assert guard.record_usage(NO_SAVINGS, THRESHOLD) == "ineffective"
    assert guard.blocked_reason() == "the probe compaction was ineffective; next probe in 300 s"
    clock.advance(PROBE_AFTER_S)
    assert guard.blocked_reason() is None
    assert guard.is_probe()


def test_effective_probe_unblocks() -> None:
    guard, clock = make_guard()
    strike(guard)
    strike(guard)
    clock.advance(PROBE_AFTER_S)
    compact(guard)  # the guard flags it as the probe even when the caller did not
    assert guard.record_usage(EFFECTIVE, THRESHOLD) == "effective"
    assert guard.blocked_reason() is None
    assert not guard.is_probe()
    strike(guard)
    assert guard.blocked_reason() is None  # strikes start again from zero


def test_forced_compaction_while_blocked_counts_as_the_probe() -> None:
    guard, clock = make_guard()
    strike(guard)
    strike(guard)
    clock.advance(100)
    compact(guard)
    guard.record_usage(NO_SAVINGS, THRESHOLD)
    assert guard.blocked_reason() == "the probe compaction was ineffective; next probe in 300 s"


def test_an_explicit_probe_reblocks_at_once() -> None:
    guard, _ = make_guard()
    compact(guard, probe=True)
    assert guard.blocked_reason() is None  # not blocked while strikes are below the limit
    guard.record_usage(NO_SAVINGS, THRESHOLD)
    assert guard.blocked_reason() is not None


def test_two_compactions_before_one_report_are_judged_together() -> None:
    guard, _ = make_guard()
    guard.record_compaction(tokens_before=200_000, tokens_after=1, summarizer=None, probe=False)
    guard.record_compaction(tokens_before=185_000, tokens_after=1, summarizer="llm", probe=False)
    assert guard.record_usage(175_000, 180_000) == "effective"  # 12.5% against the first


def test_invalid_compaction_records() -> None:
    guard, _ = make_guard()
    with pytest.raises(ValueError, match="summarizer"):
        guard.record_compaction(tokens_before=1, tokens_after=1, summarizer="gpt", probe=False)
    with pytest.raises(ValueError, match="negative"):
        guard.record_compaction(tokens_before=-1, tokens_after=1, summarizer=None, probe=False)


# --------------------------------------------------------------------------- guard: fallback


def test_fallback_streak_disables_llm_until_a_successful_llm_probe() -> None:
    guard, clock = make_guard()
    compact(guard, "fallback")
    assert guard.use_llm()
    compact(guard, "fallback")
    assert not guard.use_llm()
    clock.advance(100)
    compact(guard, "fallback")  # forced by us: does not push the probe back
    clock.advance(PROBE_AFTER_S - 101)
    assert not guard.use_llm()
    clock.advance(1)
    assert guard.use_llm()
    compact(guard, "fallback")  # the LLM probe failed: another 300 s
    assert not guard.use_llm()
    clock.advance(PROBE_AFTER_S)
    assert guard.use_llm()
    compact(guard, "llm")
    assert guard.use_llm()
    compact(guard, "fallback")
    assert guard.use_llm()  # the streak restarted


def test_fallback_streak_counts_summaries_only() -> None:
    guard, _ = make_guard()
    compact(guard, "fallback")
    compact(guard, None)
    compact(guard, "fallback")
    assert not guard.use_llm()
    other, _ = make_guard()
    compact(other, "fallback")
    compact(other, "llm")
    compact(other, "fallback")
    assert other.use_llm()


def test_fallback_streak_never_blocks_compression() -> None:
    guard, _ = make_guard()
    compact(guard, "fallback")
    compact(guard, "fallback")
    assert guard.blocked_reason() is None


# --------------------------------------------------------------------------- guard: cooldowns


def test_timeout_ladder() -> None:
    guard, clock = make_guard()
    for seconds in (*TIMEOUT_LADDER_S, TIMEOUT_LADDER_S[-1]):
        guard.record_summary_failure("timeout")
        assert guard.blocked_reason() == f"summary cooldown: {seconds} s left after a timeout"
        clock.advance(seconds - 1)
        assert guard.blocked_reason() == "summary cooldown: 1 s left after a timeout"
        clock.advance(1)
        assert guard.blocked_reason() is None
    guard.record_summary_success()
    guard.record_summary_failure("timeout")
    assert guard.blocked_reason() == "summary cooldown: 60 s left after a timeout"


def test_success_lifts_the_cooldown() -> None:
    guard, _ = make_guard()
    guard.record_summary_failure("timeout")
    guard.record_summary_success()
    assert guard.blocked_reason() is None


def test_other_failures_do_not_reset_the_ladder() -> None:
    guard, clock = make_guard()
    guard.record_summary_failure("timeout")
    clock.advance(60)
    guard.record_summary_failure("http_500")
    clock.advance(60)
    guard.record_summary_failure("timeout")
    assert guard.blocked_reason() == "summary cooldown: 300 s left after a timeout"


def test_no_provider_and_other_cooldowns() -> None:
    guard, clock = make_guard()
    guard.record_summary_failure("no_provider")
    assert guard.blocked_reason() == (
        f"summary cooldown: {NO_PROVIDER_COOLDOWN_S} s left with no summary provider configured"
    )
    guard.record_summary_failure("http_500")  # shorter: does not shorten the 600 s
    clock.advance(NO_PROVIDER_COOLDOWN_S - 1)
    assert guard.blocked_reason() is not None
    clock.advance(1)
    assert guard.blocked_reason() is None
    guard.record_summary_failure("http_500")
    assert guard.blocked_reason() == (
        f"summary cooldown: {DEFAULT_COOLDOWN_S} s left after a summary failure (http_500)"
    )
    clock.advance(DEFAULT_COOLDOWN_S)
    assert guard.blocked_reason() is None


def test_nothing_to_compress_is_a_backoff_not_a_strike() -> None:
    guard, clock = make_guard()
    strike(guard)
    guard.record_nothing_to_compress()
    assert guard.blocked_reason() == "nothing to compress; retry in 300 s"
    clock.advance(NOTHING_TO_COMPRESS_BACKOFF_S)
    assert guard.blocked_reason() is None
    guard.record_nothing_to_compress()
    compact(guard)  # a forced compaction that worked ends the backoff
    assert guard.blocked_reason() is None
    guard.record_usage(EFFECTIVE, THRESHOLD)
    strike(guard)
    assert guard.blocked_reason() is None


# --------------------------------------------------------------------------- guard: warnings


def test_one_warning_per_blocked_period() -> None:
    guard, clock = make_guard()
    assert guard.warning_due(BEFORE, THRESHOLD) is None  # not blocked
    strike(guard)
    strike(guard)
    assert guard.warning_due(THRESHOLD - 1, THRESHOLD) is None  # under the threshold: no warning
    reason = guard.warning_due(BEFORE, THRESHOLD)
    assert reason == "two ineffective compactions in a row; next probe in 300 s"
    assert guard.warning_due(BEFORE, THRESHOLD) is None
    guard.record_summary_failure("timeout")  # extends the same period
    clock.advance(60)
    assert guard.warning_due(BEFORE, THRESHOLD) is None
    clock.advance(PROBE_AFTER_S)
    compact(guard)
    guard.record_usage(NO_SAVINGS, THRESHOLD)  # failed probe: a new period
    assert guard.warning_due(BEFORE, THRESHOLD) == (
        "the probe compaction was ineffective; next probe in 300 s"
    )
    assert guard.warning_due(BEFORE, THRESHOLD) is None
    clock.advance(PROBE_AFTER_S)
    compact(guard)
    guard.record_usage(EFFECTIVE, THRESHOLD)
    guard.record_nothing_to_compress()
    assert guard.warning_due(BEFORE, THRESHOLD) == "nothing to compress; retry in 300 s"


# --------------------------------------------------------------------------- guard: persistence


def test_round_trip_through_dict() -> None:
    guard, clock = make_guard()
    compact(guard, "fallback")
    compact(guard, "fallback")
    guard.record_usage(NO_SAVINGS, THRESHOLD)
    strike(guard)
    guard.record_summary_failure("timeout")
    guard.record_summary_failure("timeout")
    guard.record_nothing_to_compress()
    guard.warning_due(BEFORE, THRESHOLD)
    clock.advance(42)
    compact(guard, None)
    state = json.loads(json.dumps(guard.to_dict()))
    other_clock = FakeClock(start=5.0)
    restored = CompressionGuard.from_dict(state, clock=other_clock)
    assert restored.to_dict() == guard.to_dict()
    assert restored.blocked_reason() == guard.blocked_reason()
    assert restored.use_llm() == guard.use_llm()
    for step in (100, 200, 300, 400):
        clock.advance(step)
        other_clock.advance(step)
        assert restored.blocked_reason() == guard.blocked_reason()
        assert restored.use_llm() == guard.use_llm()
        assert restored.is_probe() == guard.is_probe()


def test_fresh_state_round_trips_and_bad_versions_fail() -> None:
    guard, _ = make_guard()
    state = guard.to_dict()
    assert CompressionGuard.from_dict(state, clock=FakeClock()).to_dict() == state
    with pytest.raises(ValueError, match="version"):
        CompressionGuard.from_dict({**state, "version": 99})


# --------------------------------------------------------------------------- guard: properties


class GuardMachine(RuleBasedStateMachine):
    """Automatic compactions never repeat without an effective report once strikes block.

    The reference model counts consecutive ineffective verdicts; once they reach MAX_STRIKES,
    the next automatic compaction needs a usage report for the previous one and PROBE_AFTER_S
    since the verdict that blocked.
    """

    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock()
        self.guard = CompressionGuard(clock=self.clock)
        self.run = 0
        self.blocked_at = 0.0
        self.awaiting = False
        self.awaiting_probe = False

    def _record(self) -> None:
        self.awaiting_probe = self.awaiting_probe or self.run >= MAX_STRIKES
        self.awaiting = True
        compact(self.guard, "fallback")

    @rule(
        seconds=st.sampled_from([1, 59, 60, 100, 299, 300, 600]) | st.integers(0, 2 * PROBE_AFTER_S)
    )
    def advance(self, seconds: int) -> None:
        self.clock.advance(seconds)

    @rule(report=st.sampled_from(["none", "no_savings", "effective"]))
    def turn(self, report: str) -> None:
        """One host turn: compact when the guard allows it, then maybe a usage report."""
        allowed, reason = self.guard.should_compress(BEFORE, THRESHOLD)
        assert allowed == (reason is None)
        if allowed:
            if self.run >= MAX_STRIKES:
                assert not self.awaiting, "second compaction before the first was judged"
                assert self.clock.now - self.blocked_at >= PROBE_AFTER_S
                assert self.guard.is_probe()
            self._record()
        if report != "none" and self.awaiting:
            self.usage(report == "effective")

    @rule()
    def forced(self) -> None:
        assert self.guard.should_compress(0, THRESHOLD, enabled=False, force=True) == (True, None)
        self._record()

    @precondition(lambda self: self.awaiting)
    @rule(effective=st.booleans())
    def usage(self, effective: bool) -> None:
        verdict = self.guard.record_usage(EFFECTIVE if effective else NO_SAVINGS, THRESHOLD)
        assert verdict == ("effective" if effective else "ineffective")
        if effective:
            self.run = 0
        else:
            self.run += 1
            if self.awaiting_probe:
                self.run = max(self.run, MAX_STRIKES)
            if self.run >= MAX_STRIKES:
                self.blocked_at = self.clock.now
        self.awaiting = self.awaiting_probe = False

    @rule(event=st.sampled_from(["timeout", "no_provider", "http_500", "success", "nothing"]))
    def side_event(self, event: str) -> None:
        if event == "success":
            self.guard.record_summary_success()
        elif event == "nothing":
            self.guard.record_nothing_to_compress()
        else:
            self.guard.record_summary_failure(event)

    @invariant()
    def survives_a_round_trip(self) -> None:
        state = self.guard.to_dict()
        assert CompressionGuard.from_dict(state, clock=self.clock).to_dict() == state

    @invariant()
    def llm_off_only_after_fallbacks(self) -> None:
        if not self.guard.use_llm():
            assert self.guard.to_dict()["fallback_streak"] >= 2


TestGuardMachine = GuardMachine.TestCase
TestGuardMachine.settings = settings(max_examples=100, stateful_step_count=40, deadline=None)


@given(ops=st.lists(st.sampled_from(["tick", "turn"]), max_size=80))
def test_no_savings_bounds_automatic_compactions(ops: list[str]) -> None:
    """Each turn compacts when allowed and reports no savings: MAX_STRIKES, then one per 300 s."""
    guard, clock = make_guard()
    done = 0
    for op in ops:
        if op == "tick":
            clock.advance(PROBE_AFTER_S / 3)
        elif guard.should_compress(BEFORE, THRESHOLD)[0]:
            compact(guard)
            done += 1
            guard.record_usage(NO_SAVINGS, THRESHOLD)
    elapsed = clock.now - 1_000.0
    assert done <= MAX_STRIKES + int(elapsed // PROBE_AFTER_S)


def test_the_default_threshold_is_the_settings_default() -> None:
    from hermes_core.compression.policy import DEFAULT_THRESHOLD
    from hermes_core.config.settings import CompressionSettings

    assert CompressionSettings().threshold == DEFAULT_THRESHOLD


def test_an_optional_summary_failure_rests_the_llm_without_blocking() -> None:
    now = [0.0]
    guard = CompressionGuard(clock=lambda: now[0])
    guard.record_summary_failure("http_500", blocking=False)
    assert guard.blocked_reason() is None  # compaction goes on: pruning, the fallback
    assert guard.use_llm() is False  # but the failing endpoint is not called again yet
    restored = CompressionGuard.from_dict(guard.to_dict(), clock=lambda: now[0])
    assert restored.use_llm() is False
    now[0] += DEFAULT_COOLDOWN_S
    assert guard.use_llm() is True and restored.use_llm() is True
    guard.record_summary_failure("http_500", blocking=False)
    guard.record_summary_success()
    assert guard.use_llm() is True
