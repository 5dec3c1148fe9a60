"""The cost schedule (issue 25): compact before the threshold once carrying the growth since the
last compaction has cost what a compaction costs (``compression.schedule``,
``compression.cached_price``), the lean tail (``compression.tail_max_tokens``), and the
frequency limits holding only compactions before the threshold."""

from __future__ import annotations

import math
from typing import Any

import pytest
from manual_clock import Clock, text_turn

from hermes_core.compression import cache_cost, policy
from hermes_core.compression.cache_cost import OUTPUT_PRICE
from hermes_core.compression.engine import Compressor
from hermes_core.compression.schedule import MIN_CUT, CarryCost, one_off_cost
from hermes_core.compression.state import export_state
from hermes_core.errors import ConfigError

Message = dict[str, Any]
WINDOW = 32_000


# --------------------------------------------------------------------------- the account


def test_one_off_cost_is_the_miss_past_the_cached_prefix_and_the_summary_output() -> None:
    assert one_off_cost(10_000, 2_000, 500, 0.1) == pytest.approx((0.9 * 8_000, OUTPUT_PRICE * 500))
    assert one_off_cost(1_000, 5_000, 0, 0.1) == (0.0, 0.0)  # nothing missed, no LLM
    assert one_off_cost(10_000, 0, 0, 1.0) == (0.0, 0.0)  # no caching: no extra miss


def test_due_when_the_carrying_paid_reaches_the_cost_and_the_cut_is_worth_it() -> None:
    carry = CarryCost(rate=0.1, after=10_000, miss=900.0, summariser=100.0)
    assert not carry.due(19_999)  # carrying 999.9: not yet, and under MIN_CUT x after anyway
    assert carry.due(20_000)  # at MIN_CUT x after: carrying 1,000 >= 1,000
    roomy = CarryCost(rate=0.1, after=10_000, miss=0.0, summariser=0.0)
    assert not roomy.due(19_999) and roomy.due(20_000)  # free, but the cut must be worth it
    carry = CarryCost(rate=0.1, after=10_000, miss=9_000.0, summariser=1_000.0)
    for prompt in (14_000, 18_000, 22_000):
        carry.note_usage(prompt)  # paid 400 + 800 + 1,200
    assert carry.paid == pytest.approx(2_400)
    assert not carry.due(25_000)  # 2,400 + 1,500 < 10,000
    assert carry.due(25_000, cache_cold=True)  # the miss is paid anyway: only 1,000 counts
    assert not carry.due(int(MIN_CUT * 10_000) - 1, cache_cold=True)


def test_lists_and_usage_reports_count_each_request_once() -> None:
    """A host that does both counts once; one that does either alone counts the same."""
    both, lists, usage = (CarryCost(0.1, 10_000, 0.0, 0.0) for _ in range(3))
    for n, prompt in enumerate((14_000, 18_000, 22_000), start=1):
        both.note_list(n, prompt)
        lists.note_list(n, prompt)
        both.note_usage(prompt)
        usage.note_usage(prompt)
    lists.note_list(4, 26_000)  # the third list was sent: the fourth is longer
    both.note_list(4, 26_000)
    assert both.paid == lists.paid == usage.paid == pytest.approx(2_400)
    lists.note_list(4, 26_000)  # the same list again (observe, then compress): not a request
    assert lists.paid == pytest.approx(2_400)


def test_a_compaction_starts_a_new_cycle() -> None:
    carry = CarryCost(rate=0.1, after=10_000, miss=9_000.0, summariser=1_000.0, paid_usage=5.0)
    carry.note_list(40, 30_000)
    carry.compacted(6_000, (500.0, 200.0), 12, summary=True)
    assert (carry.after, carry.miss, carry.summariser, carry.paid) == (6_000, 500.0, 200.0, 0.0)
    carry.note_list(14, 9_000)  # grew from the compacted list: that one was sent, carrying 0
    assert carry.paid == 0.0


