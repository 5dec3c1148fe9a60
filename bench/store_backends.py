#!/usr/bin/env python3
"""The session store on SQLite and on PostgreSQL, in the same run: search and writes.

1. For each ``--sizes`` (100,000 and 1,000,000 messages): the generated sessions of
   ``bench/session_search.py`` (same vocabulary, users, tool calls and CJK share) are written
   to a fresh ``state.db`` and to a fresh PostgreSQL database, then the same query mix runs on
   both, query by query in alternation (so machine noise hits both alike). Reports p50 and p95
   per backend, medians over ``--runs`` runs, and the ratio PostgreSQL / SQLite.
2. Writes with four writers: four processes each append ``--batches`` batches of 20 messages
   (one transaction each) to their own sessions of one store; messages per second over the
   whole run, for each backend.

PostgreSQL: ``--admin-dsn`` (default ``postgresql://postgres@127.0.0.1:5432/postgres``) must
be allowed to create and drop databases; the bench database is dropped at the end.

Usage: python bench/store_backends.py [--sizes 100000 1000000] [--runs 5] [--batches 200]
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from session_search import (  # noqa: E402
    BATCH,
    SESSION_SIZE,
    USERS,
    generate,
    percentile,
    queries,
    vocabulary,
)

from hermes_core.sessions.sqlite import SQLiteSessionStore  # noqa: E402

ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
CHUNK = 100  # sessions generated (and written) at a time, so 1M messages fit in memory


def create_database(admin: str) -> tuple[str, str]:
    import psycopg

    name = f"hc_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name, admin.rsplit("/", 1)[0] + "/" + name


def drop_database(admin: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def open_postgres(dsn: str, pool_size: int = 2) -> Any:
    from hermes_plugins.postgres.database import Database
    from hermes_plugins.postgres.sessions import PostgresSessionStore

    return PostgresSessionStore(Database(dsn, pool_size=pool_size, timeout=120))


def sessions_of(total: int, seed: int = 7) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """The generated sessions, CHUNK at a time (the same ones for every backend)."""
    rng = random.Random(seed)
    words = vocabulary(rng, 20_000)
    number = 0
    for _ in range(0, total // SESSION_SIZE, CHUNK):
        for messages in generate(rng, words, CHUNK * SESSION_SIZE):
            yield number, messages
            number += 1
            if number * SESSION_SIZE >= total:
                return


def build(store: Any, total: int) -> float:
    """Seconds to write ``total`` messages (BATCH a transaction)."""
    started = time.perf_counter()
    for number, messages in sessions_of(total):
        sid = f"session-{number:06d}"
        store.open_session(sid, user_id=USERS[number % len(USERS)], title=f"generated {number}")
        for start in range(0, len(messages), BATCH):
            store.append_messages(sid, messages[start : start + BATCH])
    return time.perf_counter() - started


def one_run(stores: dict[str, Any], mix: dict[str, list[str]]) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in stores}
    for qs in mix.values():
        for user in (None, "alice"):
            for query in qs:
                for name, store in stores.items():
                    started = time.perf_counter()
                    store.search(query, user_id=user, limit=3)
                    times[name].append(time.perf_counter() - started)
    out = {}
    for name, ts in times.items():
        out[f"{name} p50"] = percentile(ts, 0.5) * 1000
        out[f"{name} p95"] = percentile(ts, 0.95) * 1000
    return out


def search_figures(total: int, runs: int, admin: str, tmp: Path) -> dict[str, float]:
    name, dsn = create_database(admin)
    try:
        sqlite = SQLiteSessionStore(tmp / f"search-{total}.db")
        postgres = open_postgres(dsn)
        figures = {
            "sqlite build": build(sqlite, total),
            "postgres build": build(postgres, total),
        }
        words = vocabulary(random.Random(7), 20_000)
        mix = queries(words)
        stores = {"sqlite": sqlite, "postgres": postgres}
        one_run(stores, mix)  # warm caches
        results = [one_run(stores, mix) for _ in range(runs)]
        for key in results[0]:
            figures[key] = statistics.median(r[key] for r in results)
        figures["queries"] = 2 * sum(len(q) for q in mix.values())
        sqlite.close()
        postgres.close()
        return figures
    finally:
        drop_database(admin, name)


def _writer(job: tuple[str, str, int, int], start: Any, done: Any) -> None:
    kind, where, index, batches = job
    store = SQLiteSessionStore(Path(where)) if kind == "sqlite" else open_postgres(where, 1)
    messages = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": f"writer {index} line {n}"}
        for n in range(BATCH)
    ]
    start.wait()
    for b in range(batches):
        sid = f"w{index}-{b // 10}"
        if b % 10 == 0:
            store.open_session(sid, user_id=f"user{index}")
        store.append_messages(sid, messages)
    store.close()
    done.put(index)


def write_rate(kind: str, where: str, batches: int, writers: int = 4) -> float:
    """Messages per second with ``writers`` processes appending at once."""
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(writers + 1)
    done = context.Queue()
    procs = [
        context.Process(target=_writer, args=((kind, where, i, batches), start, done))
        for i in range(writers)
    ]
    for proc in procs:
        proc.start()
    start.wait()
    began = time.perf_counter()
    for _ in procs:
        done.get(timeout=3_600)
    elapsed = time.perf_counter() - began
    for proc in procs:
        proc.join()
    return writers * batches * BATCH / elapsed


def write_figures(batches: int, runs: int, admin: str, tmp: Path) -> dict[str, float]:
    rates: dict[str, list[float]] = {"sqlite": [], "postgres": []}
    for run in range(runs):
        name, dsn = create_database(admin)
        try:
            open_postgres(dsn).close()  # the schema, before the clock starts
            path = tmp / f"writes-{run}.db"
            SQLiteSessionStore(path).close()
            rates["sqlite"].append(write_rate("sqlite", str(path), batches))
            rates["postgres"].append(write_rate("postgres", dsn, batches))
        finally:
            drop_database(admin, name)
    return {kind: statistics.median(values) for kind, values in rates.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batches", type=int, default=200, help="per writer")
    parser.add_argument("--admin-dsn", default=ADMIN)
    args = parser.parse_args()
    show: Callable[[str], None] = print
    with tempfile.TemporaryDirectory() as tmp:
        show(
            "| messages | SQLite p50 | SQLite p95 | PostgreSQL p50 | PostgreSQL p95 "
            "| PG / SQLite p50 | PG / SQLite p95 | build SQLite | build PG |"
        )
        show("|---|---|---|---|---|---|---|---|---|")
        for total in args.sizes:
            f = search_figures(total, args.runs, args.admin_dsn, Path(tmp))
            show(
                f"| {total:,} | {f['sqlite p50']:.1f} ms | {f['sqlite p95']:.1f} ms "
                f"| {f['postgres p50']:.1f} ms | {f['postgres p95']:.1f} ms "
                f"| {f['postgres p50'] / f['sqlite p50']:.2f}x "
                f"| {f['postgres p95'] / f['sqlite p95']:.2f}x "
                f"| {total / f['sqlite build']:,.0f} msg/s "
                f"| {total / f['postgres build']:,.0f} msg/s |"
            )
        rates = write_figures(args.batches, args.runs, args.admin_dsn, Path(tmp))
        show(
            f"\nfour writers, {BATCH} messages a transaction: SQLite {rates['sqlite']:,.0f} "
            f"messages/s, PostgreSQL {rates['postgres']:,.0f} messages/s "
            f"({rates['postgres'] / rates['sqlite']:.2f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
