"""Many processes, one user's memory in PostgreSQL: concurrent writers all land (optimistic
concurrency: a write that lost the race is decided again on the new text), and staged writes
approved by many processes at once are each applied exactly once.

Real processes (spawn), each with its own pool, as on several machines; a barrier starts them
together. What is asserted is what happened, never how fast.
"""

from __future__ import annotations

import multiprocessing
import queue
import traceback
from collections.abc import Callable
from typing import Any

import pytest

from hermes_core.memory import MemoryStore
from hermes_core.memory.approval import MemoryWriter, WriteRequest
from hermes_core.memory.documents import Decision
from hermes_core.memory.entries import parse_entries, round_trips
from hermes_core.types import Finding

psycopg = pytest.importorskip("psycopg")

from hermes_plugins.postgres.database import Database  # noqa: E402
from hermes_plugins.postgres.memory import PostgresMemoryDocuments  # noqa: E402
from hermes_plugins.postgres.memory.schema import SCHEMA_VERSION  # noqa: E402

BIG = 10**7  # limits raised so that only concurrency is under test
WRITERS, ADDS = 4, 25
APPROVERS, STAGED = 4, 10  # two approve in order, two in reverse: every id is contested


def no_threats(text: str) -> list[Finding]:
    return []


def _store(docs: PostgresMemoryDocuments, user: str | None = "alice") -> MemoryStore:
    return MemoryStore(
        docs, memory_char_limit=BIG, user_char_limit=BIG, scanner=no_threats, user_id=user
    )


def _add_many(docs: PostgresMemoryDocuments, worker: int, barrier: Any) -> Any:
    store = _store(docs)
    barrier.wait(timeout=120)
    failures = []
    for n in range(ADDS):
        result = store.add("user", f"worker {worker} entry {n}")
        if not result["success"]:
            failures.append(result)
    return failures


def _approve_all(docs: PostgresMemoryDocuments, ids: list[str], barrier: Any) -> Any:
    store = _store(docs, None)
    writer = MemoryWriter(store, mode="allow", store_for=lambda user: _store(docs, user))
    barrier.wait(timeout=120)
    applied, refused = 0, []
    for pending_id in ids:
        try:
            result = writer.approve(pending_id)
        except KeyError:
            continue  # consumed by another process before this one read it
        if result.get("success"):
            applied += 1
        else:
            refused.append(result.get("reason"))
    return applied, refused


def _opened(docs: PostgresMemoryDocuments, barrier: Any) -> Any:
    return _store(docs).add("user", "opened")["success"]


WORK: dict[str, Callable[..., Any]] = {"add": _add_many, "approve": _approve_all, "open": _opened}


def _worker(kind: str, dsn: str, args: tuple[Any, ...], barrier: Any, results: Any) -> None:
    """One process: its own pool, the work, and a report (or the traceback) on ``results``."""
    try:
        if kind == "open":  # all at once on a fresh database: each migrates or finds it done
            barrier.wait(timeout=120)
        docs = PostgresMemoryDocuments(Database(dsn, pool_size=1))
        try:
            results.put(("ok", WORK[kind](docs, *args, barrier)))
        finally:
            docs.close()
    except BaseException:
        barrier.abort()  # the others must not wait for this one
        results.put(("error", traceback.format_exc()))
        raise


def _run(kind: str, dsn: str, args_for: list[tuple[Any, ...]]) -> list[Any]:
    spawn = multiprocessing.get_context("spawn")
    barrier = spawn.Barrier(len(args_for))
    results = spawn.Queue()
    procs = [
        spawn.Process(target=_worker, args=(kind, dsn, args, barrier, results)) for args in args_for
    ]
    for proc in procs:
        proc.start()
    reports: list[Any] = []
    for _ in range(60):  # at most 10 minutes for the reports
        if len(reports) == len(procs):
            break
        try:
            status, value = results.get(timeout=10)
        except queue.Empty:
            dead = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
            assert not dead, f"a worker died without a report (exit codes {dead})"
            continue
        assert status == "ok", value
        reports.append(value)
    assert len(reports) == len(procs), "the workers did not report within 10 minutes"
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    return reports


def test_four_processes_opening_a_fresh_database_at_once_all_succeed(pg_dsn: str) -> None:
    assert _run("open", pg_dsn, [() for _ in range(APPROVERS)]) == [True] * APPROVERS
    with psycopg.connect(pg_dsn) as conn:
        versions = conn.execute("SELECT version FROM hermes.memory_schema").fetchall()
        assert versions == [(SCHEMA_VERSION,)]


def test_four_processes_adding_to_one_profile_all_land(pg_dsn: str) -> None:
    reports = _run("add", pg_dsn, [(w,) for w in range(WRITERS)])
    assert all(failures == [] for failures in reports), reports
    docs = PostgresMemoryDocuments(Database(pg_dsn))
    try:
        text = _store(docs).raw("user")
        entries = parse_entries(text)
        assert len(entries) == WRITERS * ADDS
        assert set(entries) == {
            f"worker {w} entry {n}" for w in range(WRITERS) for n in range(ADDS)
        }
        assert round_trips(text)
        assert _store(docs, "bob").raw("user") == "" and _store(docs, None).raw("user") == ""
    finally:
        docs.close()


def test_four_processes_approving_ten_staged_writes_apply_each_once(pg_dsn: str) -> None:
    docs = PostgresMemoryDocuments(Database(pg_dsn))
    try:
        stage = MemoryWriter(_store(docs), mode="stage")
        ids = [
            stage.write(WriteRequest("add", "user", f"staged fact {n}"))["pending_id"]
            for n in range(STAGED)
        ]
        assert len(set(ids)) == STAGED
        orders = [(ids if i % 2 else ids[::-1],) for i in range(APPROVERS)]
        reports = _run("approve", pg_dsn, orders)
        assert sum(applied for applied, _ in reports) == STAGED  # 10 applications in all
        assert {reason for _, refused in reports for reason in refused} <= {"gone"}
        assert sorted(_store(docs).entries("user")) == sorted(
            f"staged fact {n}" for n in range(STAGED)
        )
        assert stage.pending.all() == ([], [])
    finally:
        docs.close()


def test_a_write_that_lost_the_race_is_decided_again_on_the_new_text(pg_dsn: str) -> None:
    """Deterministic interleaving: while the first decision is being made, an operator's
    UPDATE (which does not touch the version column) changes the row. The write must not
    overwrite it: it is rolled back and decided again on the operator's text."""
    docs = PostgresMemoryDocuments(Database(pg_dsn))
    try:
        store = _store(docs)
        assert store.add("user", "first")["success"]
        seen: list[str | None] = []

        def decide(text: str | None) -> Decision[str]:
            seen.append(text)
            if len(seen) == 1:
                with psycopg.connect(pg_dsn, autocommit=True) as conn:
                    conn.execute(
                        "UPDATE hermes.memory_blocks SET text = 'first\n§\nby the operator' "
                        "WHERE scope = 'alice' AND target = 'user'"
                    )
            return Decision("ok", (text or "") + "\n§\nmine", succeeded=True)

        updated = docs.update("user", "alice", decide)
        assert updated is not None and updated.written
        assert seen == ["first", "first\n§\nby the operator"]
        assert store.entries("user") == ["first", "by the operator", "mine"]
    finally:
        docs.close()
