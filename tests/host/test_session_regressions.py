"""Defects a reviewer reproduced in the first version of the session lifecycle, one test each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from host_support import RecallPlugin, assistant, make_hermes, run_turns, user

import hermes_core as hc
from hermes_core.markers import hookimpl
from hermes_core.sessions.sqlite import SQLiteSessionStore
from hermes_core.testing import registered

SMALL = {"model": {"context_length": 8_000}}
PROSE = " ".join(f"Sentence {k} adds one more detail to the plan." for k in range(40))


class FlakyStore(SQLiteSessionStore):
    """The SQLite store, refusing the next N appends or commits on demand."""

    backend = "flaky"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.fail_appends = 0
        self.fail_commits = 0

    def append_messages(self, session_id: str, messages: Any, **kwargs: Any) -> list[int]:
        if self.fail_appends:
            self.fail_appends -= 1
            raise hc.SessionError("database is locked (injected)")
        return super().append_messages(session_id, messages, **kwargs)

    def commit_compaction(self, *args: Any, **kwargs: Any) -> Any:
        if self.fail_commits:
            self.fail_commits -= 1
            raise hc.SessionError("disk full (injected)")
        return super().commit_compaction(*args, **kwargs)


class StorePlugin:
    def __init__(self, store: FlakyStore) -> None:
        self.store = store

    @hookimpl
    def session_store(self) -> FlakyStore:
        return self.store


def test_a_failed_append_loses_nothing_the_retry_stores_it(tmp_path: Path) -> None:
    store = FlakyStore(tmp_path / "flaky.db")
    with make_hermes(tmp_path) as host, registered(host, StorePlugin(store), "flaky"):
        session = host.session("s1")
        messages = [{"role": "system", "content": "sys"}, user("first")]
        session.prepare(messages)
        messages += [assistant("ok"), user("IMPORTANT second question")]
        store.fail_appends = 1
        with pytest.raises(hc.SessionError):
            session.prepare(messages)
        wire = session.prepare(messages)  # the host retries the same call
        assert wire[-1]["content"] == "IMPORTANT second question"
        contents = [r.message["content"] for r in store.messages("s1")]
        assert contents == ["sys", "first", "ok", "IMPORTANT second question"]


def test_a_rewrite_the_store_refuses_is_an_error_not_a_silent_success(tmp_path: Path) -> None:
    store = FlakyStore(tmp_path / "flaky.db")
    events: list[hc.SessionEvent] = []
    with make_hermes(tmp_path) as host, registered(host, StorePlugin(store), "flaky"):
        session = host.session("s1", on_event=events.append)
        session.prepare([user("delete all files in /tmp")])
        store.fail_commits = 1
        rewritten = [user("actually, do NOT delete anything")]
        with pytest.raises(hc.SessionError, match="nothing was changed"):
            session.prepare(rewritten)
        assert "transcript_replaced" not in [e.kind for e in events]
        assert session.prepare(rewritten)[0]["content"] == "actually, do NOT delete anything"


def test_a_compaction_the_store_refuses_leaves_the_compressor_as_it_was(tmp_path: Path) -> None:
    store = FlakyStore(tmp_path / "flaky.db")
    with make_hermes(tmp_path, SMALL) as host, registered(host, StorePlugin(store), "flaky"):
        session = host.session("s1")
        store.fail_commits = 1_000
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        run_turns(session, messages, [f"step {n}: {PROSE}" for n in range(14)], with_tools=False)
        assert session.compressor.compactions == 0 and session.compressor.previous_summary is None
        store.fail_commits = 0
        messages.append(user("one more"))
        wire = session.prepare(messages)  # the store is back: the compaction happens now
        assert session.compressor.compactions == 1
        assert hc.count_tokens(wire) < 8_000


def test_resuming_a_closed_then_compacted_conversation_lands_in_the_child(
    tmp_path: Path,
) -> None:
    config = {**SMALL, "compression": {"in_place": False}}
    with make_hermes(tmp_path, config) as host:
        host.session("chat").prepare([user("day one")])  # closed by host.close()
    with make_hermes(tmp_path, config) as host:
        session = host.session("chat")
        messages = [*session.messages, assistant("ok")]
        run_turns(session, messages, [f"step {n}: {PROSE}" for n in range(14)], with_tools=False)
        child = session.session_id
        assert child != "chat"
    with make_hermes(tmp_path, config) as host:
        assert host.session("chat").session_id == child


def test_one_conversation_cannot_be_opened_twice_in_one_process(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        first = host.session("s1")
        with pytest.raises(hc.SessionError, match="already open"):
            host.session("s1")
        first.close()
        host.session("s1").close()  # once closed it can be opened again


def test_search_excerpts_never_carry_part_of_a_secret(tmp_path: Path) -> None:
    key = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    filler = " ".join(f"word{n}" for n in range(60))
    with make_hermes(tmp_path) as host:
        old = host.session("old", user_id="eve")
        old.prepare([user(f"{filler} the walrus key is {key} and {token} {filler}")])
        old.close()
        found = host.session("new", user_id="eve").handle_tool_call(
            "session_search", {"query": "walrus"}
        )
        assert "walrus" in found
        for fragment in (key[8:24], token[4:20], key[-12:], token[-12:]):
            assert fragment not in found


@pytest.mark.parametrize("limit", [1e999, float("nan"), float("-inf"), 2.5, "3", [3]])
def test_session_search_answers_json_for_any_limit(tmp_path: Path, limit: Any) -> None:
    with make_hermes(tmp_path) as host:
        answer = json.loads(
            host.session("s1").handle_tool_call("session_search", {"query": "x", "limit": limit})
        )
        assert answer["success"] is False and "limit" in answer["error"]


def test_a_lone_surrogate_in_a_query_is_not_echoed(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        answer = host.session("s1").handle_tool_call("session_search", '{"query": "x\\ud800"}')
        answer.encode("utf-8")  # a host can send it on


def test_set_model_survives_a_restart(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        session = host.session("s1")
        session.set_model("gpt-4o-mini", context_length=32_000)
        session.set_model("gpt-4o-mini")  # no window: the one set before stays
        threshold = session.compressor.threshold_tokens
    with make_hermes(tmp_path) as host:
        session = host.session("s1")
        assert session.info.model == "gpt-4o-mini"
        assert session.compressor.context_length == 32_000
        assert session.compressor.threshold_tokens == threshold


def test_a_turn_is_synced_to_the_providers_once(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        plugin = RecallPlugin()
        with registered(host, plugin, "recall"):
            session = host.session("s1")
            messages = [user("hello")]
            session.prepare(messages)
            messages.append(assistant("hi"))
            session.end_turn(messages)
            session.end_turn(messages)  # called twice
            session.close()
        assert [t.user for t in plugin.synced] == ["hello"]


def test_events_reach_the_host_redacted(tmp_path: Path) -> None:
    events: list[hc.SessionEvent] = []

    class Leaky:
        @hookimpl
        def memory_prefetch(self, query: str, session: Any) -> str:
            raise RuntimeError("provider said: token=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z")

    with make_hermes(tmp_path) as host, registered(host, Leaky(), "leaky"):
        host.session("s1", on_event=events.append).prepare([user("hi")])
    errors = [e for e in events if e.kind == "provider_error"]
    assert errors and "sk-proj-Ab3d" not in json.dumps([dict(e.data) for e in errors])


def test_the_cli_refuses_a_huge_limit_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hermes_core.cli import main

    code = main(["--home", str(tmp_path), "sessions", "search", "x", "--limit", "9" * 20])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err


def test_sessions_export_takes_json_and_refuses_a_device(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hermes_core.cli import main

    with make_hermes(tmp_path) as host:
        host.session("s1").prepare([user("hello")])
    assert main(["--home", str(tmp_path), "sessions", "export", "s1", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [m["content"] for m in document["messages"]] == ["hello"]
    fifo = tmp_path / "pipe"
    import os

    os.mkfifo(fifo)
    code = main(["--home", str(tmp_path), "sessions", "export", "s1", "--out", str(fifo)])
    assert code == 2 and fifo.is_fifo()


class RacingStore(FlakyStore):
    """Another host appends to the session right after this one read its rows (once)."""

    race: Any = None

    def messages(self, session_id: str, **kwargs: Any) -> Any:
        rows = super().messages(session_id, **kwargs)
        race, self.race = self.race, None
        if race is not None:
            race()
        return rows


def test_a_row_written_while_a_session_opens_is_not_stored_twice(tmp_path: Path) -> None:
    # seen once in CI: two processes serving one conversation in turn; the opening one read
    # the rows, the other stored a reply, then the opening one read the newest seq (which
    # counted that reply), so its next write was not stale and stored the reply again
    store = RacingStore(tmp_path / "state.db")  # the file the first host's store opens too
    history = [user("question 0")]
    with make_hermes(tmp_path) as one, make_hermes(tmp_path) as two:
        first = one.session("shared")
        first.prepare(history)
        reply = assistant("reply to question 0")
        store.race = lambda: first.end_turn([*history, reply])
        with registered(two, StorePlugin(store), "race"):
            second = two.session("shared")  # opens while the first stores its reply
            history += [reply, user("question 1")]
            second.prepare(history)
            contents = [r.message["content"] for r in store.messages("shared")]
    assert contents == ["question 0", "reply to question 0", "question 1"]
