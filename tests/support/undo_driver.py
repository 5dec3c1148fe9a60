"""Drives a session through turns, compactions, undos and restarts, and checks every undo
against a model of what it must bring back (tests/host/test_session_undo.py and the
PostgreSQL run of the same property in tests/postgres/test_pg_undo.py).

The model: before each committed compaction ``n`` the driver notes the transcript as sent
and the store's rows; an undo of ``n`` must give exactly that transcript (on the wire, byte
for byte; and those rows: every key of the message and the API copy that was sent), followed
by the messages the host added after ``n``, in order. In-process metadata of an API copy
(``_memory_context``: never stored) is not compared, as after any restart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hermes_core as hc
from hermes_core.host.events import SessionEvent
from hermes_core.host.view import sent_form
from hermes_core.markers import hookimpl
from hermes_core.transcript.messages import to_wire
from hermes_core.types import SessionInfo

Message = dict[str, Any]
Row = tuple[Message, str | None]

FILLER = " ".join(f"word{n}" for n in range(180))


def make_host(home: Path, config: Mapping[str, Any]) -> hc.Hermes:
    from hermes_core.config.loader import load_config

    return hc.Hermes(load_config(dict(config), home=home, environ={}))


class Recall:
    """A memory provider that adds a line to the API copy of every user message."""

    @hookimpl
    def memory_prefetch(self, query: str, session: SessionInfo) -> str | None:
        return f"recalled for {len(query)} characters"


def rows_of(session: hc.Session) -> list[Row]:
    store = session.store
    assert store is not None
    return [(dict(r.message), r.api_content) for r in store.messages(session.session_id)]


@dataclass
class Before:
    messages: list[Message]
    rows: list[Row]
    log_len: int  # the host's messages taken in before the compaction


@dataclass
class Driver:
    """One conversation ``sid`` of user ``uid`` on ``host``."""

    host: hc.Hermes
    sid: str
    uid: str | None = "u"
    befores: dict[int, Before] = field(default_factory=dict)
    log: list[Message] = field(default_factory=list)  # every message the host added, as sent
    turns: int = 0
    undos: int = 0
    _pending: Before | None = None
    _taking: int = 0  # messages the running call takes in before it may compact

    def __post_init__(self) -> None:
        self.session = self._open()

    def _open(self) -> hc.Session:
        return self.host.session(self.sid, user_id=self.uid, on_event=self._event)

    def _event(self, event: SessionEvent) -> None:
        if event.kind == "compression_started":
            self._pending = Before(
                self.session.messages, rows_of(self.session), len(self.log) + self._taking
            )
        elif event.kind == "compaction_committed" and self._pending is not None:
            self.befores[self.session.state.history.next_number()] = self._pending
            self._pending = None

    def _take(self, call: Any, message: Message) -> None:
        self._taking = 1
        call([*self.session.messages, message])
        self._taking = 0
        self.log.append(self.session.messages[-1])

    def turn(self) -> None:
        self.turns += 1
        n = self.turns
        self._take(self.session.prepare, {"role": "user", "content": f"question {n}: {FILLER}"})
        self._take(self.session.end_turn, {"role": "assistant", "content": f"answer {n} {FILLER}"})

    def compact(self) -> None:
        self.session.compact(self.session.messages, force=True)

    def restart(self) -> None:
        self.session.close()
        self.session = self._open()

    def undoable(self) -> list[int]:
        records = self.session.state.history.records
        return [r.n for r in records if r.undone is None and r.compressor is not None]

    def undo(self, n: int | None) -> list[Message]:
        """Undo ``n`` and check the session and the store hold exactly what they must."""
        target = n if n is not None else max(self.undoable())
        before = self.befores[target]
        out = self.session.undo_compaction(n)
        self.undos += 1
        expected = [*before.messages, *self.log[before.log_len :]]
        assert to_wire(out) == to_wire(expected), f"undo {target}: the transcript differs"
        self.check(out, before.rows)
        return out

    def check(self, out: Sequence[Message], rows: Sequence[Row]) -> None:
        assert self.session.messages == list(out), "session.messages is not what undo returned"
        stored = rows_of(self.session)
        assert stored[: len(rows)] == list(rows), "the restored rows differ from the old rows"
        store = self.session.store
        assert store is not None
        sent = [sent_form(r) for r in store.messages(self.session.session_id)]
        assert sent == list(out), "the store's active view differs from the session's"


def run(driver: Driver, ops: Sequence[tuple[str, int]]) -> None:
    """Apply ``ops``: ``("turn", k)``, ``("compact", 0)``, ``("undo", pick)`` (pick 0: the
    default, else the pick-th undoable one), ``("restart", 0)``; after an undo, a restart
    must hold the same transcript."""
    for op, arg in ops:
        if op == "turn":
            for _ in range(arg):
                driver.turn()
        elif op == "compact":
            driver.compact()
        elif op == "restart":
            driver.restart()
        elif op == "undo":
            choices = driver.undoable()
            if not choices:
                try:
                    driver.session.undo_compaction()
                except hc.SessionError as exc:
                    assert "nothing to undo" in str(exc)
                    continue
                raise AssertionError("an undo with nothing to undo was not refused")
            n = None if arg == 0 else choices[(arg - 1) % len(choices)]
            restored = driver.undo(n)
            driver.restart()
            assert driver.session.messages == restored, "a restart lost the undo"
