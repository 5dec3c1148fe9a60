#!/usr/bin/env python3
"""Search p95 per user, before and after planner statistics, and the store's size before and
after retention and vacuum, on SQLite and PostgreSQL (issue 28, items 5 and 6).

1. Generates ``--messages`` (100,000) messages over ``--sessions`` (1,000) sessions of 20
   users, skewed: ``heavy`` holds 40% of the sessions, the other 19 share the rest on a Zipf
   curve (the lightest holds well under 1%). Words come from a 20,000-word vocabulary with a
   Zipf distribution. Sessions start over the last 180 days; in each, the first 60% of the
   rows were archived by a compaction (``compacted``), the rest are the active view.
2. Loads them in bulk (SQLite: ``executemany`` in one transaction, the index triggers
   firing; PostgreSQL: ``COPY``, autovacuum off for both tables, no ANALYZE), so the planner
   starts without statistics, as after a bulk import.
3. For every user, ``--repeat`` searches (limit 3, snippets and context included) of a
   common word (in ~30% of messages) and of a rare one (~0.05%): each user's own p95, and the
   worst user's. Then ``refresh_statistics()`` and the same again.
4. Retention (``--days`` 90: about half the sessions) with ``bodies: compress`` and then, on a
   copy, ``bodies: drop``; sizes before, after retention and after ``sessions vacuum``
   (SQLite: file + WAL; PostgreSQL: ``pg_total_relation_size`` of the session tables,
   ``VACUUM FULL``); the p95 once more on the retained store.

Usage: python bench/search_p95.py [--messages N] [--sessions N] [--repeat N] [--no-postgres]
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hermes_core.sessions.retention import DAY  # noqa: E402
from hermes_core.sessions.sqlite import SQLiteSessionStore  # noqa: E402
from hermes_core.sessions.sqlite.rows import owner_token  # noqa: E402

SYLLABLES = [
    "ka", "ri", "to", "men", "sol", "ver", "da", "pli", "gor", "an", "tes", "lu", "mo",
    "zen", "fra", "bel", "qui", "nor", "sta", "vin", "ex", "o", "ul", "ther", "pa", "cro",
]  # fmt: skip
USERS = ["heavy"] + [f"user{n:02d}" for n in range(1, 20)]
ADMIN_DSN = os.environ.get("HERMES_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
NOW = 1_800_000_000.0

Row = tuple[str, int, int | None, str, str, str, float, int, int]


def owners(rng: random.Random, sessions: int) -> list[str]:
    """The user of each session: 40% ``heavy``, the rest Zipf over the other 19."""
    weights = [1 / (rank + 1) ** 1.3 for rank in range(len(USERS) - 1)]
    heavy = round(sessions * 0.4)
    rest = rng.choices(USERS[1:], weights, k=sessions - heavy)
    who = ["heavy"] * heavy + rest
    rng.shuffle(who)
    return who


def generate(messages: int, sessions: int, seed: int = 28) -> tuple[list[Any], list[Row]]:
    rng = random.Random(seed)
    words: set[str] = set()
    while len(words) < 20_000:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    vocab = sorted(words, key=lambda w: (len(w), w))
    rng.shuffle(vocab)
    weights = [1 / (rank + 1) ** 1.05 for rank in range(len(vocab))]
    cumulative = list(__import__("itertools").accumulate(weights))
    who = owners(rng, sessions)
    per = messages // sessions
    session_rows, rows = [], []
    for s in range(sessions):
        sid = f"s{s:06d}"
        started = NOW - rng.uniform(0, 180) * DAY
        session_rows.append((sid, who[s], f"generated {s}", started))
        archived = int(per * 0.6)
        for seq in range(1, per + 1):
            text = " ".join(rng.choices(vocab, cum_weights=cumulative, k=rng.randint(8, 40)))
            active = seq > archived
            rows.append(
                (
                    sid,
                    seq,
                    seq - archived if active else None,
                    "user" if seq % 2 else "assistant",
                    text,
                    owner_token(who[s]),
                    started + seq * 30.0,
                    int(active),
                    int(not active),
                )
            )
    return session_rows, rows


def pick_words(rows: list[Row]) -> tuple[str, str]:
    """A word in ~30% of the messages, and one in ~0.05%."""
    sample = rows[:: max(1, len(rows) // 20_000)]
    counts: dict[str, int] = {}
    for row in sample:
        for word in set(row[4].split()):
            counts[word] = counts.get(word, 0) + 1
    n = len(sample)
    common = min(counts, key=lambda w: abs(counts[w] / n - 0.30))
    rare = min(counts, key=lambda w: (abs(counts[w] / n - 0.0005), w))
    return common, rare


# --- loading ------------------------------------------------------------------------------


def load_sqlite(path: Path, session_rows: list[Any], rows: list[Row]) -> SQLiteSessionStore:
    store = SQLiteSessionStore(path, clock=lambda: NOW)

    def load(conn: Any) -> None:
        conn.executemany(
            "INSERT INTO sessions (id, user_id, title, started_at) VALUES (?, ?, ?, ?)",
            session_rows,
        )
        conn.executemany(
            "INSERT INTO messages (session_id, seq, pos, role, content, owner, timestamp, "
            "active, compacted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )

    store._pool.write(load)
    return store


def pg_database() -> Iterator[str]:
    import psycopg

    name = f"hc_bench_{os.getpid()}"
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} ENCODING 'UTF8' TEMPLATE template0")
    try:
        yield ADMIN_DSN.rpartition("/")[0] + "/" + name
    finally:
        with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def load_postgres(dsn: str, session_rows: list[Any], rows: list[Row]) -> Any:
    from hermes_plugins.postgres.database import Database
    from hermes_plugins.postgres.sessions import PostgresSessionStore

    store = PostgresSessionStore(Database(dsn, timeout=600), clock=lambda: NOW)

    def load(conn: Any) -> None:
        for table in ("hermes.sessions", "hermes.messages"):
            conn.execute(f"ALTER TABLE {table} SET (autovacuum_enabled = false)")
        with conn.cursor().copy(
            "COPY hermes.sessions (id, user_id, title, started_at) FROM STDIN"
        ) as copy:
            for row in session_rows:
                copy.write_row(row)
        with conn.cursor().copy(
            'COPY hermes.messages (session_id, seq, pos, role, content, owner, "timestamp", '
            "active, compacted) FROM STDIN"
        ) as copy:
            for row in rows:
                copy.write_row((*row[:7], bool(row[7]), bool(row[8])))

    store._run(load, idempotent=False)
    return store


# --- measuring ----------------------------------------------------------------------------


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def per_user(store: Any, word: str, repeat: int) -> dict[str, float]:
    """Each user's own p95 in ms for ``word``."""
    result = {}
    for user in USERS:
        samples = []
        for _ in range(repeat):
            started = time.perf_counter()
            store.search(word, user_id=user, limit=3)
            samples.append((time.perf_counter() - started) * 1000)
        result[user] = p95(samples)
    return result