def test_a_pruning_that_landed_high_does_not_make_a_high_prompt_look_cheap() -> None:
    """After pruning alone lands at 30,000 while the last summary left 10,000, a prompt of
    25,000 still carries 15,000 more than a compaction could leave, and a cut to 10,000 is
    worth it: the base is the lower landing."""
    carry = CarryCost(rate=0.1, after=10_000, miss=0.0, summariser=0.0, summary_after=10_000)
    carry.compacted(30_000, (100.0, 0.0), 50, summary=False)
    assert carry.base == 10_000 and carry.carrying(25_000) == pytest.approx(1_500)
    assert carry.due(25_000)
    carry.compacted(12_000, (100.0, 0.0), 20, summary=True)
    assert carry.base == 12_000 == carry.summary_after


def test_under_the_schedule_a_pruning_that_lands_high_loses_to_a_summary() -> None:
    """At the threshold's pace pruning to 30,000 (cached up to 28,000) beats a summary to
    12,000; when the schedule ends each cycle, the pruning buys a short, dear one."""
    kept = cache_cost.Kept(
        pruned=30_000, pruned_prefix=28_000, head=1_000, tail=9_000, tail_requests=3, summary=2_000
    )
    assert cache_cost.choose(kept, 96_000, llm=True)["prune"] is True
    assert cache_cost.choose(kept, 96_000, llm=True, early=True)["prune"] is False


def test_cycle_end_is_the_rent_or_buy_point_within_its_bounds() -> None:
    # sqrt(2 x 9,000 x 2,000 / 0.1) = 18,974
    assert cache_cost.cycle_end(10_000, 9_000.0, 2_000.0, 96_000, 0.1) == 28_973
    assert cache_cost.cycle_end(20_000, 100.0, 2_000.0, 96_000, 0.1) == 40_000  # MIN_CUT
    assert cache_cost.cycle_end(60_000, 9_000.0, 2_000.0, 96_000, 0.1) == 96_000  # threshold
    assert cache_cost.cycle_end(10_000, 9_000.0, 2_000.0, 96_000, 0.0) == 96_000  # free cache


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1, True, "9", None, [1]])
def test_a_damaged_saved_account_keeps_its_defaults(bad: object) -> None:
    carry = CarryCost(rate=0.1, after=10_000, miss=9_000.0, summariser=1_000.0, paid_usage=7.0)
    before = carry.to_dict()
    carry.restore(dict.fromkeys(before, bad))
    assert carry.to_dict() == before


# --------------------------------------------------------------------------- in a host loop


def _turn(n: int) -> list[Message]:
    return text_turn(n, "step{n}-{k} reads the notes again", 40)


def _compressor(compression: dict[str, Any], clock: Clock | None = None) -> Compressor:
    return Compressor(
        {"compression": compression},
        context_length=WINDOW,
        summarizer="fallback",
        clock=clock or Clock(),
        wall_clock=Clock(),
    )


def _first_compaction(
    compressor: Compressor, *, limit: int = 400, usage: bool = True
) -> tuple[int, int]:
    """Grow a conversation a turn a request (usage reported after each) until the compressor
    compacts: (the request's number, its prompt tokens)."""
    messages: list[Message] = [{"role": "system", "content": "You are terse."}]
    for n in range(1, limit):
        messages += _turn(n)
        tokens = compressor.observe(messages)
        result = compressor.compress(messages)
        if result.status in ("compressed", "pruned"):
            return n, tokens
        if usage:
            compressor.update_from_usage({"prompt_tokens": tokens}, messages)
    raise AssertionError("never compacted")


@pytest.mark.parametrize("usage", [True, False])
def test_the_cost_schedule_compacts_before_the_threshold(usage: bool) -> None:
    """With usage reports or without (a host that only hands its list over)."""
    early = _compressor({})
    n_cost, tokens = _first_compaction(early, usage=usage)
    assert tokens < early.threshold_tokens
    assert tokens >= MIN_CUT * early._first_carry().after
    late = _compressor({"schedule": "threshold"})
    n_threshold, tokens = _first_compaction(late, usage=usage)
    assert tokens >= late.threshold_tokens and n_threshold > n_cost


