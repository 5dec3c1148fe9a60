"""Issue 14: the background review through ``Hermes.session()``: after ``memory.nudge_interval``
user turns a review runs after the reply, on a daemon thread, against the real loopback LLM;
a user fact with a quote of the user's words is saved, one without is not, a replace is staged,
a failing LLM is an event and nothing else; ``close()`` flushes one last review."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeLLM, answer, call, http_error, tool_calls
from host_support import make_hermes, run_turns

import hermes_core as hc
from hermes_core.cli import main as hc_main

PREFERENCE = "Please keep answers short, no preamble."


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def config(llm: FakeLLM, **memory: Any) -> dict[str, Any]:
    return {
        "model": {"context_length": 128_000, "name": "gpt-4o"},
        "auxiliary": {"compression": {"base_url": llm.base_url, "model": "aux", "timeout": 5}},
        "memory": memory,
    }


class Events:
    """The session's events; ``wait(kind)`` blocks until one of that kind arrived."""

    def __init__(self) -> None:
        self.seen: list[hc.SessionEvent] = []
        self._arrived = threading.Condition()

    def __call__(self, event: hc.SessionEvent) -> None:
        with self._arrived:
            self.seen.append(event)
            self._arrived.notify_all()

    def kinds(self) -> list[str]:
        return [e.kind for e in self.seen]

    def wait(self, *kinds: str, timeout: float = 60.0) -> hc.SessionEvent:
        with self._arrived:
            found = self._arrived.wait_for(
                lambda: next((e for e in self.seen if e.kind in kinds), None), timeout
            )
        assert found, f"no {kinds} event; saw {self.kinds()}"
        return found


def texts(n: int) -> list[str]:
    steps = [f"step {i}: look at module {i} and tell me what it does" for i in range(n)]
    steps[min(2, n - 1)] = PREFERENCE
    return steps


def user_md(home: Path) -> str:
    path = home / "memories" / "USER.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_a_review_after_ten_turns_saves_the_quoted_fact_and_stages_the_unquoted(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    quoted = {"action": "add", "target": "user", "content": "Wants short answers with no preamble"}
    quoted["quote"] = "keep answers short, no preamble"
    unquoted = {"action": "add", "target": "user", "content": "Works late at night"}
    fake_llm.script(
        tool_calls(call("memory", quoted, "c1"), call("memory", unquoted, "c2")),
        answer("Nothing more to save."),
    )
    fake_llm.default = answer("Nothing to save.")
    events = Events()
    with make_hermes(tmp_path, config(fake_llm)) as host:
        session = host.session("s1", on_event=events)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        run_turns(session, messages, texts(9), with_tools=False)
        assert not fake_llm.requests  # nine turns: not due yet
        run_turns(session, messages, ["step 9: and the last one"], with_tools=False)
        finished = events.wait("review_finished", "review_failed")
        assert finished.kind == "review_finished", finished.data
        profile = user_md(tmp_path)
        assert "Wants short answers with no preamble" in profile
        assert "night" not in profile
        refused = [e for e in events.seen if e.kind == "review_refused"]
        assert refused == []  # the unquoted fact waits for a person (issue 26)
        staged = [p.name for p in (tmp_path / "pending" / "memory").glob("*.json")]
        assert len(staged) == 1
        request = fake_llm.requests[0].json
        offered = [tool["function"]["name"] for tool in request["tools"]]
        assert offered == ["memory"]  # nothing else: no session_search, no provider tools
        session.close()


def test_a_replace_from_a_review_is_staged_not_written(tmp_path: Path, fake_llm: FakeLLM) -> None:
    (tmp_path / "memories").mkdir(parents=True)
    (tmp_path / "memories" / "MEMORY.md").write_text("The build uses make.", encoding="utf-8")
    change = {"action": "replace", "target": "memory", "old_text": "make", "content": "ninja"}
    fake_llm.script(tool_calls(call("memory", change, "c1")), answer("Done."))
    fake_llm.default = answer("Nothing to save.")
    events = Events()
    with make_hermes(tmp_path, config(fake_llm, nudge_interval=2)) as host:
        session = host.session("s1", on_event=events)
        run_turns(session, [{"role": "system", "content": "sys"}], texts(2), with_tools=False)
        events.wait("review_finished")
        action = next(e for e in events.seen if e.kind == "review_action")
        assert action.data["outcome"] == "staged"
        assert (tmp_path / "memories" / "MEMORY.md").read_text() == "The build uses make."
        assert list((tmp_path / "pending" / "memory").glob("*.json"))
        session.close()


