"""Frequency-aware anti-thrash (issue 24 item 4, issue 25): ``compression.max_per_hour`` and
``compression.min_requests_between`` count *automatic* compactions and hold those before the
threshold (the cost schedule's, an idle gap's); past them a ``compression_blocked`` event
says why and when it lifts, and the conversation goes on. A prompt at or over the threshold
always compacts (no request over it), and so do overflow recovery and ``force``."""

from __future__ import annotations

from typing import Any

import pytest
from manual_clock import Clock, text_turn

from hermes_core.compression.engine import Compressor
from hermes_core.compression.rate import HOUR_S, CompactionRate
from hermes_core.compression.result import CompressionEvent
from hermes_core.config.loader import load_config
from hermes_core.errors import ConfigError

Message = dict[str, Any]
WINDOW = 32_000


def _turn(n: int) -> list[Message]:
    return text_turn(n, "step{n}-{k} edits src/mod{n}_{k}.py", 30)


class Conversation:
    """A host loop over one compressor: each request appends a turn and compresses when due."""

    def __init__(self, compression: dict[str, Any], *, step: float = 30, **kwargs: Any) -> None:
        self.clock, self.wall, self.step = Clock(), Clock(), step
        self.events: list[CompressionEvent] = []
        config = {"compression": compression}
        self.compressor = Compressor(
            config,
            context_length=WINDOW,
            summarizer="fallback",
            clock=self.clock,
            wall_clock=self.wall,
            on_event=self.events.append,
            **kwargs,
        )
        self.messages: list[Message] = [{"role": "system", "content": "You are terse."}]
        self.n = 0

    def request(self) -> tuple[str, bool]:
        """One request a turn until the compressor compacts: (status, whether the prompt was
        at or over the threshold then)."""
        while True:
            self.n += 1
            self.messages += _turn(self.n)
            self.clock.now += self.step
            tokens = self.compressor.observe(self.messages)
            result = self.compressor.compress(self.messages)
            if result.status != "unchanged":
                self.messages = list(result.messages)
                return result.status, tokens >= self.compressor.threshold_tokens

    def blocked(self) -> list[dict[str, Any]]:
        return [e.data for e in self.events if e.kind == "compression_blocked"]


EARLY, AT_THRESHOLD = ("compressed", False), ("compressed", True)


def test_max_per_hour_holds_early_compactions_until_the_oldest_is_an_hour_old() -> None:
    talk = Conversation({"max_per_hour": 2, "min_requests_between": 0})
    assert [talk.request(), talk.request()] == [EARLY, EARLY]
    assert talk.request() == AT_THRESHOLD  # the third within the hour waited for the threshold
    (event,) = talk.blocked()  # warned once for the whole blocked stretch
    assert "max_per_hour: 2" in event["reason"] and event["limit"] == "rate"
    assert 0 < event["lifts_in_s"] <= HOUR_S
    talk.clock.now += HOUR_S
    assert talk.request() == EARLY


def test_with_the_default_limits_the_same_pace_compacts_early_every_time() -> None:
    talk = Conversation({})
    assert [talk.request() for _ in range(4)] == [EARLY] * 4
    assert talk.blocked() == []


def test_max_per_hour_zero_is_no_limit() -> None:
    # time stands still: the default (20 an hour) would hold the 21st
    talk = Conversation({"max_per_hour": 0, "min_requests_between": 0}, step=0)
    assert [talk.request() for _ in range(22)] == [EARLY] * 22


def test_min_requests_between_spaces_early_compactions() -> None:
    talk = Conversation({"max_per_hour": 0, "min_requests_between": 1_000})
    assert talk.request() == EARLY
    assert talk.request() == AT_THRESHOLD
    (event,) = talk.blocked()
    assert "min_requests_between: 1000" in event["reason"]
    assert 0 < event["lifts_after_requests"] < 1_000


def test_usage_reports_count_as_requests() -> None:
    """hermes-agent hands its list over only when it compacts; its responses count."""
    talk = Conversation({"max_per_hour": 0, "min_requests_between": 3})
    talk.request()
    for _ in range(2):
        talk.compressor.update_from_usage({"prompt_tokens": talk.compressor.count(talk.messages)})
    assert talk.compressor.rate.requests_since() == 2
    assert talk.compressor.rate.block() is not None
    talk.compressor.update_from_usage({"prompt_tokens": talk.compressor.count(talk.messages)})
    assert talk.compressor.rate.block() is None


def test_force_overflow_and_the_threshold_still_compact() -> None:
    talk = Conversation({"max_per_hour": 1, "min_requests_between": 0})
    assert talk.request() == EARLY
    assert talk.compressor.compress(talk.messages, force=True).status == "compressed"
    talk.messages += _turn(500) + _turn(501)
    talk.compressor.note_overflow("This model's maximum context length is 32000 tokens.")
    assert talk.compressor.compress(talk.messages).status == "compressed"
    # no compaction of ours counted meanwhile: still one in the hour, still blocked ...
    assert talk.compressor.rate.block() is not None
    # ... so the next compaction waits for the threshold, where nothing holds it
    assert talk.request() == AT_THRESHOLD


def test_the_count_survives_a_restart_and_ages_with_the_wall_clock() -> None:
    talk = Conversation({"max_per_hour": 1, "min_requests_between": 0})
    assert talk.request() == EARLY
    state = talk.compressor.export_state()
    later = Conversation({"max_per_hour": 1, "min_requests_between": 0})
    later.wall.now = talk.wall.now + 600  # ten minutes later, another process
    later.compressor.restore_state(state)
    block = later.compressor.rate.block()
    assert block is not None and "max_per_hour: 1" in block.reason
    assert block.lifts_in_s is not None and HOUR_S - 600 - 60 <= block.lifts_in_s <= HOUR_S - 600
    after_an_hour = Conversation({"max_per_hour": 1, "min_requests_between": 0})
    after_an_hour.wall.now = talk.wall.now + HOUR_S
    after_an_hour.compressor.restore_state(state)
    assert after_an_hour.compressor.rate.block() is None


@pytest.mark.parametrize("key", ["max_per_hour", "min_requests_between"])
@pytest.mark.parametrize("bad", [-1, "often", 1.5, None])
def test_bad_values_are_refused(key: str, bad: object) -> None:
    with pytest.raises(ConfigError, match=key):
        load_config({"compression": {key: bad}}, environ={})


def test_a_malformed_saved_count_is_refused_whole() -> None:
    rate = CompactionRate(max_per_hour=5, min_requests_between=2)
    for bad in ({"ages_s": [-1]}, {"ages_s": ["x"]}, {"ages_s": 3}, {"usages": -2}):
        with pytest.raises((TypeError, ValueError)):
            rate.restore(bad, elapsed=0)
    rate.restore({"ages_s": [1.0] * 10_000, "usages": None}, elapsed=0)  # a huge row
    assert len(rate.to_dict()["ages_s"]) == 5  # only the newest max_per_hour matter
