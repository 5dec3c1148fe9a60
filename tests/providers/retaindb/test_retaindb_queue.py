"""The write-behind queue: outages, order, parking, backoff, WAL, 0600, replay and SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("httpx")

from fake_retaindb import FakeRetainDB
from retaindb_support import API_KEY_ENV, provider_config

from hermes_core.types import SessionInfo, Turn
from hermes_plugins.retaindb import RetainDBProvider
from hermes_plugins.retaindb.queue import DeliveryFailed, QueuedTurn, WriteBehindQueue

Make = Callable[..., RetainDBProvider]
ALICE = SessionInfo(session_id="s-alice", user_id="alice")


def wait_for(condition: Callable[[], bool], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


def turn(i: int) -> Turn:
    return Turn(user=f"turn {i} marker{i}", assistant=f"reply {i}", turn_index=i)


def content(i: int) -> str:
    return f"User: turn {i} marker{i}\nAssistant: reply {i}"


def test_queue_file_is_wal_and_private(make_provider: Make, tmp_path: Path) -> None:
    provider = make_provider()
    path = tmp_path / "home" / "retaindb_queue.db"
    assert provider.queue.path == path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    wal = path.with_name(path.name + "-wal")
    if wal.exists():
        assert stat.S_IMODE(wal.stat().st_mode) == 0o600


def test_turns_synced_while_down_arrive_in_order_once(
    make_provider: Make, fake: FakeRetainDB
) -> None:
    provider = make_provider()
    fake.fail(500)
    for i in range(6):
        provider.memory_sync(turn=turn(i), session=ALICE)
    wait_for(lambda: len(fake.requests_to("POST", "/v1/memories")) >= 3)
    assert fake.contents() == []
    assert provider.queue.counts()["pending"] == 6
    # every retry so far was the head row: later turns wait behind it, so order holds
    keys = {r.body["idempotency_key"] for r in fake.requests_to("POST", "/v1/memories")}
    assert len(keys) == 1
    fake.heal()
    assert provider.flush(10.0)
    assert fake.contents("u-alice") == [content(i) for i in range(6)]
    assert provider.queue.rows() == []


def test_a_failing_user_does_not_hold_up_another(tmp_path: Path) -> None:
    sent: list[str] = []

    def send(row: QueuedTurn) -> None:
        if row.user_id == "alice":
            raise DeliveryFailed("down for alice", retryable=True)
        sent.append(row.payload["n"])

    queue = WriteBehindQueue(tmp_path / "q.db", send, max_attempts=5, backoff_base=1, backoff_cap=8)
    queue.enqueue("alice", "s", {"n": "a1"})
    queue.enqueue("bob", "s", {"n": "b1"})
    queue.enqueue("bob", "s", {"n": "b2"})
    for _ in range(3):
        queue.run_once()
    assert sent == ["b1", "b2"]
    assert queue.counts() == {"pending": 1, "parked": 0}
    queue.close(0)


def test_backoff_doubles_up_to_the_cap_with_an_injected_clock(tmp_path: Path) -> None:
    now = [1000.0]
    attempts: list[float] = []

    def send(row: QueuedTurn) -> None:
        attempts.append(now[0])
        raise DeliveryFailed("HTTP 503", retryable=True)

    queue = WriteBehindQueue(
        tmp_path / "q.db",
        send,
        max_attempts=10,
        backoff_base=2.0,
        backoff_cap=10.0,
        clock=lambda: now[0],
    )
    queue.enqueue("alice", "s", {"content": "x"})
    delays = []
    for _ in range(5):
        next_due = queue.run_once()
        assert next_due is not None
        delays.append(next_due - now[0])
        now[0] = next_due - 0.001
        queue.run_once()  # not due yet: nothing is sent
        now[0] = next_due
    assert delays == [2.0, 4.0, 8.0, 10.0, 10.0]
    assert len(attempts) == 5
    assert [queue.backoff(n) for n in (1, 2, 3, 4, 60)] == [2.0, 4.0, 8.0, 10.0, 10.0]
    (row,) = queue.rows()
    assert row["attempts"] == 5 and row["status"] == "pending" and "503" in row["last_error"]
    queue.close(0)


def test_rows_the_server_keeps_rejecting_are_parked_after_max_attempts(
    make_provider: Make, fake: FakeRetainDB
) -> None:
    provider = make_provider(max_attempts=3)
    fake.fail(400)
    provider.memory_sync(turn=turn(0), session=ALICE)
    wait_for(lambda: provider.queue.counts()["parked"] == 1)
    assert len(fake.requests_to("POST", "/v1/memories")) == 3
    (row,) = provider.queue.rows()
    assert row["status"] == "parked" and row["attempts"] == 3
    # a parked row does not block the next turn and is not retried
    fake.heal()
    provider.memory_sync(turn=turn(1), session=ALICE)
    assert provider.flush(5.0)
    assert fake.contents() == [content(1)]
    assert len(fake.requests_to("POST", "/v1/memories")) == 4


@pytest.mark.parametrize("status", [401, 403, 404, 408, 429, 500, 503])
def test_an_outage_is_waited_out_and_never_parks(
    make_provider: Make, fake: FakeRetainDB, status: int
) -> None:
    """A reviewer found turns parked (and so lost) after two minutes of 503s; an outage, a
    throttle or an expired key now never parks, however many attempts it takes."""
    provider = make_provider(max_attempts=2)
    fake.fail(status, count=6)  # three times max_attempts
    for i in range(3):
        provider.memory_sync(turn=turn(i), session=ALICE)
    assert provider.flush(10.0)
    assert provider.queue.counts() == {"pending": 0, "parked": 0}
    assert fake.contents() == [content(0), content(1), content(2)]


def test_pending_rows_replay_at_start_up(
    make_provider: Make, fake: FakeRetainDB, tmp_path: Path
) -> None:
    first = make_provider(start_writer=False)
    for i in range(3):
        first.memory_sync(turn=turn(i), session=ALICE)
    first.close()
    assert fake.requests == []
    second = make_provider()
    assert second.flush(5.0)
    assert fake.contents("u-alice") == [content(i) for i in range(3)]


def test_shutdown_drains_for_a_bounded_time_and_keeps_the_rest(
    make_provider: Make, fake: FakeRetainDB
) -> None:
    provider = make_provider(drain_timeout=0.3, timeout=0.2)
    fake.delay = 30.0  # hung server
    for i in range(3):
        provider.memory_sync(turn=turn(i), session=ALICE)
    started = time.monotonic()
    provider.close()
    assert time.monotonic() - started < 30.0  # before the hung server could have answered
    fake.heal()
    with sqlite3.connect(provider.queue.path) as db:
        assert db.execute("SELECT COUNT(*) FROM turns WHERE status='pending'").fetchone()[0] == 3


CHILD = textwrap.dedent(
    """
    import json, logging, sys, time
    from pathlib import Path
    from hermes_core.plugins import PluginContext
    from hermes_core.types import SessionInfo, Turn
    from hermes_plugins.retaindb import RetainDBProvider

    home, config, count = Path(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
    context = PluginContext("retaindb", config, home, logging.getLogger("child"))
    provider = RetainDBProvider(context)
    session = SessionInfo(session_id="s-alice", user_id="alice")
    for i in range(count):
        turn = Turn(user=f"turn {i} marker{i}", assistant=f"reply {i}", turn_index=i)
        provider.memory_sync(turn=turn, session=session)
    print("synced", flush=True)
    time.sleep(120)
    """
)


def test_nothing_lost_or_doubled_across_sigkill(
    fake: FakeRetainDB, api_key: str, tmp_path: Path, make_provider: Make
) -> None:
    """The child syncs while the server is down, gets one turn stored but never hears back,
    and is killed; the parent's new provider replays: every turn once, in order."""
    home = tmp_path / "home"
    count = 5
    fake.fail(500)
    # a long client timeout, so the child is still waiting on the "stored" answer when killed
    config = provider_config(fake, timeout=30.0)
    env = dict(os.environ, **{API_KEY_ENV: api_key})
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(home), json.dumps(config), str(count)],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "synced"
        wait_for(lambda: len(fake.requests_to("POST", "/v1/memories")) >= 3)
        with fake._lock:  # atomically: stop failing, store the next write but never answer
            fake.store_then_hang = True
            fake.status = None
        wait_for(lambda: len(fake.contents()) == 1)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    assert fake.contents() == [content(0)]
    fake.heal()

    provider = make_provider(home=home)  # the next start replays what the child left
    assert provider.flush(10.0)
    assert fake.contents("u-alice") == [content(i) for i in range(count)]
    assert fake.duplicates == 1  # turn 0 was sent again and dropped by its idempotency key
    assert provider.queue.rows() == []
