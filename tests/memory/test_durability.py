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
from typing import Any

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


WORKERS, ADDS = 4, 25  # a hundred locked read-modify-writes racing from the same instant


def test_four_processes_adding_twenty_five_entries_each_all_land(tmp_path: Path) -> None:
    assert FORK is not None
    start = FORK.Event()
    procs = [
        FORK.Process(target=_add_many, args=(str(tmp_path), w, ADDS, start)) for w in range(WORKERS)
    ]
    for proc in procs:
        proc.start()
    start.set()
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    text = (tmp_path / "MEMORY.md").read_text(encoding="utf-8")
    entries = parse_entries(text)
    assert len(entries) == WORKERS * ADDS
    assert set(entries) == {f"worker {w} entry {n}" for w in range(WORKERS) for n in range(ADDS)}
    assert round_trips(text)


def _keep_writing(directory: str, round_no: int, report: Connection) -> None:
    """Add (and every fifth time edit) entries until killed; each operation is announced
    before it starts and reported once it has returned."""
    store = _open(directory)
    n = 0
    while True:
        entry = f"round {round_no} entry {n}"
        report.send(("begin", entry))
        if store.add("memory", entry)["success"]:
            report.send(("added", entry))
        if n % 5 == 4:
            report.send(("begin", entry + " (edited)"))
            if store.replace("memory", entry, entry + " (edited)")["success"]:
                report.send(("added", entry + " (edited)"))  # a rewrite of the file's entries
        n += 1


def _receive_all(receive: Connection) -> list[tuple[str, str]]:
    messages = []
    while receive.poll():
        try:
            messages.append(receive.recv())
        except (EOFError, OSError):
            break
    return messages


def _check_file(path: Path, reported: set[str], edited: set[str], where: object) -> set[str]:
    text = path.read_text(encoding="utf-8") if path.exists() else ""  # strict UTF-8
    assert round_trips(text), f"{where}: the file is not what we write"
    entries = set(parse_entries(text))
    for entry in reported:
        # a reported add is there, or was reported as edited afterwards
        assert entry in entries or f"{entry} (edited)" in entries, (where, entry)
    assert edited <= entries, where
    return entries


def test_sigkill_at_random_moments_never_breaks_the_file(tmp_path: Path) -> None:
    """60 writers killed at a random moment once they are writing. What is asserted is what
    happened, never how much: every reported write is in the file and the file parses. How
    many kills landed inside an operation is counted and printed (it depends on the machine);
    the stage-by-stage test below makes sure each dangerous moment is hit."""
    assert FORK is not None
    rng = random.Random(20261130)
    path = tmp_path / "MEMORY.md"
    reported: set[str] = set()
    edited: set[str] = set()
    mid_operation = 0
    for round_no in range(60):  # each kill is an independent draw; the stage test is exhaustive
        receive, send = FORK.Pipe(duplex=False)
        proc = FORK.Process(target=_keep_writing, args=(str(tmp_path), round_no, send))
        proc.start()
        send.close()
        first: list[tuple[str, str]] = []
        while not any(kind == "added" for kind, _ in first):  # it is writing: now kill it
            assert receive.poll(60), f"round {round_no}: the writer never wrote"
            first.append(receive.recv())
        time.sleep(rng.uniform(0.0, 0.03))
        assert proc.pid is not None
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(10)
        assert proc.exitcode == -signal.SIGKILL, f"round {round_no}: the writer died on its own"
        messages = first + _receive_all(receive)
        receive.close()
        for kind, entry in messages:
            if kind == "added":
                (edited if entry.endswith("(edited)") else reported).add(entry)
        mid_operation += messages[-1][0] == "begin"
        _check_file(path, reported, edited, round_no)
    # a killed writer's temp file is removed by the next writer (it holds the lock, so no
    # temp file it finds can belong to a live write); only the last round's may remain
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(leftovers) <= 1 and all(name.startswith(".MEMORY.md.") for name in leftovers)
    print(f"{len(reported)} adds, {len(edited)} edits, {mid_operation} kills inside an operation")


# where a write can be caught: the temp file written but not renamed, the rename about to
# happen, the rename done but the directory not yet synced
STAGES = {"temp file written": "fsync", "before the rename": "replace", "after the rename": None}


def _stall_at(directory: str, stage: str, operation: str, report: Connection) -> None:
    """Three reported adds, then one more operation that stops for good at ``stage``."""
    from hermes_core.memory import files

    store = _open(directory)
    for n in range(3):
        assert store.add("memory", f"kept {n}")["success"]
        report.send(("added", f"kept {n}"))

    from hermes_core.memory import file_documents

    name = STAGES[stage]
    original = files._fsync_directory if name is None else getattr(os, name)
    in_file = False  # the dates sidecar is written first: stall in the memory file's write

    def stall(*args: object) -> object:
        if not in_file:
            return original(*args)
        report.send(("stalled", stage))
        time.sleep(3600)
        return None

    write = file_documents.atomic_write

    def tracked(path: Path, text: str, check: Any = None) -> None:
        nonlocal in_file
        in_file = path.name == "MEMORY.md"
        write(path, text, check)

    file_documents.atomic_write = tracked  # type: ignore[assignment]  # the child's only
    if name is None:
        files._fsync_directory = stall  # type: ignore[assignment]  # the child's copy only
    else:
        setattr(os, name, stall)
    if operation == "add":
        store.add("memory", "in flight")
    else:
        store.replace("memory", "kept 1", "in flight")


@pytest.mark.parametrize("operation", ["add", "replace"])
@pytest.mark.parametrize("stage", list(STAGES))
def test_sigkill_inside_each_stage_of_a_write(tmp_path: Path, stage: str, operation: str) -> None:
    """A kill that certainly lands mid-write: the child stops inside the write and says so;
    the file then holds the old state or the new one, whole, and the next writer cleans up."""
    assert FORK is not None
    receive, send = FORK.Pipe(duplex=False)
    proc = FORK.Process(target=_stall_at, args=(str(tmp_path), stage, operation, send))
    proc.start()
    send.close()
    messages: list[tuple[str, str]] = []
    while not messages or messages[-1][0] != "stalled":
        assert receive.poll(60), f"the writer never reached {stage}: {messages}"
        messages.append(receive.recv())
    assert proc.pid is not None
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(10)
    receive.close()
    kept = {"kept 0", "kept 1", "kept 2"}
    entries = _check_file(tmp_path / "MEMORY.md", set(), set(), stage)
    landed = stage == "after the rename"
    if operation == "add":
        assert entries == (kept | {"in flight"} if landed else kept)
    else:
        assert entries == ({"kept 0", "in flight", "kept 2"} if landed else kept)
    temps = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert bool(temps) == (stage in {"temp file written", "before the rename"})
    assert _open(str(tmp_path)).add("memory", "next writer")["success"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
