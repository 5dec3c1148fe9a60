"""Real processes on one state.db: a writer killed inside a compaction commit leaves all of it
or none of it, and concurrent appenders lose nothing.

The kill lands deterministically: the child's connection gets a SQLite progress handler (the
store's ``on_connect`` hook) that, once the commit's transaction is open and a chosen number
of virtual-machine steps have run inside it, tells the parent and blocks until it is killed.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pytest
from sessions_support import assistant, call, raw, tool_result, user

from hermes_core.sessions.sqlite import SQLiteSessionStore
from hermes_core.sessions.sqlite.fts import integrity_check

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
FORK = multiprocessing.get_context("fork") if hasattr(os, "fork") else None

OLD = [
    {"role": "system", "content": "be brief"},
    user("why does the deploy script hang"),
    assistant(None, tool_calls=[call("c1", "terminal", '{"command": "bash deploy.sh"}')]),
    tool_result("c1", "terminal", "waiting for lock on /var/run/deploy.pid"),
    assistant("a stale pid file blocks it"),
    user("remove it then"),
]
NEW = [OLD[0], user("[summary] a stale pid file blocked the deploy"), OLD[5]]
ORIGINS = [1, None, 6]
# progress-handler steps inside the transaction before the stall, from its first statement to
# past its end (about 700-1,000 steps here; beyond that the commit completes and the child
# reports it instead of stalling)
STALL_POINTS = [*range(1, 1500, 37), 10**9]


def _seed(path: Path) -> None:
    store = SQLiteSessionStore(path)
    store.open_session("s", user_id="u", model="m")
    store.append_messages("s", OLD)
    store.close()


def _commit_until_stalled(path: str, stall_after: int, in_place: bool, report: Connection) -> None:
    armed = {"on": False, "steps": 0}

    def on_connect(conn: sqlite3.Connection) -> None:
        def progress() -> int:
            if armed["on"] and conn.in_transaction:
                armed["steps"] += 1
                if armed["steps"] == stall_after:
                    report.send("stalled")
                    while True:  # hold the transaction open until the parent kills us
                        time.sleep(60)
            return 0

        conn.set_progress_handler(progress, 1)

    store = SQLiteSessionStore(path, on_connect=on_connect)
    armed["on"] = True
    store.commit_compaction("s", NEW, ORIGINS, in_place=in_place, child_session_id="s-2")
    report.send("committed")
    while True:
        time.sleep(60)


def _state(path: Path) -> dict[str, Any]:
    store = SQLiteSessionStore(path)
    try:
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            integrity_check(conn)  # the full-text index matches the rows
        finally:
            conn.close()
        parent = store.get_session("s", user_id="u")
        assert parent is not None
        return {
            "view": [m.message for m in store.messages("s")],
            "rows": len(store.messages("s", include_archived=True)),
            "archived": sum(m.compacted for m in store.messages("s", include_archived=True)),
            "ended": parent.end_reason,
            "child": [m.message for m in store.messages("s-2")],
            "found": {h.session_id for h in store.search("stale pid", user_id="u", limit=10)},
        }
    finally:
        store.close()


@pytest.mark.parametrize("in_place", [True, False], ids=["in_place", "child"])
def test_sigkill_inside_a_compaction_commit_leaves_all_or_nothing(
    tmp_path: Path, in_place: bool
) -> None:
    assert FORK is not None
    before_state: dict[str, Any] | None = None
    outcomes = []
    for n, stall_after in enumerate(STALL_POINTS):
        path = tmp_path / f"round{n}" / "state.db"
        _seed(path)
        before_state = before_state or _state(path)
        receive, send = FORK.Pipe(duplex=False)
        child = FORK.Process(
            target=_commit_until_stalled, args=(str(path), stall_after, in_place, send)
        )
        child.start()
        assert receive.poll(60), "the child neither stalled nor committed"
        outcome = receive.recv()
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join(30)
        assert child.exitcode == -signal.SIGKILL
        state = _state(path)
        if outcome == "stalled":
            assert state == before_state, f"killed at step {stall_after}: not rolled back"
        else:
            expected_view = OLD if not in_place else NEW
            assert state["view"] == expected_view
            assert state["child"] == ([] if in_place else NEW)
            assert state["ended"] == (None if in_place else "compression")
            assert state["archived"] == (4 if in_place else 0)
            assert "s" in state["found"]  # archived rows stay searchable
        outcomes.append(outcome)
    assert outcomes[0] == "stalled" and outcomes[-1] == "committed"
    assert outcomes.count("stalled") >= 10  # the kill landed inside the transaction


def _append_many(path: str, worker: int, count: int, start: Any) -> None:
    start.wait()
    store = SQLiteSessionStore(path)  # all eight open the new file at once
    store.open_session("shared", user_id=None)
    for n in range(count):
        store.append_messages("shared", [user(f"worker {worker} message {n}")])
    store.close()


def test_eight_processes_appending_a_hundred_each_lose_nothing(tmp_path: Path) -> None:
    assert FORK is not None
    path = tmp_path / "state.db"
    start = FORK.Event()
    procs = [FORK.Process(target=_append_many, args=(str(path), w, 100, start)) for w in range(8)]
    for proc in procs:
        proc.start()
    start.set()
    for proc in procs:
        proc.join(300)
        assert proc.exitcode == 0
    rows = raw(path, "SELECT seq, content FROM messages WHERE session_id = 'shared' ORDER BY seq")
    assert [seq for seq, _ in rows] == list(range(1, 801))
    contents = [content for _, content in rows]
    assert set(contents) == {f"worker {w} message {n}" for w in range(8) for n in range(100)}
    for w in range(8):  # each worker's messages in its own order
        mine = [c for c in contents if c.startswith(f"worker {w} ")]
        assert mine == [f"worker {w} message {n}" for n in range(100)]
    store = SQLiteSessionStore(path)
    (hit,) = store.search('"worker 3"', user_id=None)
    assert hit.matches == 100  # the index saw every row
    store.close()
