"""Issue 28: the dates stay in step with the text under concurrent writes from two real
processes (each holding the file lock in turn), over sequences hypothesis draws: every entry
has exactly one record, in text order; created <= updated; nothing either process wrote is
lost. Each process changes only its own entries, so what the file must hold is known."""

from __future__ import annotations

import json
import multiprocessing
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.memory import MemoryStore
from hermes_core.memory.dates import entry_key, load_meta
from hermes_core.memory.entries import parse_entries, round_trips
from hermes_core.types import Finding

FORK = multiprocessing.get_context("fork") if hasattr(os, "fork") else None
pytestmark = pytest.mark.skipif(FORK is None, reason="needs fork")
SLOTS = 3
Op = tuple[str, int]
OPS = st.lists(
    st.tuples(st.sampled_from(["add", "replace", "remove"]), st.integers(0, SLOTS - 1)), max_size=8
)


def no_threats(text: str) -> list[Finding]:
    return []


def _expected(name: str, ops: list[Op]) -> tuple[set[str], list[tuple[str, Op]]]:
    """The entries ``name`` leaves, and the calls it makes (operations on slots it holds)."""
    held: dict[int, int] = {}
    calls: list[tuple[str, Op]] = []
    for action, slot in ops:
        content = f"{name} slot {slot} v{held.get(slot, 0)}"
        if action == "add" and slot not in held:
            held[slot] = 0
            calls.append((content, (action, slot)))
        elif action != "add" and slot in held:
            if action == "remove":
                del held[slot]
            else:
                held[slot] += 1
            calls.append((content, (action, slot)))
    return {f"{name} slot {s} v{v}" for s, v in held.items()}, calls


def _worker(directory: str, name: str, ops: list[Op], start: object) -> None:
    store = MemoryStore(directory, scanner=no_threats, memory_char_limit=100_000)
    held: dict[int, int] = {}
    start.wait()  # type: ignore[attr-defined]  # a multiprocessing.Event: both go at once
    for action, slot in ops:
        old = f"{name} slot {slot} v{held.get(slot, 0)}"
        if action == "add" and slot not in held:
            result = store.add("memory", old)
            held[slot] = 0
        elif action == "replace" and slot in held:
            held[slot] += 1
            result = store.replace("memory", old, f"{name} slot {slot} v{held[slot]}")
        elif action == "remove" and slot in held:
            del held[slot]
            result = store.remove("memory", old)
        else:
            continue
        if not result["success"]:
            os._exit(3)
    os._exit(0)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=OPS, second=OPS)
def test_two_processes_keep_text_and_dates_in_step(first: list[Op], second: list[Op]) -> None:
    assert FORK is not None
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "memories"
        start = FORK.Event()
        procs = [
            FORK.Process(target=_worker, args=(str(directory), name, ops, start))
            for name, ops in (("A", first), ("B", second))
        ]
        for proc in procs:
            proc.start()
        start.set()
        for proc in procs:
            proc.join(120)
            assert proc.exitcode == 0, "a write was refused"
        path = directory / "MEMORY.md"
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        entries = parse_entries(text)
        expected = _expected("A", first)[0] | _expected("B", second)[0]
        assert set(entries) == expected, "a write was lost"
        assert round_trips(text) or not text
        sidecar = path.with_name("MEMORY.md.meta.json")
        if not sidecar.exists():
            assert not _expected("A", first)[1] and not _expected("B", second)[1]
            return
        meta = load_meta(json.loads(sidecar.read_text(encoding="utf-8")))
        assert [key for key, _ in meta.entries] == [entry_key(e) for e in entries]
        for _, dates in meta.entries:
            assert dates.created <= dates.updated
            assert dates.last_used is None or dates.last_used >= dates.created
        if text:
            assert meta.written == (entry_key(text), len(text))
