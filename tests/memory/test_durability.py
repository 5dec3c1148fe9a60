"""Real processes against one memory file: concurrent writers all land, and a writer killed
with SIGKILL at random moments never leaves a broken file or loses a reported entry."""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from hermes_core.memory import MemoryStore
from hermes_core.memory.entries import parse_entries, round_trips
from hermes_core.types import Finding

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
FORK = multiprocessing.get_context("fork") if hasattr(os, "fork") else None
BIG = 10**7  # limits raised so that only concurrency is under test


def no_threats(text: str) -> list[Finding]:
    return []


def _open(directory: str) -> MemoryStore:
    return MemoryStore(directory, memory_char_limit=BIG, user_char_limit=BIG, scanner=no_threats)


def _add_many(directory: str, worker: int, count: int, start: object) -> None:
    store = _open(directory)
    start.wait()  # type: ignore[attr-defined]  # a multiprocessing.Event
    for n in range(count):
        result = store.add("memory", f"worker {worker} entry {n}")
        if not result["success"]:
            raise SystemExit(f"add failed: {result}")


def test_eight_processes_adding_fifty_entries_each_all_land(tmp_path: Path) -> None:
    assert FORK is not None
    start = FORK.Event()
    procs = [FORK.Process(target=_add_many, args=(str(tmp_path), w, 50, start)) for w in range(8)]
    for proc in procs:
        proc.start()
    start.set()
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    text = (tmp_path / "MEMORY.md").read_text(encoding="utf-8")
    entries = parse_entries(text)
    assert len(entries) == 400
    assert set(entries) == {f"worker {w} entry {n}" for w in range(8) for n in range(50)}
    assert round_trips(text)


def _keep_writing(directory: str, round_no: int, report: Connection) -> None:
    store = _open(directory)
    n = 0
    while True:
        entry = f"round {round_no} entry {n}"
        if store.add("memory", entry)["success"]:
            report.send(entry)  # reported only once the add has returned
        if n % 5 == 4 and store.replace("memory", entry, entry + " (edited)")["success"]:
            report.send(entry + " (edited)")  # mix in rewrites of the file's entries
        n += 1


def test_sigkill_at_random_moments_never_breaks_the_file(tmp_path: Path) -> None:
    assert FORK is not None
    rng = random.Random(20261130)
    path = tmp_path / "MEMORY.md"
    reported: set[str] = set()
    edited: set[str] = set()
    for round_no in range(200):
        receive, send = FORK.Pipe(duplex=False)
        proc = FORK.Process(target=_keep_writing, args=(str(tmp_path), round_no, send))
        proc.start()
        time.sleep(rng.uniform(0.0, 0.06))
        assert proc.pid is not None
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(10)
        send.close()
        while receive.poll():
            try:
                entry = receive.recv()
            except (EOFError, OSError):
                break
            (edited if entry.endswith("(edited)") else reported).add(entry)
        receive.close()
        text = path.read_text(encoding="utf-8") if path.exists() else ""  # strict UTF-8
        assert round_trips(text), f"round {round_no}: the file is not what we write"
        entries = set(parse_entries(text))
        for entry in reported:
            # a reported add is there, or was reported as edited afterwards
            assert entry in entries or f"{entry} (edited)" in entries, (round_no, entry)
        assert edited <= entries, round_no
    assert len(reported) > 200 and len(edited) > 20  # the writers really wrote between kills
    # a killed writer's temp file is removed by the next writer (it holds the lock, so no
    # temp file it finds can belong to a live write); only the last round's may remain
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(leftovers) <= 1 and all(name.startswith(".MEMORY.md.") for name in leftovers)
    print(f"{len(reported)} adds and {len(edited)} edits reported")
