"""The store is chosen through the ``session_store`` hook, and many processes can share it."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest
from host_support import assistant, make_hermes, user

import hermes_core as hc
from hermes_core.markers import hookimpl
from hermes_core.sessions import SessionStore
from hermes_core.sessions.sqlite import SQLiteSessionStore
from hermes_core.testing import registered


class CountingStore(SQLiteSessionStore):
    """The SQLite store, counting appends: a stand-in for another backend."""

    backend = "counting"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.appends = 0

    def append_messages(self, session_id: str, messages: Any, **kwargs: Any) -> list[int]:
        self.appends += 1
        return super().append_messages(session_id, messages, **kwargs)


class StorePlugin:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    @hookimpl
    def session_store(self) -> Any:
        return self.answer


def test_a_plugin_store_wins_over_the_built_in_one(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        store = CountingStore(tmp_path / "other.db")
        with registered(host, StorePlugin(store), "other-store"):
            assert host.session_store is store
            assert isinstance(store, SessionStore)
            host.session("s1").prepare([user("hi")])
            assert store.appends == 1
    assert not (tmp_path / "state.db").exists()


def test_a_plugin_that_declines_leaves_the_built_in_store(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host, registered(host, StorePlugin(None), "declines"):
        assert host.session_store is not None and host.session_store.backend == "sqlite"


def test_an_answer_that_is_no_store_is_refused(tmp_path: Path) -> None:
    with (
        make_hermes(tmp_path) as host,
        registered(host, StorePlugin("not a store"), "broken"),
        pytest.raises(hc.SessionError, match=r"not a hermes_core\.sessions\.SessionStore"),
    ):
        _ = host.session_store


def test_with_the_built_in_store_disabled_and_no_other_the_error_says_what_to_do(
    tmp_path: Path,
) -> None:
    with (
        make_hermes(tmp_path, {"plugins": {"disabled": ["session_store"]}}) as host,
        pytest.raises(hc.SessionError, match=r"sessions\.enabled: false"),
    ):
        host.session("s1")


# four writers (two of them one user) interleave hundreds of commits on one file: enough to
# race, and each loses nothing
WORKERS, TURNS = 4, 30


def _converse(home: str, worker: int, turns: int) -> None:
    host = make_hermes(Path(home), {"compression": {"enabled": False}})
    with host:
        session = host.session(f"w{worker}", user_id=f"user{worker % 3}")
        messages: list[dict[str, Any]] = []
        for turn in range(turns):
            messages.append(user(f"worker {worker} question {turn}"))
            session.prepare(messages)
            session.record_usage({"prompt_tokens": 10 + turn})
            messages.append(assistant(f"worker {worker} answer {turn}"))
            session.end_turn(messages)
        session.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_four_processes_of_thirty_turns_on_one_state_db_lose_nothing(
    tmp_path: Path,
) -> None:
    fork = multiprocessing.get_context("fork")
    procs = [fork.Process(target=_converse, args=(str(tmp_path), w, TURNS)) for w in range(WORKERS)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(600)
        assert proc.exitcode == 0
    with make_hermes(tmp_path) as host:
        store = host.session_store
        assert store is not None
        for worker in range(WORKERS):
            rows = store.messages(f"w{worker}")
            expected = [
                text
                for turn in range(TURNS)
                for text in (f"worker {worker} question {turn}", f"worker {worker} answer {turn}")
            ]
            assert [r.message["content"] for r in rows] == expected
            assert [r.seq for r in rows] == list(range(1, 2 * TURNS + 1))
            record = store.get_session(f"w{worker}", user_id=f"user{worker % 3}")
            assert record is not None and record.counters["requests"] == TURNS
            assert record.end_reason == "closed"


def _serve(home: str, conn: Any) -> None:
    """A host process: one Session for conversation "shared", kept open, serving the turns
    the parent sends it (each with the client's whole history, as a gateway gets them)."""
    host = make_hermes(Path(home), {"compression": {"enabled": False}})
    session = host.session("shared", user_id="carol")
    while True:
        messages = conn.recv()
        if messages is None:
            break
        session.prepare(messages)
        reply = assistant(f"reply to {messages[-1]['content']}")
        session.end_turn([*messages, reply])
        conn.send(reply)
    session.close()
    host.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_two_processes_serving_one_conversation_in_turn_store_each_message_once(
    tmp_path: Path,
) -> None:
    fork = multiprocessing.get_context("fork")
    with make_hermes(tmp_path) as host:  # create the row before the two hosts start
        host.session("shared", user_id="carol").close()
    pipes, procs = [], []
    for _ in range(2):
        parent, child = fork.Pipe()
        proc = fork.Process(target=_serve, args=(str(tmp_path), child))
        proc.start()
        pipes.append(parent)
        procs.append(proc)
    history: list[dict[str, Any]] = []
    for turn in range(10):
        history.append(user(f"question {turn}"))
        pipe = pipes[turn % 2]  # the load balancer alternates
        pipe.send(history)
        assert pipe.poll(120), "a host did not answer"
        history.append(pipe.recv())
    for pipe in pipes:
        pipe.send(None)
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    with make_hermes(tmp_path) as host:
        rows = host.session_store.messages("shared")  # type: ignore[union-attr]
        assert [r.message["content"] for r in rows] == [m["content"] for m in history]


def test_a_stale_writer_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "state.db")
    store.open_session("s", user_id=None)
    assert store.last_seq("s") == 0
    store.append_messages("s", [user("a")], after_seq=0)
    with pytest.raises(hc.StaleSessionError):
        store.append_messages("s", [user("b")], after_seq=0)
    with pytest.raises(hc.StaleSessionError):
        store.commit_compaction("s", [user("c")], [None], in_place=True, after_seq=0)
    assert [r.message["content"] for r in store.messages("s", include_archived=True)] == ["a"]
    assert store.last_seq("s") == 1
    store.close()
