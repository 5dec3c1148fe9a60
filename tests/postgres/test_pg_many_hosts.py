"""Four host processes (four homes, as on four machines), eight users, 72 turns each,
interleaved, through one PostgreSQL database: nothing lost, nothing doubled, nothing crosses
users (issue 15's shape at a third of its 200 turns: each user's session compacts at about
turn 58 and again two turns later, on other hosts than the one that built it, and the four
hosts then serve it a dozen more turns). Each round hands every user's turn to another host."""

from __future__ import annotations

import multiprocessing
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from many_hosts import chat_id, seed_notes, serve, token, user_id

from hermes_core import Hermes
from hermes_core.compression.assemble import SUMMARY_PREFIX
from hermes_core.memory.home import open_store

HOSTS, USERS, ROUNDS = 4, 8, 100
_QUESTION = re.compile(r"^question (tok\d\dx\d{4}) about the build$")
_ANSWER = re.compile(r"^answer to (tok\d\dx\d{4}): run make$")


def _config(dsn: str) -> dict[str, Any]:
    return {
        "model": {"context_length": 2_048},  # compactions near turn 58, then ~82: two each
        "sessions": {"backend": "postgres", "dsn": dsn},
        "memory": {"backend": "postgres", "user_char_limit": 100_000},
    }


def _run_hosts(config: dict[str, Any], home: Path) -> list[dict[str, Any]]:
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(HOSTS)
    results = context.Queue()
    workers = [
        context.Process(
            target=serve, args=((i, HOSTS, USERS, ROUNDS), config, str(home), barrier, results)
        )
        for i in range(HOSTS)
    ]
    for worker in workers:
        worker.start()
    reports = [results.get(timeout=1_200) for _ in workers]
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    return reports


@pytest.mark.slow
def test_four_hosts_serve_eight_users_interleaved(pg_dsn: str, tmp_path: Path) -> None:
    config = _config(pg_dsn)
    seed_notes(config, str(tmp_path / "seed"), USERS)
    reports = _run_hosts(config, tmp_path)
    problems = [p for r in reports for p in r["problems"]]
    assert not problems, problems[:3]
    assert sum(r["turns"] for r in reports) == USERS * ROUNDS
    committed = sum(r["compactions"] for r in reports)
    assert committed > USERS  # the run did compact, several times per user

    with Hermes.from_config(config, home=tmp_path / "reader") as host:
        store = host.session_store
        assert store is not None
        counted = 0
        for user in range(USERS):
            record = store.get_session(chat_id(user), user_id=user_id(user))
            assert record is not None
            assert store.get_session(chat_id(user), user_id=user_id((user + 1) % USERS)) is None
            rows = store.messages(chat_id(user), include_archived=True)
            texts = [r.message.get("content") or "" for r in rows]
            questions = Counter(m.group(1) for t in texts if (m := _QUESTION.match(t)))
            answers = Counter(m.group(1) for t in texts if (m := _ANSWER.match(t)))
            expected = {token(user, turn) for turn in range(ROUNDS)}
            assert set(questions) == expected and set(answers) == expected  # nothing lost
            assert max(questions.values()) == 1 and max(answers.values()) == 1  # nor doubled
            # the active view keeps the turns in order and at most one summary
            active = [r.message.get("content") or "" for r in store.messages(chat_id(user))]
            order = [m.group(1) for t in active if (m := _QUESTION.match(t))]
            assert order == sorted(order) and order[-1] == token(user, ROUNDS - 1)
            assert sum(t.startswith(SUMMARY_PREFIX) for t in active) <= 1
            # every committed compaction counted once, each summary stored once
            summaries = sum(t.startswith(SUMMARY_PREFIX) for t in texts)
            assert summaries == record.counters.get("compactions", 0)
            counted += record.counters.get("compactions", 0) + record.counters.get("prune_only", 0)
        assert counted == committed
        # memory: every fact any host saved for a user is in that user's profile, and only there
        documents = host.memory_documents()
        for user in range(USERS):
            memory = open_store(
                host.home, host.settings, user_id=user_id(user), documents=documents
            )
            facts = " ".join(memory.entries("user"))
            owners = {int(owner) for owner in re.findall(r"tok(\d\d)x", facts)}
            assert owners == {user}
            saved = {token(user, turn) for turn in range(0, ROUNDS, 10)}
            assert all(t in facts for t in saved), sorted(t for t in saved if t not in facts)
