"""When reviews are due: each interval from config counts, 0 switches a nudge off, the model's
own memory (or skill) work starts the count again, and the counts survive a restart."""

from __future__ import annotations

import pytest

from hermes_core.config import load_config
from hermes_core.review import ReviewCounters, tool_iterations, tools_used


def counters(config: dict[str, object], state: dict[str, object] | None = None) -> ReviewCounters:
    return ReviewCounters.from_settings(load_config(config, environ={}).settings, state)


def turns(c: ReviewCounters, n: int) -> None:
    for _ in range(n):
        c.on_user_turn()


def test_the_defaults_are_ten_turns_and_fifteen_iterations() -> None:
    c = counters({})
    turns(c, 9)
    c.on_tool_iteration(14)
    assert c.due() == set()
    c.on_user_turn()
    assert c.due() == {"memory"}
    c.on_tool_iteration()
    assert c.due() == {"memory", "skill"}


def test_memory_nudge_interval_is_read() -> None:
    c = counters({"memory": {"nudge_interval": 3}})
    turns(c, 2)
    assert c.due() == set()
    c.on_user_turn()
    assert c.due() == {"memory"}


def test_memory_nudge_interval_zero_switches_it_off() -> None:
    c = counters({"memory": {"nudge_interval": 0}})
    turns(c, 1_000)
    assert c.due() == set()
    assert c.turns_since_memory == 0


def test_creation_nudge_interval_is_read() -> None:
    c = counters({"skills": {"creation_nudge_interval": 4}})
    c.on_tool_iteration(3)
    assert c.due() == set()
    c.on_tool_iteration(1)
    assert c.due() == {"skill"}


def test_creation_nudge_interval_zero_switches_it_off() -> None:
    c = counters({"skills": {"creation_nudge_interval": 0}})
    c.on_tool_iteration(10_000)
    assert c.due() == set()


def test_tool_iterations_do_not_count_as_turns_nor_turns_as_iterations() -> None:
    c = counters({"memory": {"nudge_interval": 2}, "skills": {"creation_nudge_interval": 2}})
    c.on_tool_iteration(5)
    assert c.due() == {"skill"}
    c.reset("skill")
    turns(c, 5)
    assert c.due() == {"memory"}


def test_the_model_using_memory_itself_resets_the_memory_nudge() -> None:
    c = counters({"memory": {"nudge_interval": 3}})
    turns(c, 2)
    c.on_memory_tool_used()
    turns(c, 2)
    assert c.due() == set()
    c.on_user_turn()
    assert c.due() == {"memory"}


def test_the_model_using_skill_manage_itself_resets_the_skill_nudge() -> None:
    c = counters({"skills": {"creation_nudge_interval": 3}})
    c.on_tool_iteration(2)
    c.on_skill_tool_used()
    c.on_tool_iteration(2)
    assert c.due() == set()


def test_a_review_resets_its_own_counter_only() -> None:
    c = counters({"memory": {"nudge_interval": 1}, "skills": {"creation_nudge_interval": 1}})
    c.on_user_turn()
    c.on_tool_iteration()
    c.reset("memory")
    assert c.due() == {"skill"}
    c.reset("skill")
    assert c.due() == set()
    with pytest.raises(ValueError, match="memory' or 'skill"):
        c.reset("everything")


def test_flush_min_turns_is_read_and_counts_since_the_last_memory_review() -> None:
    c = counters({"memory": {"flush_min_turns": 2}})
    c.on_user_turn()
    assert not c.final_due()
    c.on_user_turn()
    assert c.final_due()
    c.reset("skill")
    assert c.final_due()
    c.reset("memory")
    assert not c.final_due()


def test_flush_min_turns_default_and_zero() -> None:
    c = counters({})
    turns(c, 5)
    assert not c.final_due()
    c.on_user_turn()
    assert c.final_due()
    off = counters({"memory": {"flush_min_turns": 0}})
    turns(off, 100)
    assert not off.final_due()


def test_the_flush_counts_even_when_the_memory_nudge_is_off() -> None:
    c = counters({"memory": {"nudge_interval": 0, "flush_min_turns": 2}})
    turns(c, 2)
    assert c.final_due()


def test_memory_tool_use_does_not_cancel_the_flush() -> None:
    c = counters({"memory": {"flush_min_turns": 2}})
    turns(c, 2)
    c.on_memory_tool_used()
    assert c.final_due()


def test_counts_survive_a_restart() -> None:
    c = counters({})
    turns(c, 7)
    c.on_tool_iteration(11)
    state = c.to_dict()
    assert state == {"turns_since_memory": 7, "iterations_since_skill": 11, "turns_since_review": 7}
    again = counters({}, state)
    assert again.to_dict() == state
    turns(again, 3)
    assert again.due() == {"memory"}


def test_a_damaged_state_counts_from_zero() -> None:
    broken = {"turns_since_memory": "9", "iterations_since_skill": -4, "turns_since_review": True}
    assert counters({}, broken).to_dict() == {
        "turns_since_memory": 0,
        "iterations_since_skill": 0,
        "turns_since_review": 0,
    }
    assert counters({}, None).to_dict()["turns_since_memory"] == 0


def test_a_nudge_switched_off_drops_its_stored_count() -> None:
    state = {"turns_since_memory": 50, "iterations_since_skill": 50}
    c = counters({"memory": {"nudge_interval": 0}, "skills": {"creation_nudge_interval": 0}}, state)
    assert c.turns_since_memory == c.iterations_since_skill == 0


def test_bad_values_are_refused() -> None:
    with pytest.raises(ValueError, match="memory_interval"):
        ReviewCounters(memory_interval=-1)
    with pytest.raises(ValueError, match="skill_interval"):
        ReviewCounters(skill_interval=True)
    with pytest.raises(ValueError, match="tool iterations"):
        ReviewCounters().on_tool_iteration(-2)


def test_tool_iterations_and_tools_used_read_a_turn() -> None:
    memory = {"id": "1", "type": "function", "function": {"name": "memory", "arguments": "{}"}}
    grep = {"id": "2", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [memory, grep]},
        {"role": "tool", "tool_call_id": "1", "content": "ok"},
        {"role": "tool", "tool_call_id": "2", "content": "ok"},
        {"role": "assistant", "content": None, "tool_calls": [grep]},
        {"role": "tool", "tool_call_id": "2", "content": "ok"},
        {"role": "assistant", "content": "done", "tool_calls": []},
        {"role": "user", "content": "x", "tool_calls": [memory]},  # not the assistant's
    ]
    assert tool_iterations(messages) == 2
    assert tools_used(messages) == {"memory", "grep"}
