"""Two hosts writing one session at the same moment (a user with two tabs, a retry racing
the original): neither host's call fails, and every message of both is stored exactly once."""

from __future__ import annotations

import multiprocessing
from collections import Counter
from pathlib import Path

from many_hosts import hammer

from hermes_core import Hermes

TURNS = 20  # both hosts start at a barrier: twenty turns each keep them overlapping


def test_two_hosts_writing_one_session_at_once_lose_nothing(pg_dsn: str, tmp_path: Path) -> None:
    config = {
        "sessions": {"backend": "postgres", "dsn": pg_dsn},
        "memory": {"nudge_interval": 0},
    }
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(2)
    results = context.Queue()
    workers = [
        context.Process(
            target=hammer, args=((config, str(tmp_path / name), name, TURNS), start, results)
        )
        for name in ("east", "west")
    ]
    for worker in workers:
        worker.start()
    reports = dict(results.get(timeout=600) for _ in workers)
    for worker in workers:
        worker.join(timeout=120)
    assert reports == {"east": [], "west": []}
    with Hermes.from_config(config, home=tmp_path / "reader") as host:
        store = host.session_store
        assert store is not None
        rows = store.messages("shared", include_archived=True)
    counts = Counter(r.message["content"] for r in rows)
    expected = {f"{kind}-{name}-{turn}" for kind in "qa" for name in ("east", "west")
                for turn in range(TURNS)}  # fmt: skip
    assert set(counts) == expected
    assert max(counts.values()) == 1
