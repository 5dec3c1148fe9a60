"""The host lifecycle through ``Hermes.session()``: real home, real SQLite store, real plugins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from host_support import RecallPlugin, assistant, make_hermes, run_turns, tool_round, user

import hermes_core as hc
from hermes_core.testing import registered

SMALL = {"model": {"context_length": 8_000}}


def stored(host: hc.Hermes, session_id: str, *, archived: bool = False) -> list[Any]:
    store = host.session_store
    assert store is not None
    return store.messages(session_id, include_archived=archived)


def test_system_prompt_carries_the_frozen_memory_snapshot(tmp_path: Path) -> None:
    host = make_hermes(tmp_path)
    with host:
        first = host.session("s1")
        first.handle_tool_call(
            "memory", {"action": "add", "target": "memory", "content": "Project uses uv."}
        )
        before = first.system_prompt("You are helpful.")
        assert before == "You are helpful."  # the snapshot was frozen when s1 began
        first.close()
        second = host.session("s2")
        prompt = second.system_prompt("You are helpful.")
        assert prompt.startswith("You are helpful.\n\n") and "Project uses uv." in prompt
        second.handle_tool_call(
            "memory", {"action": "add", "target": "memory", "content": "Tests run with tox."}
        )
        assert second.system_prompt("You are helpful.") == prompt  # same bytes all session


def test_tools_and_tool_calls(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        session = host.session("s1", user_id="alice")
        names = [t["function"]["name"] for t in session.tools()]
        assert names == ["memory", "session_search", "session_recall", "skill_manage"]
        answer = json.loads(
            session.handle_tool_call(
                "memory", '{"action": "add", "target": "user", "content": "Likes tabs."}'
            )
        )
        assert answer["success"] is True
        assert json.loads(session.handle_tool_call("nope", {}))["success"] is False
        bad = json.loads(session.handle_tool_call("session_search", "{not json"))
        assert bad == {"success": False, "error": "arguments are not valid JSON"}


def test_prepare_persists_only_what_is_new_however_the_host_keeps_its_list(
    tmp_path: Path,
) -> None:
    with make_hermes(tmp_path) as host:
        session = host.session("s1")
        own = [{"role": "system", "content": "sys"}, user("hello")]
        wire = session.prepare(own)
        assert wire == own
        own.append(assistant("hi"))
        session.end_turn(own)
        own.append(user("again"))  # 1: the host's own growing list
        session.prepare(own)
        adopted = [*session.prepare(own), assistant("sure"), user("third")]  # 2: adopted
        session.prepare(adopted)
        session.prepare([*session.messages, assistant("ok"), user("fourth")])  # 3: stateless
        contents = [row.message["content"] for row in stored(host, "s1")]
        assert contents == ["sys", "hello", "hi", "again", "sure", "third", "ok", "fourth"]
        assert [row.seq for row in stored(host, "s1")] == list(range(1, 9))


def test_recall_goes_into_the_api_copy_only_and_is_sent_again_unchanged(
    tmp_path: Path,
) -> None:
    with make_hermes(tmp_path) as host:
        plugin = RecallPlugin()
        with registered(host, plugin, "recall"):
            session = host.session("s1", user_id="alice")
            messages = [user("when do we deploy?")]
            wire = session.prepare(messages)
            assert messages == [user("when do we deploy?")]  # the host's list is untouched
            sent = wire[-1]["content"]
            assert sent.startswith("when do we deploy?\n\n<memory-context>")
            assert "The user deploys on Fridays." in sent
            assert plugin.queries == [("when do we deploy?", "alice")]
            row = stored(host, "s1")[0]
            assert row.message["content"] == "when do we deploy?" and row.api_content == sent
            messages.append(assistant("Fridays."))
            session.end_turn(messages)
            messages.append(user("thanks"))
            again = session.prepare(messages)
            assert again[0]["content"] == sent  # the same bytes: the prefix cache holds
            assert len(plugin.queries) == 2  # recall for the new user message only
            session.close()
            assert [t.user for t in plugin.synced] == ["when do we deploy?"]
            assert plugin.synced[0].assistant == "Fridays."


def test_compaction_inside_prepare_is_committed_with_the_originals_kept(tmp_path: Path) -> None:
    events: list[hc.SessionEvent] = []
    with make_hermes(tmp_path, SMALL) as host:
        session = host.session("s1", on_event=events.append)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        sent = run_turns(session, messages, [f"task {n}" for n in range(12)])
        window = 8_000
        assert all(hc.count_tokens(wire) < window for wire in sent)
        kinds = [e.kind for e in events]
        assert "compaction_committed" in kinds
        active = stored(host, "s1")
        everything = stored(host, "s1", archived=True)
        assert len(everything) > len(active)
        compacted = [r for r in everything if r.compacted]
        assert compacted and all(not r.active for r in compacted)
        originals = [r.message.get("content") for r in everything]
        assert all(f"task {n}" in originals for n in range(12))  # nothing was lost
        assert all(r.active for r in active) and not any(r.compacted for r in active)
        wire_now = session.prepare(messages)
        assert [m.get("content") for m in wire_now] == [
            r.message.get("content") if r.api_content is None else r.api_content for r in active
        ]
        record = host.session_store.get_session("s1", user_id=None)  # type: ignore[union-attr]
        assert record is not None
        done = record.counters.get("compactions", 0) + record.counters.get("prune_only", 0)
        assert done == kinds.count("compaction_committed") >= 1


def test_in_place_false_continues_in_a_child_and_resume_follows_it(tmp_path: Path) -> None:
    config = {**SMALL, "compression": {"in_place": False}}
    with make_hermes(tmp_path, config) as host:
        plugin = RecallPlugin()
        with registered(host, plugin, "recall"):
            session = host.session("s1", user_id="bob")
            messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
            run_turns(session, messages, [f"task {n}" for n in range(12)])
            child = session.session_id
            assert child != "s1" and child.startswith("s1.")
            assert plugin.switched and plugin.switched[0][0] == "s1"
            store = host.session_store
            assert store is not None
            parent = store.get_session("s1", user_id="bob")
            assert parent is not None and parent.end_reason == "compression"
            record = store.get_session(child, user_id="bob")
            assert record is not None and record.parent_session_id is not None
            session.close()
    with make_hermes(tmp_path, config) as host:
        resumed = host.session("s1", user_id="bob")
        assert resumed.session_id != "s1"
        lineage = host.session_store.lineage("s1")  # type: ignore[union-attr]
        assert resumed.session_id in lineage


def test_record_usage_anchors_on_exactly_what_prepare_returned(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        session = host.session("s1")
        messages = [{"role": "system", "content": "sys"}, user("hello there")]
        wire = session.prepare(messages)
        session.record_usage({"prompt_tokens": 5_000})
        assert session.compressor.observe(session.view.sent) == 5_000
        messages += [assistant("hi"), user("more")]
        session.prepare(messages)
        grown = session.compressor.observe(session.view.sent)
        assert 5_000 < grown < 5_000 + hc.count_tokens(wire) * 3
        with pytest.raises(hc.InvalidArgument, match="usage must be the API response's usage"):
            session.record_usage(None)  # type: ignore[arg-type]


def test_a_session_of_another_user_is_never_resumed(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        host.session("shared-id", user_id="alice").close()
        with pytest.raises(hc.SessionError):
            host.session("shared-id", user_id="bob")
        with pytest.raises(hc.SessionError):
            host.session("shared-id")  # the anonymous principal is not alice either


@pytest.mark.parametrize("bad", ["", "  ", "a\nb", "x\x1b[8m", "z" * 300, 7, None])
def test_bad_ids_are_refused_with_a_clear_error(tmp_path: Path, bad: Any) -> None:
    with make_hermes(tmp_path) as host:
        with pytest.raises(hc.SessionError):
            host.session(bad)
        if bad is not None:
            with pytest.raises(hc.SessionError):
                host.session("ok", user_id=bad)


def test_bad_messages_are_refused_and_change_nothing(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        session = host.session("s1")
        session.prepare([user("hello")])
        for bad in ("text", [1, 2], None, [user("x"), "y"]):
            with pytest.raises(hc.InvalidMessages):
                session.prepare(bad)  # type: ignore[arg-type]
        assert [r.message["content"] for r in stored(host, "s1")] == ["hello"]


def test_a_rewritten_history_is_taken_as_the_truth_and_nothing_is_deleted(
    tmp_path: Path,
) -> None:
    events: list[hc.SessionEvent] = []
    with make_hermes(tmp_path) as host:
        session = host.session("s1", on_event=events.append)
        session.prepare([user("one"), assistant("two"), user("three")])
        session.prepare([user("one"), assistant("edited"), user("three")])
        assert [e.kind for e in events].count("transcript_replaced") == 1
        active = [r.message["content"] for r in stored(host, "s1")]
        assert active == ["one", "edited", "three"]
        archived = [r.message["content"] for r in stored(host, "s1", archived=True)]
        assert archived == ["one", "two", "three", "edited"]  # seq order; "two" archived


def test_closed_sessions_refuse_calls_and_close_twice(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        session = host.session("s1")
        session.close()
        session.close()
        with pytest.raises(hc.SessionError, match="closed"):
            session.prepare([user("x")])
        record = host.session_store.get_session("s1", user_id=None)  # type: ignore[union-attr]
        assert record is not None and record.end_reason == "closed"


def test_hermes_close_closes_its_open_sessions(tmp_path: Path) -> None:
    host = make_hermes(tmp_path)
    session = host.session("s1")
    session.prepare([user("hello")])
    host.close()
    with pytest.raises(hc.SessionError):
        session.prepare([user("hello"), assistant("x"), user("y")])


def test_tool_rounds_and_their_results_are_stored_in_order(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        session = host.session("s1")
        messages = [user("read it"), *tool_round(1, "print(1)")]
        session.prepare(messages)
        messages.append(assistant("done"))
        session.end_turn(messages)
        rows = stored(host, "s1")
        assert [r.message["role"] for r in rows] == ["user", "assistant", "tool", "assistant"]
        assert rows[1].message["tool_calls"][0]["function"]["name"] == "read_file"
        assert rows[2].message["tool_call_id"] == "call_1"


def test_usage_reported_after_end_turn_still_anchors_on_what_was_sent(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        session = host.session("s1")
        messages = [{"role": "system", "content": "sys"}, user("hello there")]
        session.prepare(messages)
        messages.append(assistant("a reply of some length " * 20))
        session.end_turn(messages)  # before the usage arrives
        session.record_usage({"prompt_tokens": 5_000})
        grown = session.compressor.observe(session.view.sent)
        reply = hc.count_tokens([messages[-1]])
        assert 5_000 + reply // 2 < grown < 5_000 + reply * 2  # the reply is on top, not in
