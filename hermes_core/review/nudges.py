"""When background review is due: the memory nudge, the skill nudge and the flush on close.

Why counters rather than a timer: what is worth reviewing grows with the conversation, not with
the clock. The memory nudge counts user turns (``memory.nudge_interval``); the skill nudge
counts tool iterations (``skills.creation_nudge_interval``), because a reusable procedure shows
up as work with tools. A model that writes memory itself this turn has just done what the nudge
would ask, so that resets the memory count (and ``skill_manage`` the skill count). An interval
of 0 turns a nudge off. The flush on close counts user turns since the last memory review
(``memory.flush_min_turns``). Pure state, serialisable, so a resumed session keeps counting.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from hermes_core.config.settings import Settings

__all__ = ["KINDS", "ReviewCounters", "ReviewKind", "tool_iterations", "tools_used"]

ReviewKind = Literal["memory", "skill"]
KINDS: Final[tuple[ReviewKind, ...]] = ("memory", "skill")
_FIELDS: Final = ("turns_since_memory", "iterations_since_skill", "turns_since_review")


def _count(value: object) -> int:
    """A stored count, or 0 when it is not a non-negative integer (state may be hand-edited)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return 0
    return value


@dataclass
class ReviewCounters:
    """The nudge counters of one session.

    ``memory_interval`` user turns make the memory review due, ``skill_interval`` tool
    iterations the skill review; 0 switches either off (its counter then stays at 0).
    ``flush_min_turns`` user turns since the last memory review make :meth:`final_due` true.
    """

    memory_interval: int = 10
    skill_interval: int = 15
    flush_min_turns: int = 6
    turns_since_memory: int = 0
    iterations_since_skill: int = 0
    turns_since_review: int = 0

    def __post_init__(self) -> None:
        for name in ("memory_interval", "skill_interval", "flush_min_turns"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a whole number >= 0 (0: off), got {value!r}")

    @classmethod
    def from_settings(
        cls, settings: Settings, state: Mapping[str, Any] | None = None
    ) -> ReviewCounters:
        """Counters with the intervals of ``settings`` (``memory.nudge_interval``,
        ``skills.creation_nudge_interval``, ``memory.flush_min_turns``) and the counts of
        ``state`` (from :meth:`to_dict`, e.g. a resumed session's)."""
        counters = cls(
            memory_interval=settings.memory.nudge_interval,
            skill_interval=settings.skills.creation_nudge_interval,
            flush_min_turns=settings.memory.flush_min_turns,
        )
        counters.restore(state)
        return counters

    def on_user_turn(self) -> None:
        """One user turn ended."""
        if self.memory_interval > 0:
            self.turns_since_memory += 1
        self.turns_since_review += 1

    def on_tool_iteration(self, n: int = 1) -> None:
        """``n`` model calls that asked for tools happened (see :func:`tool_iterations`)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"the number of tool iterations must be >= 0, got {n!r}")
        if self.skill_interval > 0:
            self.iterations_since_skill += n

    def on_memory_tool_used(self) -> None:
        """The model wrote memory itself: the memory nudge starts again."""
        self.turns_since_memory = 0

    def on_skill_tool_used(self) -> None:
        """The model used ``skill_manage`` itself: the skill nudge starts again."""
        self.iterations_since_skill = 0

    def due(self) -> set[str]:
        """The kinds of review due now: ``"memory"``, ``"skill"``, both or neither."""
        kinds: set[str] = set()
        if self.memory_interval > 0 and self.turns_since_memory >= self.memory_interval:
            kinds.add("memory")
        if self.skill_interval > 0 and self.iterations_since_skill >= self.skill_interval:
            kinds.add("skill")
        return kinds

    def reset(self, kind: str) -> None:
        """A review of ``kind`` started: its counter (and for memory, the flush's) is zero."""
        if kind == "memory":
            self.turns_since_memory = 0
            self.turns_since_review = 0
        elif kind == "skill":
            self.iterations_since_skill = 0
        else:
            raise ValueError(f"review kind must be 'memory' or 'skill', got {kind!r}")

    def final_due(self) -> bool:
        """Whether ``close()`` should run one last memory review."""
        return self.flush_min_turns > 0 and self.turns_since_review >= self.flush_min_turns

    def to_dict(self) -> dict[str, int]:
        """The counts to persist (the intervals come from config each time)."""
        return {name: getattr(self, name) for name in _FIELDS}

    def restore(self, data: Mapping[str, Any] | None) -> None:
        """Counts from :meth:`to_dict`; anything missing or malformed counts as 0."""
        data = data if isinstance(data, Mapping) else {}
        for name in _FIELDS:
            setattr(self, name, _count(data.get(name)))
        if self.memory_interval == 0:
            self.turns_since_memory = 0
        if self.skill_interval == 0:
            self.iterations_since_skill = 0


def _calls(message: object) -> list[Any]:
    if not isinstance(message, Mapping) or message.get("role") != "assistant":
        return []
    calls = message.get("tool_calls")
    return calls if isinstance(calls, list) else []


def tool_iterations(messages: Iterable[Mapping[str, Any]]) -> int:
    """Tool iterations in ``messages``: assistant messages that asked for at least one tool
    (one model call that led to tool work; several calls in one message count once)."""
    return sum(1 for message in messages if _calls(message))


def tools_used(messages: Iterable[Mapping[str, Any]]) -> set[str]:
    """The names of the tools the assistant called in ``messages``."""
    names: set[str] = set()
    for message in messages:
        for call in _calls(message):
            function = call.get("function") if isinstance(call, Mapping) else None
            name = function.get("name") if isinstance(function, Mapping) else None
            if isinstance(name, str) and name:
                names.add(name)
    return names