def test_cached_price_moves_the_early_compaction() -> None:
    """Without caching (1.0) carrying costs the full price and a compaction no extra miss:
    it compacts as soon as the cut is worth it; at a tenth it carries on longer."""
    n_cheap, _ = _first_compaction(_compressor({"cached_price": 0.1}))
    n_full, _ = _first_compaction(_compressor({"cached_price": 1.0}))
    assert n_full < n_cheap


def test_the_account_survives_a_restart() -> None:
    """A host that builds a compressor a turn (a web worker) compacts on the same request."""
    one = _compressor({})
    n_one, _ = _first_compaction(one)
    messages: list[Message] = [{"role": "system", "content": "You are terse."}]
    state: dict[str, Any] = {}
    for n in range(1, n_one + 1):
        fresh = _compressor({})
        fresh.restore_state(state)
        messages += _turn(n)
        tokens = fresh.observe(messages)
        status = fresh.compress(messages).status
        if n < n_one:
            assert status == "unchanged", n
            fresh.update_from_usage({"prompt_tokens": tokens}, messages)
        state = export_state(fresh, wall_now=1_000.0)
    assert status == "compressed"
    assert state["schedule"]["paid_usage"] == state["schedule"]["paid_lists"] == 0.0


def test_frequency_limits_hold_early_compactions_but_never_one_at_the_threshold() -> None:
    clock = Clock()
    compressor = _compressor({"max_per_hour": 1}, clock)
    _first_compaction(compressor)  # early: counted
    messages: list[Message] = [{"role": "system", "content": "You are terse."}]
    n = 1_000
    held = False
    while compressor.count(messages) < compressor.threshold_tokens:
        n += 1
        messages += _turn(n)
        clock.now += 1
        tokens = compressor.observe(messages)
        status = compressor.compress(messages).status
        if tokens >= compressor.threshold_tokens:
            assert status == "compressed"  # at the threshold: never held
            break
        assert status == "unchanged"
        held = held or compressor.carry.due(tokens)
        compressor.update_from_usage({"prompt_tokens": tokens}, messages)
    assert held  # the schedule wanted an early one and the limit held it


# --------------------------------------------------------------------------- the lean tail


def _kept_tail_tokens(compression: dict[str, Any], window: int) -> int:
    compressor = Compressor({"compression": compression}, context_length=window)
    messages: list[Message] = [{"role": "system", "content": "You are terse."}]
    for n in range(1, 60):  # ~39K tokens: twice the 19,200 ratio tail, with a middle to cut
        messages += _turn(n)
    result = compressor.compress(messages, force=True)
    tail = messages[result.stats["window"]["tail_start"] :]
    return compressor.count(tail)


def test_tail_max_tokens_caps_the_verbatim_tail() -> None:
    window = 128_000
    ratio = policy.tail_budget(96_000, window, 0.20)  # 19,200
    lean = _kept_tail_tokens({}, window)
    assert lean <= policy.lean_tail_cap(window) < ratio
    assert _kept_tail_tokens({"tail_max_tokens": 0}, window) > policy.lean_tail_cap(window)
    assert _kept_tail_tokens({"tail_max_tokens": 4_000}, window) <= 4_000 < lean


def test_lean_tail_cap_follows_the_window() -> None:
    assert policy.lean_tail_cap(128_000) == 10_000
    assert policy.lean_tail_cap(600_000) == 15_000
    assert policy.lean_tail_cap(2_000_000) == 25_000


@pytest.mark.parametrize(
    ("key", "bad"),
    [
        ("schedule", "sometimes"),
        ("cached_price", 1.5),
        ("cached_price", -0.1),
        ("tail_max_tokens", -1),
    ],
)
def test_bad_values_are_refused(key: str, bad: object) -> None:
    with pytest.raises(ConfigError, match=key):
        _compressor({key: bad})