def test_a_failing_review_llm_is_an_event_and_nothing_else(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.default = http_error(500)
    events = Events()
    with make_hermes(tmp_path, config(fake_llm, nudge_interval=2)) as host:
        session = host.session("s1", on_event=events)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        run_turns(session, messages, texts(2), with_tools=False)
        assert events.wait("review_failed").data["llm_error"]
        run_turns(session, messages, ["and on"], with_tools=False)  # the host goes on
        assert user_md(tmp_path) == ""
        session.close()


@pytest.mark.parametrize("gate", ["skip_memory", "nudge_off"])
def test_no_review_without_memory_or_with_the_nudge_off(
    tmp_path: Path, fake_llm: FakeLLM, gate: str
) -> None:
    fake_llm.default = answer("Nothing to save.")
    settings = {"nudge_interval": 0 if gate == "nudge_off" else 2, "flush_min_turns": 0}
    with make_hermes(tmp_path, config(fake_llm, **settings)) as host:
        session = host.session("s1", skip_memory=gate == "skip_memory")
        run_turns(session, [{"role": "system", "content": "sys"}], texts(4), with_tools=False)
        session.close()
    assert not fake_llm.requests


def test_close_flushes_one_last_review_after_enough_turns(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fact = {"action": "add", "target": "user", "content": "Wants short answers, no preamble"}
    fact["quote"] = "keep answers short"
    fake_llm.script(tool_calls(call("memory", fact, "c1")), answer("Done."))
    fake_llm.default = answer("Nothing to save.")
    events = Events()
    with make_hermes(tmp_path, config(fake_llm, flush_min_turns=3)) as host:
        session = host.session("s1", on_event=events)
        run_turns(session, [{"role": "system", "content": "sys"}], texts(4), with_tools=False)
        assert not fake_llm.requests  # four turns: under the nudge interval of 10
        session.close()  # but at least flush_min_turns since the last review
    assert "Wants short answers, no preamble" in user_md(tmp_path)
    assert "review_finished" in events.kinds()


def test_review_counts_survive_a_restart(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.default = answer("Nothing to save.")
    events = Events()
    cfg = config(fake_llm, nudge_interval=4, flush_min_turns=0)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
    with make_hermes(tmp_path, cfg) as host:
        session = host.session("s1")
        run_turns(session, messages, texts(3), with_tools=False)
        session.close()
    assert not fake_llm.requests
    with make_hermes(tmp_path, cfg) as host:
        session = host.session("s1", on_event=events)
        run_turns(session, messages, ["the fourth turn"], with_tools=False)
        events.wait("review_finished")
        session.close()


def test_in_a_multi_user_home_a_review_writes_nothing_others_would_see(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    # MEMORY.md and the skills library are shared by every user of the home: a review's
    # unasked writes there wait for a person; bob sees none of alice's
    note = {"action": "add", "target": "memory", "content": "Alice's home address is 12 Elm St."}
    skill = {
        "action": "create",
        "name": "alice-prefs",
        "content": "---\nname: alice-prefs\ndescription: Alice is diabetic.\n---\nBe terse.\n",
    }
    fake_llm.script(
        tool_calls(call("memory", note, "c1"), call("skill_manage", skill, "c2")),
        answer("Done."),
    )
    fake_llm.default = answer("Nothing to save.")
    events = Events()
    cfg = config(fake_llm, nudge_interval=1, flush_min_turns=0)
    cfg["skills"] = {"creation_nudge_interval": 1}  # both due after one turn with a tool
    with make_hermes(tmp_path, cfg) as host:
        alice = host.session("a1", user_id="alice", on_event=events)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        run_turns(alice, messages, texts(1), with_tools=True)
        assert alice.review.runner is not None and alice.review.runner.wait(60)
        alice.close()
        outcomes = [e.data["outcome"] for e in events.seen if e.kind == "review_action"]
        assert outcomes == ["staged", "staged"]
        bob = host.session("b1", user_id="bob")
        prompt = bob.system_prompt("base")
        assert "Elm St" not in prompt and "alice-prefs" not in prompt
        bob.close()
    assert not (tmp_path / "skills" / "alice-prefs").exists()


def test_file_memory_switched_off_skips_the_memory_review_and_the_session_goes_on(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.default = answer("Nothing to save.")
    settings = config(fake_llm, nudge_interval=2, flush_min_turns=0)
    settings["plugins"] = {"disabled": ["file_memory"]}
    events = Events()
    with make_hermes(tmp_path, settings) as host:
        session = host.session("s1", on_event=events)
        run_turns(session, [{"role": "system", "content": "sys"}], texts(4), with_tools=False)
        session.close()
    skipped = [e for e in events.seen if e.kind == "review_skipped"]
    assert skipped and skipped[0].data["reason"] == "no_memory"
    assert not fake_llm.requests
    assert not (tmp_path / "memories").exists()


def test_a_review_proposes_the_offline_consolidation_once(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """Issue 28 item 2: duplicates are proposed for removal as each review begins (staged,
    with provenance), never written, not staged twice, and not again once rejected."""
    (tmp_path / "memories").mkdir(parents=True)
    block = "\n§\n".join(
        [
            "tabs for indentation",
            "Deploys happen on Fridays after review",
            "User prefers tabs for indentation in Python files",
            "deploy happens friday after the review",
        ]
    )
    (tmp_path / "memories" / "MEMORY.md").write_text(block, encoding="utf-8")
    fake_llm.default = answer("Nothing to save.")
    events = Events()
    with make_hermes(tmp_path, config(fake_llm, nudge_interval=2)) as host:
        session = host.session("s1", on_event=events)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        run_turns(session, messages, texts(2), with_tools=False)
        events.wait("review_finished")
        proposed = next(e for e in events.seen if e.kind == "review_consolidation")
        assert proposed.data == {
            "target": "memory",
            "steps": 2,
            "staged": True,
            "already_staged": None,
            "declined": False,
        }
        assert (tmp_path / "memories" / "MEMORY.md").read_text(encoding="utf-8") == block
        [record] = list((tmp_path / "pending" / "memory").glob("*.json"))
        events.seen.clear()
        run_turns(session, messages, texts(2), with_tools=False)
        events.wait("review_finished")
        again = next(e for e in events.seen if e.kind == "review_consolidation")
        assert again.data["already_staged"] == record.stem
        assert len(list((tmp_path / "pending" / "memory").glob("*.json"))) == 1
        assert hc_main(["memory", "reject", record.stem, "--home", str(tmp_path)]) == 0
        events.seen.clear()
        run_turns(session, messages, texts(2), with_tools=False)
        events.wait("review_finished")
        declined = next(e for e in events.seen if e.kind == "review_consolidation")
        assert declined.data["declined"] is True
        assert list((tmp_path / "pending" / "memory").glob("*.json")) == []
        session.close()
