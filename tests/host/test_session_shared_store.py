"""Two hosts serving one session through one store (a load balancer in front of both): a host
that holds an older view of the session adds its turn after the other host's, never over it."""

from __future__ import annotations

from pathlib import Path

from hermes_core import Hermes


def _hosts(tmp_path: Path, **compression: object) -> tuple[Hermes, Hermes]:
    config: dict[str, object] = {"sessions": {"db_path": str(tmp_path / "shared.db")}}
    if compression:
        config["compression"] = compression
        config["model"] = {"context_length": 8_000}
    return (
        Hermes.from_config(config, home=tmp_path / "a"),
        Hermes.from_config(config, home=tmp_path / "b"),
    )


def _contents(host: Hermes, session_id: str) -> list[str]:
    store = host.session_store
    assert store is not None
    return [row.message["content"] for row in store.messages(session_id)]


def test_alternating_hosts_with_open_sessions_keep_every_turn(tmp_path: Path) -> None:
    first, second = _hosts(tmp_path)
    with first, second:
        sessions = [first.session("s1", user_id="alice"), second.session("s1", user_id="alice")]
        expected = []
        for turn in range(6):
            session = sessions[turn % 2]
            ask = {"role": "user", "content": f"question {turn}"}
            session.prepare([*session.messages, ask])
            answer = {"role": "assistant", "content": f"answer {turn}"}
            session.end_turn([*session.messages, answer])
            expected += [f"question {turn}", f"answer {turn}"]
        assert _contents(first, "s1") == expected
        # the host that served turn 4 last catches up with turn 5 on its next call
        lagging = sessions[0]
        lagging.prepare([*lagging.messages, {"role": "user", "content": "question 6"}])
        assert [m["content"] for m in lagging.messages] == [*expected, "question 6"]


def test_a_host_that_keeps_its_own_list_appends_after_the_other_host(tmp_path: Path) -> None:
    first, second = _hosts(tmp_path)
    with first, second:
        mine: list[dict[str, str]] = []
        a = first.session("s2", user_id="bob")
        mine.append({"role": "user", "content": "one"})
        a.prepare(mine)
        mine.append({"role": "assistant", "content": "reply one"})
        a.end_turn(mine)
        b = second.session("s2", user_id="bob")
        b.prepare([*b.messages, {"role": "user", "content": "two"}])
        b.end_turn([*b.messages, {"role": "assistant", "content": "reply two"}])
        mine.append({"role": "user", "content": "three"})  # the first host's list is stale
        a.prepare(mine)
        assert _contents(first, "s2") == ["one", "reply one", "two", "reply two", "three"]


def test_the_same_words_said_again_on_the_other_host_are_kept(tmp_path: Path) -> None:
    """A short reply said twice ("yes", "yes") is two user turns, not one request served
    twice: the older view's host stores its own, and the model sees it last."""
    first, second = _hosts(tmp_path)
    with first, second:
        a = first.session("s3", user_id="carol")
        b = second.session("s3", user_id="carol")
        a.prepare([{"role": "user", "content": "Shall I deploy?"}])
        a.end_turn([*a.messages, {"role": "assistant", "content": "Run the tests first?"}])
        b.prepare([*b.messages, {"role": "user", "content": "yes"}])
        b.end_turn([*b.messages, {"role": "assistant", "content": "Tests pass. Deploy now?"}])
        sent = a.prepare([*a.messages, {"role": "user", "content": "yes"}])
        assert [m["content"] for m in sent][-2:] == ["Tests pass. Deploy now?", "yes"]
        assert _contents(first, "s3") == [
            "Shall I deploy?",
            "Run the tests first?",
            "yes",
            "Tests pass. Deploy now?",
            "yes",
        ]


def test_a_host_with_its_own_stale_list_keeps_the_other_hosts_turns_call_after_call(
    tmp_path: Path,
) -> None:
    first, second = _hosts(tmp_path)
    with first, second:
        mine: list[dict[str, str]] = []
        a = first.session("s5", user_id="erin")
        mine.append({"role": "user", "content": "one"})
        a.prepare(mine)
        mine.append({"role": "assistant", "content": "reply one"})
        a.end_turn(mine)
        b = second.session("s5", user_id="erin")
        b.prepare([*b.messages, {"role": "user", "content": "two"}])
        b.end_turn([*b.messages, {"role": "assistant", "content": "reply two"}])
        for word in ("three", "four"):  # the first host never learns of turn two
            mine.append({"role": "user", "content": word})
            sent = a.prepare(mine)
            assert [m["content"] for m in sent][2:4] == ["two", "reply two"]
            mine.append({"role": "assistant", "content": f"reply {word}"})
            a.end_turn(mine)
        assert _contents(first, "s5") == [
            "one", "reply one", "two", "reply two",
            "three", "reply three", "four", "reply four",
        ]  # fmt: skip