@pytest.mark.parametrize(("ttl", "compacts"), [(300, True), (3_600, False), (0, False)])
def test_after_a_gap_longer_than_cache_ttl_only_the_summary_counts(
    ttl: int, compacts: bool
) -> None:
    """Past ``cache_ttl`` the next request pays full price anyway: the schedule compacts as
    soon as the cut is worth it; a longer cache (or 0: never assume it expired) waits."""
    clock = Clock()
    compressor = _compressor({"cache_ttl": ttl}, clock)
    messages: list[Message] = [{"role": "system", "content": "You are terse."}]
    n = 0
    while compressor.count(messages) < MIN_CUT * compressor.carry.after:
        n += 1
        messages += _turn(n)
        clock.now += 1
        tokens = compressor.observe(messages)
        assert compressor.compress(messages).status == "unchanged"
        compressor.update_from_usage({"prompt_tokens": tokens}, messages)
    clock.now += 301  # the user was away for five minutes
    messages += _turn(n + 1)
    tokens = compressor.observe(messages)
    assert not compressor.carry.due(tokens)  # warm, it would carry on
    status = compressor.compress(messages).status
    assert (status == "compressed") is compacts


# --------------------------------------------------------------------------- early attempts


def test_before_the_first_compaction_the_estimate_counts_the_system_prompt() -> None:
    compressor = _compressor({})
    estimate = compressor.carry.after
    system = {"role": "system", "content": "rules " * 3_000}
    compressor.observe([system, *_turn(1)])
    assert compressor.carry.after == estimate + compressor.count([system]) - 3  # less priming
    compressor.carry.compacted(5_000, (0.0, 0.0), 3, summary=True)
    compressor.observe([system, *_turn(2)])
    assert compressor.carry.after == 5_000  # a real landing is never re-estimated


def test_fixed_tokens_outside_the_messages_are_not_weighed() -> None:
    """hermes-agent's tools and system prompt sit outside the list it hands over."""
    carry = CarryCost(rate=0.1, after=10_000, miss=0.0, summariser=0.0, fixed=30_000)
    assert not carry.due(45_000)  # 15,000 of messages: under twice what a compaction leaves
    assert carry.due(50_000)


def test_an_early_compaction_that_cuts_too_little_leaves_no_trace() -> None:
    """No strike, no backoff, no summary remembered: the guard's patience is the threshold's.
    The schedule waits until the prompt doubles; the threshold compacts as always."""
    clock = Clock()
    compressor = _compressor({}, clock)
    system = {"role": "system", "content": "house rules " * 5_000}  # most of the prompt
    messages: list[Message] = [system, *_turn(1), *_turn(2)]
    carry = compressor.carry
    carry.after = carry.summary_after = 1_000  # an account that says "due" at once
    carry.estimated, carry.miss, carry.summariser = False, 0.0, 0.0
    tokens = compressor.observe(messages)
    assert tokens < compressor.threshold_tokens and carry.due(tokens)
    guard = compressor.guard.to_dict()
    result = compressor.compress(messages)
    assert result.status == "unchanged" and "early compaction" in str(result.reason)
    assert compressor.guard.to_dict() == guard and compressor._nothing_at is None
    assert compressor.compactions == 0 and compressor.previous_summary is None
    assert carry.base >= tokens and not carry.due(tokens + 100)
    n = 3
    while compressor.count(messages) < compressor.threshold_tokens:
        messages += _turn(n)
        n += 1
    assert compressor.compress(messages).status in ("compressed", "pruned")


def test_an_optional_compaction_runs_now_and_is_dropped_if_it_cuts_little() -> None:
    """``compress(optional=True)``: a host that runs the early compaction itself
    (hermes-agent) gets it now, under the threshold, kept only when it cuts."""
    compressor = _compressor({})
    system = {"role": "system", "content": "house rules " * 5_000}
    guard = compressor.guard.to_dict()
    result = compressor.compress([system, *_turn(1), *_turn(2)], optional=True)
    assert result.status == "unchanged" and "early compaction" in str(result.reason)
    assert compressor.guard.to_dict() == guard
    messages: list[Message] = [{"role": "system", "content": "You are terse."}]
    for n in range(1, 30):
        messages += _turn(n)
    assert compressor.count(messages) < compressor.threshold_tokens
    assert compressor.compress(messages).status == "unchanged"  # not due on its own
    assert compressor.compress(messages, optional=True).status in ("compressed", "pruned")
