"""Frequency-aware anti-thrash (issue 24 item 4): ``compression.max_per_hour`` and
``compression.min_requests_between`` limit *automatic* compactions; past them a
``compression_blocked`` event says why and when it lifts, the conversation goes on, and
overflow recovery, ``force`` and a prompt about to outgrow the window still compact."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_core.compression.engine import Compressor
from hermes_core.compression.rate import HOUR_S, CompactionRate
from hermes_core.compression.result import CompressionEvent
from hermes_core.config.loader import load_config
from hermes_core.errors import ConfigError

Message = dict[str, Any]
WINDOW = 32_000


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _turn(n: int) -> list[Message]:
    words = " ".join(f"step{n}-{k} edits src/mod{n}_{k}.py" for k in range(30))
    return [
        {"role": "user", "content": f"Request {n}: {words}"},
        {"role": "assistant", "content": f"Done {n}. {words}"},
    ]


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

    def request(self, *, until_due: bool = True) -> str:
        """Grow the list to the threshold (one request per turn) and compress; the status."""
        while True:
            self.n += 1
            self.messages += _turn(self.n)
            self.clock.now += self.step
            if (
                not until_due
                or self.compressor.count(self.messages) >= self.compressor.threshold_tokens
            ):
                break
            self.compressor.compress(self.messages)  # a request under the threshold
        result = self.compressor.compress(self.messages)
        self.messages = list(result.messages)
        return result.status

    def fill(self) -> None:
        """Grow the list past the threshold in one go (one request)."""
        while self.compressor.count(self.messages) < self.compressor.threshold_tokens:
            self.n += 1
            self.messages += _turn(self.n)

    def blocked(self) -> list[dict[str, Any]]:
        return [e.data for e in self.events if e.kind == "compression_blocked"]


def test_max_per_hour_blocks_the_next_automatic_compaction_until_the_oldest_is_an_hour_old() -> (
    None
):
    talk = Conversation({"max_per_hour": 2, "min_requests_between": 0})
    assert [talk.request(), talk.request()] == ["compressed", "compressed"]
    assert talk.request() == "unchanged"  # the third within the hour waits
    (event,) = talk.blocked()
    assert "max_per_hour: 2" in event["reason"] and event["limit"] == "rate"
    assert 0 < event["lifts_in_s"] <= HOUR_S
    assert talk.request(until_due=False) == "unchanged"  # still blocked; warned once only
    assert len(talk.blocked()) == 1
    talk.clock.now += event["lifts_in_s"]
    assert talk.request(until_due=False) == "compressed"


def test_with_the_default_limits_the_same_pace_compacts_every_time() -> None:
    talk = Conversation({})
    assert [talk.request() for _ in range(4)] == ["compressed"] * 4
    assert talk.blocked() == []


def test_max_per_hour_zero_is_no_limit() -> None:
    # time stands still: the default (20 an hour) would stop the 21st
    talk = Conversation({"max_per_hour": 0, "min_requests_between": 0}, step=0)
    assert [talk.request() for _ in range(22)] == ["compressed"] * 22


def test_min_requests_between_spaces_automatic_compactions() -> None:
    talk = Conversation({"max_per_hour": 0, "min_requests_between": 3})
    assert talk.request() == "compressed"
    talk.fill()  # straight over the threshold again: only one request since, three needed
    assert talk.compressor.compress(talk.messages).status == "unchanged"
    (event,) = talk.blocked()
    assert "min_requests_between: 3" in event["reason"] and event["lifts_after_requests"] == 2
    talk.compressor.compress(talk.messages + _turn(100))  # a second request (still blocked)
    grown = talk.messages + _turn(100) + _turn(101)
    assert talk.compressor.compress(grown).status == "compressed"  # the third


def test_usage_reports_count_as_requests() -> None:
    """hermes-agent hands its list over only when it compacts; its responses count."""
    talk = Conversation({"max_per_hour": 0, "min_requests_between": 3})
    assert talk.request() == "compressed"
    talk.compressor.update_from_usage({"prompt_tokens": talk.compressor.count(talk.messages)})
    talk.fill()
    assert talk.compressor.compress(talk.messages).status == "unchanged"
    for _ in range(2):
        talk.compressor.update_from_usage({"prompt_tokens": talk.compressor.count(talk.messages)})
    assert talk.compressor.compress(talk.messages).status == "compressed"


def test_force_overflow_and_the_window_edge_still_compact() -> None:
    talk = Conversation({"max_per_hour": 1, "min_requests_between": 0})
    assert talk.request() == "compressed"
    assert talk.request() == "unchanged"
    assert talk.compressor.compress(talk.messages, force=True).status == "compressed"
    talk.request()
    talk.compressor.note_overflow("This model's maximum context length is 32000 tokens.")
    assert talk.compressor.compress(talk.messages).status == "compressed"
    # no compaction of ours counted meanwhile: still one in the hour, still blocked ...
    talk.request()
    assert talk.compressor.rate.block() is not None
    # ... until the prompt is about to outgrow the window (95% of it): overflow prevention
    while talk.compressor.count(talk.messages) < WINDOW * 0.95:
        talk.messages += _turn(talk.n)
    assert talk.compressor.compress(talk.messages).status == "compressed"


def test_the_count_survives_a_restart_and_ages_with_the_wall_clock() -> None:
    talk = Conversation({"max_per_hour": 1, "min_requests_between": 0})
    assert talk.request() == "compressed"
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
