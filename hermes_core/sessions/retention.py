"""Retention, backend neutral: which sessions are due, what archiving does, what it reports.

Why archive in place: an archived session stays in ``sessions`` and ``messages`` (its rows,
its index entries), so listing, search, ``show``, ``export``, export bundles and forgetting a
user need no second code path. What changes is only how the bodies are kept (see
:data:`hermes_core.config.settings.RetentionSettings`): ``compress`` keeps every word,
``drop`` replaces the bodies a compaction already summarised by :data:`DROPPED_NOTICE`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

__all__ = [
    "DAY",
    "DROPPED_EXTRA",
    "DROPPED_NOTICE",
    "STATISTICS_EVERY",
    "Bodies",
    "RetentionReport",
    "cutoff",
    "due",
    "keeps_statistics",
    "run_on_open",
    "upkeep_on_open",
]

DAY = 86_400.0
#: what a dropped body reads back as (``sessions show --all``, ``export``, the read API)
DROPPED_NOTICE = "[dropped by retention: a compaction summary replaced this message]"
#: how a dropped row holds the notice: in ``extra`` (read back as the message's content), its
#: ``content`` column empty, so the notice's words are not indexed as the row's text
DROPPED_EXTRA = '{"other":{"content":"' + DROPPED_NOTICE + '"}}'
#: rows one store object appends between two checks of the planner's statistics
STATISTICS_EVERY = 5_000

Bodies = Literal["compress", "drop"]
C = TypeVar("C", bound=type[Any])


@dataclass(frozen=True)
class RetentionReport:
    """What one run archived (or, with ``dry_run``, would archive)."""

    sessions: tuple[str, ...]
    packed: int = 0
    dropped: int = 0
    dry_run: bool = False
    cutoff: float = 0.0


def cutoff(now: float, days: int, bodies: str = "compress") -> float:
    """Sessions whose last message (or start) is older than this are archived (``bodies``,
    the policy for their bodies, is checked here for every backend)."""
    if bodies not in ("compress", "drop"):
        raise ValueError(f"retention bodies must be compress or drop, not {bodies!r}")
    if days <= 0:
        raise ValueError("retention needs at least 1 day (sessions.retention.archive_after_days)")
    return now - days * DAY


def due(last_run: float | None, now: float) -> bool:
    """Whether the automatic run is due: at most once a day (a clock set back runs it too)."""
    return last_run is None or not 0 <= now - last_run < DAY


def keeps_statistics(cls: C) -> C:
    """Class decorator for a store with ``maybe_refresh_statistics()``: after every
    :data:`STATISTICS_EVERY` appended rows, check the planner's statistics (a bulk load
    through ``append_messages`` would otherwise leave the planner blind until autovacuum,
    which may be off)."""
    append = cls.append_messages

    @functools.wraps(append)
    def append_messages(self: Any, session_id: str, messages: Any, **kwargs: Any) -> list[int]:
        seqs: list[int] = append(self, session_id, messages, **kwargs)
        count = getattr(self, "_appended_since_check", 0) + len(seqs)
        if count >= STATISTICS_EVERY:
            count = 0
            self.maybe_refresh_statistics()
        self._appended_since_check = count
        return seqs

    cls.append_messages = append_messages
    return cls


def run_on_open(store: Any, settings: Any, now: float, log: Callable[[str], None]) -> None:
    """What a host does when it opens its store: statistics when the planner has none (or
    they are far behind), and retention when it is on and has not run for a day. A failure is
    logged, never fatal (nothing changed: each step is its own transaction)."""
    try:
        store.maybe_refresh_statistics()
        if settings.auto and settings.archive_after_days > 0 and due(store.last_retention(), now):
            store.retain(days=settings.archive_after_days, bodies=settings.bodies, now=now)
    except Exception as exc:  # noqa: BLE001 - upkeep must not keep a host from starting
        log(f"session store upkeep skipped: {exc}")


def upkeep_on_open(store: Any, settings: Any) -> None:
    """:func:`run_on_open` with the wall clock and the sessions logger (the store plugins)."""
    import logging
    import time

    run_on_open(store, settings, time.time(), logging.getLogger("hermes_context.sessions").warning)
