"""Phases 2 and 3: which turn groups stay verbatim at the head and the tail.

Every boundary falls between turn groups (:func:`hermes_core.messages.turn_groups`), so an
assistant message is never separated from the tool results that answer it and no orphan
can arise from a cut.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_core.messages import TurnGroup, is_real_user_message


@dataclass(frozen=True)
class Window:
    """``messages[:head_end]`` and ``messages[tail_start:]`` stay; the middle is summarised."""

    head_end: int
    tail_start: int

    @property
    def middle(self) -> range:
        return range(self.head_end, self.tail_start)


def head_end(
    messages: Sequence[Mapping[str, Any]], groups: Sequence[TurnGroup], protect_first_n: int
) -> int:
    """System message plus the first ``protect_first_n`` other messages, to a group boundary."""
    end = 0
    seen = 0
    for group in groups:
        if group.kind == "system" and group.start == 0:
            end = group.end
            continue
        if seen >= protect_first_n:
            break
        seen += len(group)
        end = group.end
    return end


def tail_start(
    messages: Sequence[Mapping[str, Any]],
    groups: Sequence[TurnGroup],
    costs: Sequence[int],
    *,
    head: int,
    budget_tokens: int,
    min_messages: int,
    min_user_messages: int,
) -> int:
    """Walk back over whole groups until the token budget is used.

    The tail always holds the newest group, at least ``min_messages`` messages, at least
    ``min_user_messages`` real user messages and the newest real user message with what
    follows it; past those, a group that would overrun the budget ends the walk.
    """
    newest_user = next(
        (i for i in range(len(messages) - 1, -1, -1) if is_real_user_message(messages[i])), None
    )
    start = len(messages)
    used = held = users = 0
    for group in reversed(groups):
        if group.start < head:
            break
        group_cost = sum(costs[group.start : group.end])
        required = (
            start == len(messages)
            or held < min_messages
            or users < min_user_messages
            or (newest_user is not None and start > newest_user)
        )
        if not required and used + group_cost > budget_tokens:
            break
        start = group.start
        used += group_cost
        held += len(group)
        users += sum(1 for i in range(group.start, group.end) if is_real_user_message(messages[i]))
    return max(start, head)


def choose_window(
    messages: Sequence[Mapping[str, Any]],
    groups: Sequence[TurnGroup],
    costs: Sequence[int],
    *,
    protect_first_n: int,
    budget_tokens: int,
    min_messages: int,
    min_user_messages: int,
) -> Window | None:
    """The head/tail split, or ``None`` when the middle would be empty (nothing to compress)."""
    head = head_end(messages, groups, protect_first_n)
    tail = tail_start(
        messages,
        groups,
        costs,
        head=head,
        budget_tokens=budget_tokens,
        min_messages=min_messages,
        min_user_messages=min_user_messages,
    )
    if tail <= head:
        return None
    return Window(head_end=head, tail_start=tail)
