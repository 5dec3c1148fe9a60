"""Phases 2 and 3: which turn groups stay verbatim at the head and the tail.

Every boundary falls between turn groups
(:func:`hermes_core.transcript.messages.turn_groups`), so an assistant message is never
separated from the tool results that answer it and no orphan can arise from a cut.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_core.compression.assemble import SYSTEM_ROLES, is_summary_message, summary_role
from hermes_core.compression.in_flight import in_flight_start
from hermes_core.transcript.messages import TurnGroup, is_real_user_message

#: The reply a short user answer refers to is kept up to this many tail budgets.
REPLY_BUDGET_SHARE = 3


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
    keep_newest_user: bool = True,
) -> int:
    """Walk back over whole groups until the token budget is used.

    Always kept: the newest group and (with ``keep_newest_user``) the newest real user message
    with what follows it, and, while that message has no text answer yet, the assistant's text
    reply it answers (a "Yes, do that." means nothing without it) when it costs at most
    :data:`REPLY_BUDGET_SHARE` tail budgets (once answered, the answer carries the context).
    Wanted while the budget allows, and beyond it unless a single group alone overruns the
    budget: ``min_messages`` messages and ``min_user_messages`` real user messages (as many
    as exist after the head).
    """
    users_after_head = [i for i in range(head, len(messages)) if is_real_user_message(messages[i])]
    newest_user = users_after_head[-1] if users_after_head and keep_newest_user else None
    if newest_user is not None and not _answered(messages, newest_user):
        reply = _answered_reply(messages, head, newest_user)
        if sum(costs[reply:newest_user]) <= REPLY_BUDGET_SHARE * budget_tokens:
            newest_user = reply  # a reply of any size would hold the compaction hostage
    min_users = min(min_user_messages, len(users_after_head))
    start = len(messages)
    used = held = users = 0
    for group in reversed(groups):
        if group.start < head:
            break
        group_cost = sum(costs[group.start : group.end])
        must = start == len(messages) or (newest_user is not None and start > newest_user)
        wanted = held < min_messages or users < min_users
        over = used + group_cost > budget_tokens
        if not must and over and (not wanted or group_cost > budget_tokens):
            break
        start = group.start
        used += group_cost
        held += len(group)
        users += sum(1 for i in range(group.start, group.end) if is_real_user_message(messages[i]))
    return max(start, head)


def _answered(messages: Sequence[Mapping[str, Any]], user: int) -> bool:
    """Whether an assistant text reply without tool calls follows the message at ``user``."""
    for message in messages[user + 1 :]:
        content = message.get("role") == "assistant" and not message.get("tool_calls")
        text = message.get("content") if content else None
        if (isinstance(text, str) and text.strip()) or (isinstance(text, list) and text):
            return True
    return False


def _answered_reply(messages: Sequence[Mapping[str, Any]], head: int, user: int) -> int:
    """The index of the assistant's text reply right before the real user message at
    ``user``, else ``user``."""
    index = user - 1
    if index < head or messages[index].get("role") != "assistant":
        return user
    content = messages[index].get("content")
    has_text = (isinstance(content, str) and content.strip()) or (
        isinstance(content, list) and bool(content)
    )
    return index if has_text else user


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
    """The head/tail split, or ``None`` when the middle would be empty (nothing to compress).

    When the newest real user message is so old that keeping it in the tail leaves nothing to
    compress (one request followed by hundreds of tool rounds), or only an earlier summary, it
    is kept in the head instead.
    """
    head = head_end(messages, groups, protect_first_n)
    # the floors as set, then, for a short and heavy conversation, yielding (the newest user
    # message only) before the middle vanishes
    for floor, users in ((min_messages, min_user_messages), (0, min(min_user_messages, 1))):
        tail = tail_start(
            messages,
            groups,
            costs,
            head=head,
            budget_tokens=budget_tokens,
            min_messages=floor,
            min_user_messages=users,
        )
        if tail > head and not _only_summaries(messages, head, tail):
            return _spare_in_flight(
                messages, groups, _settled(messages, groups, Window(head, tail))
            )
    newest_user = next(
        (i for i in range(len(messages) - 1, head - 1, -1) if is_real_user_message(messages[i])),
        None,
    )
    if newest_user is None:
        return None
    head = next(g.end for g in groups if g.start <= newest_user < g.end)
    tail = tail_start(
        messages,
        groups,
        costs,
        head=head,
        budget_tokens=budget_tokens,
        min_messages=min_messages,
        min_user_messages=0,
        keep_newest_user=False,
    )
    if tail <= head:
        return None
    return _spare_in_flight(messages, groups, _settled(messages, groups, Window(head, tail)))


def _only_summaries(messages: Sequence[Mapping[str, Any]], head: int, tail: int) -> bool:
    """A middle of earlier summaries alone: re-summarising them cannot shrink anything, so it
    counts as no middle (the newest user message then stays in the head instead)."""
    return all(is_summary_message(messages[i]) for i in range(head, tail))


def _spare_in_flight(
    messages: Sequence[Mapping[str, Any]], groups: Sequence[TurnGroup], window: Window
) -> Window | None:
    """When the tail is only the tool calls in flight and no summary fits between the head
    and them (the head ends in the user's message), the summary would be merged into the
    call message, which must stay verbatim (compression/in_flight.py): the tail takes the
    group before it too; ``None`` when that leaves nothing to compress."""
    live = window.tail_start
    if live == len(messages) or in_flight_start(messages) != live:
        return window
    any_user = any(is_real_user_message(m) for m in messages)
    previous = messages[window.head_end - 1] if window.head_end else None
    if summary_role(previous, messages[live], any_user=any_user) is not None:
        return window
    before = next((g for g in groups if g.end == live), None)
    if before is None or before.start <= window.head_end:
        return None
    return Window(window.head_end, before.start)


def _settled(
    messages: Sequence[Mapping[str, Any]], groups: Sequence[TurnGroup], window: Window
) -> Window:
    """Move the head boundary back, group by group, until a summary can stand between head and
    tail without being merged into a real user message (which must stay verbatim). A summary
    an earlier compaction left in the tail is summarised again with the middle: two
    summaries would say the same thing twice (and side by side break role alternation)."""
    any_user = any(is_real_user_message(m) for m in messages)
    head = window.head_end
    newest_user = next(
        (i for i in range(len(messages) - 1, -1, -1) if is_real_user_message(messages[i])), -1
    )
    # The newest earlier summary in the tail goes into the middle with everything before it
    # (a summary that lost its marker on the wire reads as the user's words: it stays);
    # left in the tail, the new summary would repeat it, byte for byte when nothing changed.
    # Not when the newest user message comes before it (one request, many tool rounds, the
    # old summary merged into a later reply): that message must stay verbatim, so the old
    # summary stays in the tail rather than the compaction failing for good.
    for index in range(len(messages) - 1, window.tail_start - 1, -1):
        message = messages[index]
        if is_summary_message(message) and not is_real_user_message(message):
            holding = next(g for g in groups if g.start <= index < g.end)
            keeps_user = window.tail_start <= newest_user < holding.end
            if holding.end < len(messages) and not keeps_user:
                window = Window(head, holding.end)
            break
    following = messages[window.tail_start]
    while is_real_user_message(following):
        previous = messages[head - 1] if head else None
        if summary_role(previous, following, any_user=any_user) is not None:
            break
        group = next((g for g in groups if g.end == head), None)
        if group is None or group.kind == "system":
            break
        head = group.start
    return Window(head, window.tail_start)


def superseded_in_head(messages: Sequence[Mapping[str, Any]], head_end: int) -> set[int]:
    """Earlier summaries the head holds (when the newest user message had to stay in the
    head): the new summary updates them, so they are archived rather than kept beside it,
    where dropping one leaves its neighbours' roles alternating."""
    found: set[int] = set()
    for i in range(head_end):
        message = messages[i]
        if not is_summary_message(message) or is_real_user_message(message):
            continue
        before = messages[i - 1].get("role") if i else None
        after = messages[i + 1].get("role") if i + 1 < head_end else None
        if before in (None, *SYSTEM_ROLES) or after is None or before != after:
            found.add(i)
    return found