def light_user(session_rows: list[Any]) -> str:
    held: dict[str, int] = {}
    for row in session_rows:
        held[row[1]] = held.get(row[1], 0) + 1
    return min((u for u in USERS if u in held), key=lambda u: held[u])


def measure(label: str, store: Any, words: tuple[str, str], repeat: int, light: str) -> None:
    for kind, word in zip(("common", "rare"), words, strict=True):
        found = per_user(store, word, repeat)
        worst = max(found, key=lambda u: found[u])
        print(
            f"| {label} | {kind} `{word}` | {found['heavy']:.1f} | {found[light]:.1f} | "
            f"{statistics.median(found.values()):.1f} | {found[worst]:.1f} ({worst}) |",
            flush=True,
        )


def mib(size: int) -> str:
    return f"{size / 2**20:,.1f} MiB"


def retention_rows(label: str, store: Any, bodies: str, vacuum: Callable[[], Any]) -> None:
    vacuum()  # the baseline is the compact store (no WAL, no free pages)
    before = store.size_bytes()
    report = store.retain(days=90, bodies=bodies, now=NOW)
    retained = store.size_bytes()
    vacuum()
    after = store.size_bytes()
    print(
        f"| {label} | {bodies} | {len(report.sessions):,} | {mib(before)} | {mib(retained)} | "
        f"{mib(after)} |",
        flush=True,
    )


RETENTION_HEADER = (
    "\n| store | bodies | sessions archived | before | after retention | after vacuum |\n"
    "|---|---|---|---|---|---|"
)


def postgres(
    session_rows: list[Any], rows: list[Row], words: tuple[str, str], args: Any, light: str
) -> list[str]:
    """The PostgreSQL half: load, p95 before and after statistics, retention, vacuum."""
    lines = []
    for dsn in pg_database():
        t = time.perf_counter()
        pg = load_postgres(dsn, session_rows, rows)
        lines.append(f"PostgreSQL COPY load: {time.perf_counter() - t:.1f} s")
        measure("PostgreSQL, no statistics", pg, words, args.repeat, light)
        pg.refresh_statistics()
        measure("PostgreSQL, analysed", pg, words, args.repeat, light)
        print(RETENTION_HEADER)
        retention_rows("PostgreSQL", pg, "drop", functools.partial(pg.vacuum, full=True))
        print()
        measure("PostgreSQL, retained", pg, words, args.repeat, light)
        pg.close()
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=20, help="searches per user and word")
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    session_rows, rows = generate(args.messages, args.sessions)
    words = pick_words(rows)
    light = light_user(session_rows)
    share = sum(1 for r in session_rows if r[1] == light) / len(session_rows)
    print(
        f"{len(rows):,} messages, {len(session_rows):,} sessions, generated in "
        f"{time.perf_counter() - started:.1f} s; heavy holds 40%, the lightest ({light}) "
        f"{share:.1%}; words: common `{words[0]}`, rare `{words[1]}`\n"
    )
    print("| store | word | heavy p95 ms | lightest p95 ms | median user p95 | worst user p95 |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        store = load_sqlite(Path(tmp) / "state.db", session_rows, rows)
        load_s = time.perf_counter() - t
        measure("SQLite, no statistics", store, words, args.repeat, light)
        store.refresh_statistics()
        measure("SQLite, analysed", store, words, args.repeat, light)
        copy = Path(tmp) / "copy.db"
        store.backup(copy)
        pg_lines = [] if args.no_postgres else postgres(session_rows, rows, words, args, light)
        if args.no_postgres:
            print(RETENTION_HEADER)
        retention_rows("SQLite", store, "compress", store.vacuum)
        dropped = SQLiteSessionStore(copy, clock=lambda: NOW)
        retention_rows("SQLite", dropped, "drop", dropped.vacuum)
        print()
        measure("SQLite, retained (compress)", store, words, args.repeat, light)
        measure("SQLite, retained (drop)", dropped, words, args.repeat, light)
        store.close()
        dropped.close()
    print(f"\nSQLite bulk load: {load_s:.1f} s; " + "; ".join(pg_lines))
    print(f"total {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
