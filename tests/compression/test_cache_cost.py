"""Issue 13: pruning alone ends a compaction only when, under prompt caching, it bills no more
than a summary would (hermes_core/compression/cache_cost.py), through the bare Compressor,
one-shot compress() and Session alike (the replay of bench/session_cost.py)."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeLLM, answer, http_error

import hermes_core as hc
from hermes_core.compression import cache_cost
from hermes_core.compression.cache_cost import Kept, Option, choose, cost_per_headroom, prune_pays
from hermes_core.compression.engine import Compressor

REPO = Path(__file__).resolve().parents[2]
WINDOW = 32_000  # threshold 24,000, tail budget 4,800
SUMMARY = "## Goal\nFix the modules one by one.\n\n## Completed Actions\nRead and fixed modules."


# --- the model, as arithmetic ----------------------------------------------------------------


def test_cost_per_headroom_is_the_miss_and_summariser_spread_plus_the_cycle() -> None:
    option = Option(after=20_000, kept_prefix=2_000, summariser=6_000.0)
    expected = (0.9 * 18_000 + 6_000) / 80_000 + 0.1 * (20_000 + 100_000) / (2 * 1_500)
    assert cost_per_headroom(option, 100_000, 1_500) == pytest.approx(expected)
    assert cost_per_headroom(option, 100_000, 1_500, rate=0.5) == pytest.approx(
        (0.5 * 18_000 + 6_000) / 80_000 + 0.5 * 120_000 / 3_000
    )


def test_no_headroom_costs_infinitely_and_growth_is_at_least_one_token() -> None:
    assert cost_per_headroom(Option(after=100_000), 100_000, 1_000) == math.inf
    assert cost_per_headroom(Option(after=0), 10, 0) == cost_per_headroom(Option(after=0), 10, 1)


@pytest.mark.parametrize("rate", [0.1, 0.25, 0.5])
def test_landing_lower_wins_unless_the_summary_is_dear(rate: float) -> None:
    high = Option(after=57_000, kept_prefix=34_000)
    low = Option(after=23_000, kept_prefix=500, summariser=24_000.0)
    assert not prune_pays(high, low, 96_000, 1_800, rate)  # a summary lands far lower
    near = Option(after=24_000, kept_prefix=1_000)
    assert prune_pays(near, low, 96_000, 1_800, rate)  # pruning lands as low: no summary needed


def test_choose_costs_both_options_from_what_each_keeps() -> None:
    kept = Kept(
        pruned=40_000, pruned_prefix=5_000, head=500, tail=12_000, tail_requests=6, summary=2_000
    )
    verdict = choose(kept, 96_000, llm=True)
    growth = 12_000 / 6
    middle = 40_000 - 500 - 12_000
    summary = Option(500 + 2_000 + 12_000, 500, middle + cache_cost.OUTPUT_PRICE * 2_000)
    assert verdict["growth_per_request"] == growth
    assert verdict["summary_after"] == 14_500
    assert verdict["prune_cost"] == round(
        cost_per_headroom(Option(40_000, 5_000), 96_000, growth), 4
    )
    assert verdict["summary_cost"] == round(cost_per_headroom(summary, 96_000, growth), 4)
    assert verdict["prune"] is (verdict["prune_cost"] <= verdict["summary_cost"])
    offline = choose(kept, 96_000, llm=False)  # the fallback summary is free
    assert offline["summary_cost"] < verdict["summary_cost"]


# --- the engine ------------------------------------------------------------------------------


def _call(i: int, body: str) -> list[dict[str, Any]]:
    call = f"call_{i}"
    args = json.dumps({"path": f"src/module_{i}.py"})
    return [
        {"role": "user", "content": f"Step {i}: look at src/module_{i}.py and fix it."},
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
        {"role": "tool", "tool_call_id": call, "content": json.dumps({"content": body})},
    ]


def _session(turns: int, result_lines: int, reply_sentences: int) -> list[dict[str, Any]]:
    body = "\n".join(f"{n:5}|    value_{n} = compute(value_{n - 1})" for n in range(result_lines))
    reply = " ".join(
        f"Branch {n} of the parser guards the empty sequence and retries once."
        for n in range(reply_sentences)
    )
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for i in range(turns):
        messages += _call(i, body)
        messages.append({"role": "assistant", "content": f"Fixed module {i}. {reply}"})
    return messages


def _compressor(fake_llm: FakeLLM, compression: dict[str, Any] | None = None) -> Compressor:
    fake_llm.default = answer(SUMMARY)
    aux = {"base_url": fake_llm.base_url, "model": "aux"}
    config = {"auxiliary": {"compression": aux}, "compression": compression or {}}
    return Compressor(config, context_length=WINDOW)


def test_pruning_that_lands_high_is_not_the_compaction(fake_llm: FakeLLM) -> None:
    # the bulk is the assistant's own prose: pruning the old reads just suffices, a summary
    # lands far lower, so the next cycle is longer and cheaper
    compressor = _compressor(fake_llm)
    messages = _session(turns=26, result_lines=50, reply_sentences=25)
    compressor.observe(messages)
    assert compressor.should_compress()[0]
    result = compressor.compress(messages)
    verdict = result.stats["cache_cost"]
    assert verdict["prune"] is False
    assert verdict["summary_cost"] < verdict["prune_cost"]
    assert result.status == "compressed"
    assert fake_llm.requests  # the summary was paid for because it pays


def test_a_summary_that_aborts_leaves_the_pruning_that_sufficed(fake_llm: FakeLLM) -> None:
    # abort_on_summary_failure: before issue 13 this transcript ended "pruned" without asking
    # the LLM; the verdict now prefers a summary, and when that aborts the pruning still stands
    compressor = _compressor(fake_llm)
    compressor.settings.compression.abort_on_summary_failure = True
    fake_llm.default = http_error(500)
    events: list[str] = []
    compressor.on_event = lambda event: events.append(event.kind)
    messages = _session(turns=26, result_lines=50, reply_sentences=25)
    compressor.observe(messages)
    result = compressor.compress(messages)
    assert result.stats["cache_cost"]["prune"] is False
    assert fake_llm.requests  # the summary was tried
    assert result.status == "pruned"
    assert "instead of a summary" in result.reason
    assert result.tokens_after < compressor.threshold_tokens
    assert "compression_failed" in events


def test_a_summary_that_lands_higher_than_the_pruning_is_not_committed() -> None:
    # a near tie: the verdict expects the (free) fallback summary to land where pruning does;
    # the summary written is larger than expected, so the pruning is what is kept
    messages = _session(turns=14, result_lines=160, reply_sentences=0)
    result = hc.compress(messages, context_length=WINDOW, summarizer="fallback")
    verdict = result.stats["cache_cost"]
    assert verdict["prune"] is False
    assert result.status == "pruned"
    assert "the summary landed higher" in result.reason
    assert result.tokens_after == verdict["pruned_after"]


def test_pruning_that_lands_as_low_as_a_summary_is_the_compaction(fake_llm: FakeLLM) -> None:
    # the bulk is old tool output: pruning alone lands about where a summary would
    compressor = _compressor(fake_llm)
    messages = _session(turns=14, result_lines=160, reply_sentences=0)
    compressor.observe(messages)
    result = compressor.compress(messages)
    assert result.stats["cache_cost"]["prune"] is True
    assert result.status == "pruned"
    assert not fake_llm.requests  # no summariser paid


def test_one_shot_compress_weighs_the_free_fallback_too() -> None:
    messages = _session(turns=26, result_lines=50, reply_sentences=25)
    result = hc.compress(messages, context_length=WINDOW, summarizer="fallback")
    assert result.stats["cache_cost"]["prune"] is False
    assert result.status == "compressed"


# --- a whole session, replayed through Hermes.session() (bench/session_cost.py) --------------


def _bench() -> Any:
    sys.path[:0] = [str(REPO / "bench")]
    try:
        spec = importlib.util.spec_from_file_location(
            "session_cost", REPO / "bench" / "session_cost.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.Ours = sys.modules["_policies"].Ours  # the policies live beside it
        return module
    finally:
        sys.path.remove(str(REPO / "bench"))


def _replayed() -> list[dict[str, Any]]:
    """The first 270 of the 490 messages: nine compactions under a 64K window, past the point
    (about 230) from which the model's mix of prunings and summaries bills less than either
    fixed rule; the whole session proves the same at twice the replay time."""
    transcript = json.loads((REPO / "tests/data/transcripts/coding-200turns.json").read_text())
    return list(transcript[:270])


def test_a_replayed_session_bills_less_than_either_fixed_rule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bench = _bench()
    transcript = _replayed()
    meter = bench.Meter()
    stub = bench.StubServer(meter)
    real_choose = cache_cost.choose
    costs = {}
    try:
        for rule in ("model", "always prune", "never prune"):
            if rule != "model":
                fixed = rule == "always prune"
                monkeypatch.setattr(
                    cache_cost,
                    "choose",
                    lambda *a, f=fixed, **k: {**real_choose(*a, **k), "prune": f},
                )
            row = bench.replay(transcript, bench.Ours(transcript[0], 64_000, stub), meter, stub)
            assert row["over"] == 0  # no request over the threshold, whatever the rule
            costs[rule] = row["cost"]
    finally:
        stub.close()
    assert costs["model"] < costs["always prune"]
    assert costs["model"] < costs["never prune"]


def test_a_dead_summariser_never_lets_a_replayed_request_over_the_threshold() -> None:
    # the verdict asks for summaries pruning alone could spare; when the summariser is down
    # (connection refused: an abort), the pruning is kept and the LLM rests instead of a
    # cooldown blocking every compaction (which let 143 of 200 requests over, up to 379K)
    bench = _bench()
    transcript = _replayed()
    meter = bench.Meter()
    stub = bench.StubServer(meter)

    class Dead:
        base_url = "http://127.0.0.1:9/v1"  # the discard port: nothing listens

    try:
        for abort in (False, True):
            # time stands still (0 s a request), as it did when replays ran on the real clock:
            # with time passing the LLM's rest ends, the unreachable summariser is asked again
            # and a required summary aborts (spec 10 §5), which is not what this test is about
            ours = bench.Ours(
                transcript[0],
                64_000,
                Dead,
                {"abort_on_summary_failure": abort},
                seconds_per_request=0.0,
            )
            row = bench.replay(transcript, ours, meter, stub)
            assert row["over"] == 0, (abort, row["max"])
            assert row["full"] + row["pruned"] > 5  # it kept compacting
    finally:
        stub.close()


def test_with_breakpoint_caching_a_pruning_keeps_no_cached_prefix(fake_llm: FakeLLM) -> None:
    """``compression.cache_reads: breakpoints``: only the system prompt's mark survives a
    pruning further back, so the pruning's miss is the whole prompt after it."""
    messages = _session(turns=14, result_lines=160, reply_sentences=0)
    tools = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
    for i in tools[:3]:  # the early results are short: pruning starts further back
        messages[i] = {**messages[i], "content": "ok"}
    verdicts = {}
    for reads in ("prefix", "breakpoints"):
        compressor = _compressor(fake_llm, {"cache_reads": reads})
        compressor.observe(messages)
        verdicts[reads] = compressor.compress(messages).stats["cache_cost"]
    assert verdicts["breakpoints"]["prune_cost"] > verdicts["prefix"]["prune_cost"]
    assert verdicts["breakpoints"]["summary_cost"] == verdicts["prefix"]["summary_cost"]