def test_closing_an_older_view_keeps_the_other_hosts_state(tmp_path: Path) -> None:
    first, second = _hosts(tmp_path)
    with first, second:
        a = first.session("s4", user_id="dan")
        a.prepare([{"role": "user", "content": "one"}])
        b = second.session("s4", user_id="dan")
        b.prepare([*b.messages, {"role": "user", "content": "two"}])
        store = second.session_store
        assert store is not None
        before = store.get_session("s4", user_id="dan")
        a.close()  # a's view ends at "one"; b has stored more since
        after = store.get_session("s4", user_id="dan")
        assert before is not None and after is not None
        assert after.state == before.state


def test_a_host_holding_the_parent_follows_the_other_hosts_child_sessions(
    tmp_path: Path,
) -> None:
    """compression.in_place: false: the other host compacted into children; the host with
    the older view must go on in the newest child, not fork the ended parent."""
    first, second = _hosts(tmp_path, in_place=False)
    with first, second:
        a = first.session("s6", user_id="fay")
        a.prepare([{"role": "user", "content": "task first " + "word " * 50}])
        a.end_turn([*a.messages, {"role": "assistant", "content": "done first"}])
        b = second.session("s6", user_id="fay")
        for n in range(12):  # enough to compact into a child several times
            b.prepare([*b.messages, {"role": "user", "content": f"task {n} " + "word " * 800}])
            b.end_turn([*b.messages, {"role": "assistant", "content": f"done {n}"}])
        assert b.session_id != "s6"
        sent = a.prepare([*a.messages, {"role": "user", "content": "FINAL QUESTION"}])
        assert a.session_id == b.session_id
        assert sent[-1]["content"] == "FINAL QUESTION"
        later = b.prepare([*b.messages, {"role": "user", "content": "after"}])
        assert [m["content"] for m in later][-2:] == ["FINAL QUESTION", "after"]
        store = first.session_store
        assert store is not None
        children = [sid for sid in store.lineage("s6") if sid != "s6"]
        ends = [store.get_session(sid, user_id="fay") for sid in children]
        live = [r for r in ends if r is not None and r.end_reason is None]
        assert len(live) == 1  # one conversation, not a fork


def test_a_parent_closed_before_another_host_compacted_it_is_not_forked(tmp_path: Path) -> None:
    """Review finding: a stateless host closes the session after every request, so the parent
    ends "closed" before its compaction into a child; the host holding the parent's view must
    still follow the child."""
    first, second = _hosts(tmp_path, in_place=False)
    with first, second:
        a = first.session("s7", user_id="gus")
        a.prepare([{"role": "user", "content": "task first " + "word " * 50}])
        a.end_turn([*a.messages, {"role": "assistant", "content": "done first"}])
        served = "s7"
        for n in range(12):  # per request: open, one turn, close
            with second.session("s7", user_id="gus") as b:
                b.prepare([*b.messages, {"role": "user", "content": f"task {n} " + "word " * 800}])
                b.end_turn([*b.messages, {"role": "assistant", "content": f"done {n}"}])
                served = b.session_id
            if served != "s7":
                break
        assert served != "s7"
        a.prepare([*a.messages, {"role": "user", "content": "FINAL QUESTION"}])
        assert a.session_id == served
        store = first.session_store
        assert store is not None
        assert [sid for sid in store.lineage("s7") if sid != "s7"] == [served]  # no fork
        with second.session("s7", user_id="gus") as c:
            assert c.messages[-1]["content"] == "FINAL QUESTION"


def test_a_rewritten_history_that_loses_a_race_is_decided_again(tmp_path: Path) -> None:
    first, second = _hosts(tmp_path)
    with first, second:
        a = first.session("s8", user_id="hal")
        a.prepare([{"role": "user", "content": "u1"}])
        a.end_turn([*a.messages, {"role": "assistant", "content": "r1"}])
        a.prepare([*a.messages, {"role": "user", "content": "u2"}])
        other = second.session_store
        assert other is not None
        real = a.store
        assert real is not None

        class Racing:
            """The store, with another host writing just before the first compaction."""

            raced = False

            def __getattr__(self, name: str) -> object:
                return getattr(real, name)

            def commit_compaction(self, session_id: str, *args: object, **kw: object) -> object:
                if not Racing.raced:
                    Racing.raced = True
                    other.append_messages(session_id, [{"role": "assistant", "content": "late"}])
                return real.commit_compaction(session_id, *args, **kw)  # type: ignore[arg-type]

        a.store = Racing()  # type: ignore[assignment]
        # the host dropped "u2" and asks something else instead: a rewritten history
        a.prepare([{"role": "user", "content": "u1"}, {"role": "assistant", "content": "r1"},
                   {"role": "user", "content": "u3 instead"}])  # fmt: skip
        a.store = real
        assert Racing.raced
        assert [r.message["content"] for r in real.messages("s8")] == ["u1", "r1", "u3 instead"]
