"""Issue 27 item 9b: the tail stays within its budget except for the documented protected
minimum (the newest group; the newest real user message and what follows it; and, only while
that message has no text answer yet, the reply before it, up to three tail budgets)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.compression.window import REPLY_BUDGET_SHARE, tail_start
from hermes_core.transcript.messages import turn_groups

Turn = tuple[str, int]  # ("user" | "reply" | "tools", cost)


def build(turns: list[Turn]) -> tuple[list[dict[str, Any]], list[int]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
    costs = [5]
    for n, (kind, cost) in enumerate(turns):
        if kind == "user":
            messages.append({"role": "user", "content": f"question {n}"})
            costs.append(cost)
        elif kind == "reply":
            messages.append({"role": "assistant", "content": f"reply {n}"})
            costs.append(cost)
        else:
            function = {"name": "ls", "arguments": "{}"}
            call = {"id": f"c{n}", "type": "function", "function": function}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": "out"})
            costs.extend([cost // 2, cost - cost // 2])
    return messages, costs


def protected_start(messages: list[dict[str, Any]], costs: list[int], budget: int) -> int:
    """Where the protected minimum begins, by the rule docs/compression.md states."""
    groups = turn_groups(messages)
    start = groups[-1].start
    users = [i for i, m in enumerate(messages) if i and m["role"] == "user"]
    if not users:
        return start
    newest = users[-1]
    start = min(start, newest)
    answered = any(
        m["role"] == "assistant" and not m.get("tool_calls") and m.get("content")
        for m in messages[newest + 1 :]
    )
    before = messages[newest - 1]
    if (
        not answered
        and before["role"] == "assistant"
        and before.get("content")
        and sum(costs[newest - 1 : newest]) <= REPLY_BUDGET_SHARE * budget
    ):
        start = min(start, newest - 1)
    return start


TURNS = st.lists(
    st.tuples(st.sampled_from(["user", "reply", "tools"]), st.integers(1, 4_000)),
    min_size=1,
    max_size=25,
)


@settings(max_examples=300, deadline=None)
@given(turns=TURNS, budget=st.integers(50, 3_000))
def test_the_tail_never_exceeds_its_budget_beyond_the_protected_minimum(
    turns: list[Turn], budget: int
) -> None:
    messages, costs = build(turns)
    groups = turn_groups(messages)
    start = tail_start(
        messages, groups, costs, head=1, budget_tokens=budget, min_messages=0, min_user_messages=0
    )
    assert sum(costs[start:]) <= budget or start >= protected_start(messages, costs, budget)


def test_an_answered_question_does_not_keep_the_reply_before_it() -> None:
    """The case the issue found: the newest user message already has its answer, so the large
    reply before it is not kept past the budget."""
    messages, costs = build(
        [("user", 10), ("reply", 2_500), ("user", 10), ("reply", 100), ("tools", 100)]
    )
    groups = turn_groups(messages)
    start = tail_start(
        messages, groups, costs, head=1, budget_tokens=1_000, min_messages=0, min_user_messages=0
    )
    assert start == 3 and sum(costs[start:]) <= 1_000


def test_an_unanswered_question_keeps_the_reply_it_refers_to() -> None:
    messages, costs = build([("user", 10), ("reply", 2_500), ("user", 10), ("tools", 100)])
    groups = turn_groups(messages)
    start = tail_start(
        messages, groups, costs, head=1, budget_tokens=1_000, min_messages=0, min_user_messages=0
    )
    assert start == 2  # "Yes, do that." keeps its "that"
