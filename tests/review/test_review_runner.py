"""Background review end to end: a scripted loopback LLM answers with tool calls, a real file
memory in tmp_path takes them (origin background_review), and every outcome is an event."""

from __future__ import annotations

import ast
import json
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeLLM, answer, hang, http_error, raw
from review_support import Memory, call, real_memory, tool_calls

from hermes_core.llm import ChatClient, ChatEndpoint
from hermes_core.memory.tool import MEMORY_TOOL_SCHEMA
from hermes_core.review import (
    NOTHING_TO_SAVE,
    BackgroundReview,
    ReviewCounters,
    review_schema,
)

KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
PREFERENCE = "from now on answer in British English please"
SKILL_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "skill_manage",
        "description": "Manage skills.",
        "parameters": {"type": "object", "properties": {"action": {"type": "string"}}},
    },
}
TERMINAL_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {"name": "terminal", "description": "Run a command.", "parameters": {}},
}


def conversation(turns: int = 10) -> list[dict[str, Any]]:
    """``turns`` user turns; the user states a preference, the assistant suggests another."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for i in range(turns):
        user = f"step {i}: run the tests"
        if i == 2:
            user = f"Thanks. {PREFERENCE}."
        if i == 4:
            user = f"my key is {KEY}"
        messages.append({"role": "user", "content": user})
        reply = "Done." if i != 3 else "You could try dark mode in your editor."
        messages.append({"role": "assistant", "content": reply})
    return messages


class Events:
    """What the review reported, in order, with a way to wait for a kind."""

    def __init__(self) -> None:
        self.items: list[tuple[str, dict[str, Any]]] = []
        self._seen = threading.Condition()

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        with self._seen:
            self.items.append((kind, data))
            self._seen.notify_all()

    @property
    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.items]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [data for k, data in self.items if k == kind]

    def wait_for(self, kind: str, timeout: float = 30.0) -> dict[str, Any]:
        with self._seen:
            assert self._seen.wait_for(lambda: kind in self.kinds, timeout), self.kinds
        return self.of(kind)[-1]


@pytest.fixture
def memory(tmp_path: Path) -> Memory:
    return real_memory(tmp_path / "home")


@pytest.fixture
def events() -> Events:
    return Events()


def reviewer(
    llm: FakeLLM,
    memory: Memory,
    events: Callable[[str, dict[str, Any]], None],
    *,
    timeout: float = 10.0,
    extra: Mapping[str, Callable[[Any], str]] | None = None,
    schemas: list[dict[str, Any]] | None = None,
    **kwargs: Any,
) -> BackgroundReview:
    endpoint = ChatEndpoint(llm.base_url, "aux-model", "", timeout)
    handlers = {"memory": memory.tool.handle, **(extra or {})}
    return BackgroundReview(
        lambda: ChatClient(endpoint, environ={}),
        handlers,
        schemas if schemas is not None else [MEMORY_TOOL_SCHEMA],
        events,
        **kwargs,
    )


def add_user(content: str, quote: str | None, call_id: str = "c1") -> dict[str, Any]:
    args: dict[str, Any] = {"action": "add", "target": "user", "content": content}
    if quote is not None:
        args["quote"] = quote
    return call("memory", args, call_id)


def tool_answer(request_json: Any, call_id: str) -> dict[str, Any]:
    """The result the review sent back to the model for ``call_id``."""
    for message in request_json["messages"]:
        if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
            result: dict[str, Any] = json.loads(message["content"])
            return result
    raise AssertionError(f"no result for {call_id}")


# --- saving and refusing -----------------------------------------------------------------------


def test_a_quoted_user_preference_is_saved(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    fact = "The user wants answers in British English."
    fake_llm.script(tool_calls(add_user(fact, PREFERENCE)), answer("Saved one preference."))
    outcome = reviewer(fake_llm, memory, events).run(conversation(), {"memory"})
    assert outcome is not None
    assert (outcome.done, outcome.refused, outcome.stopped) == (1, 0, "answered")
    assert memory.store.entries("user") == [fact]
    assert events.kinds == ["review_started", "review_action", "review_finished"]
    assert events.of("review_action")[0] == {
        "tool": "memory",
        "action": "add",
        "target": "user",
        "outcome": "done",
        "backing": "quoted user message 5",
    }
    assert tool_answer(fake_llm.requests[1].json, "c1")["success"] is True


def test_the_request_carries_the_prompt_a_redacted_transcript_and_only_review_tools(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    fake_llm.script(answer(NOTHING_TO_SAVE))
    extra = {"terminal": lambda _args: "ran"}
    schemas = [MEMORY_TOOL_SCHEMA, SKILL_SCHEMA, TERMINAL_SCHEMA]
    review = reviewer(fake_llm, memory, events, extra=extra, schemas=schemas)
    outcome = review.run(conversation(), {"memory"})
    assert outcome is not None
    assert outcome.reply == NOTHING_TO_SAVE
    (request,) = fake_llm.requests
    body = request.json
    assert body["tools"] == [review_schema(MEMORY_TOOL_SCHEMA)]
    assert "quote" in body["tools"][0]["function"]["parameters"]["properties"]
    assert "quote" not in MEMORY_TOOL_SCHEMA["function"]["parameters"]["properties"]
    system, user = body["messages"]
    assert NOTHING_TO_SAVE in system["content"] and "quote" in system["content"]
    assert "[USER]" in user["content"] and PREFERENCE in user["content"]
    assert KEY not in request.text
    assert events.of("review_finished")[0]["done"] == 0
    assert memory.pending() == [] and not memory.file("user").exists()


def test_an_unquoted_user_fact_is_staged_and_the_model_is_told_why(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    """Review finding 2: it used to be refused and lost; a person now decides (issue 26: the
    review "stages the rest")."""
    fake_llm.script(tool_calls(add_user("The user wants British English", None)), answer("ok"))
    outcome = reviewer(fake_llm, memory, events).run(conversation(), {"memory"})
    assert outcome is not None and (outcome.refused, outcome.done, outcome.staged) == (0, 0, 1)
    assert not memory.file("user").exists() and events.of("review_refused") == []
    (record,) = memory.pending()
    assert record["target"] == "user" and record["content"] == "The user wants British English"
    assert record["provenance"]["backed_by"] == "none"
    told = tool_answer(fake_llm.requests[1].json, "c1")
    assert "quote" in told["held_because"]


def test_a_quote_only_the_assistant_said_is_staged(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    step = tool_calls(add_user("The user prefers dark mode", "try dark mode in your editor"))
    fake_llm.script(step, answer("ok"))
    outcome = reviewer(fake_llm, memory, events).run(conversation(), {"memory"})
    assert outcome is not None and (outcome.refused, outcome.staged) == (0, 1)
    assert not memory.file("user").exists()
    assert "assistant" in tool_answer(fake_llm.requests[1].json, "c1")["held_because"]


def test_an_agent_note_without_a_quote_is_staged_not_saved(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    """Issue 26: a review's ``target: memory`` add without a user quote used to land at once;
    now it waits for a person, with provenance ``review`` and why it is not backed."""
    note = {"action": "add", "target": "memory", "content": "The tests run with tox."}
    fake_llm.script(tool_calls(call("memory", note)), answer("ok"))
    outcome = reviewer(fake_llm, memory, events).run(conversation(), {"memory"})
    assert outcome is not None and (outcome.done, outcome.staged) == (0, 1)
    assert memory.store.entries("memory") == []
    (record,) = memory.pending()
    assert record["content"] == "The tests run with tox."
    assert record["provenance"]["source"] == "review"
    assert record["provenance"]["backed_by"] == "none"
    assert record["provenance"]["note"].startswith("no user quote backs it")


def test_an_agent_note_the_user_said_lands_with_its_quote(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    note = {"action": "add", "target": "memory", "content": "Answer in British English."}
    note["quote"] = PREFERENCE
    fake_llm.script(tool_calls(call("memory", note)), answer("ok"))
    outcome = reviewer(fake_llm, memory, events).run(conversation(), {"memory"})
    assert outcome is not None and (outcome.done, outcome.staged) == (1, 0)
    assert memory.store.entries("memory") == ["Answer in British English."]
    assert memory.pending() == []


def test_a_batch_for_the_user_is_staged_whole_when_one_operation_lacks_a_quote(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    ops = [
        {"action": "add", "content": "Wants British English", "quote": PREFERENCE},
        {"action": "add", "content": "The user likes Rust"},
    ]
    step = tool_calls(call("memory", {"target": "user", "operations": ops}))
    fake_llm.script(step, answer("ok"))
    outcome = reviewer(fake_llm, memory, events).run(conversation(), {"memory"})
    assert outcome is not None and (outcome.refused, outcome.staged) == (0, 1)
    assert not memory.file("user").exists()
    assert "operation 1" in tool_answer(fake_llm.requests[1].json, "c1")["held_because"]


def test_a_quoted_batch_is_staged_without_its_quotes(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    """A batch is more than an add, so a review's batch is a proposal (20-memory §6)."""
    ops = [{"action": "add", "content": "Wants British English", "quote": PREFERENCE}]
    fake_llm.script(tool_calls(call("memory", {"target": "user", "operations": ops})), answer("ok"))
    outcome = reviewer(fake_llm, memory, events).run(conversation(), {"memory"})
    assert outcome is not None and outcome.staged == 1
    (record,) = memory.pending()
    assert record["action"] == "batch"
    assert [op["content"] for op in record["operations"]] == ["Wants British English"]
    assert all("quote" not in op for op in record["operations"])
    assert events.of("review_action")[0]["action"] == "batch"


def test_a_replace_is_staged_and_the_file_is_unchanged(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    memory.store.add("user", "The user wants American English.")
    before = memory.file("user").read_bytes()
    replace = {
        "action": "replace",
        "target": "user",
        "old_text": "American English",
        "content": "The user wants British English.",
        "quote": PREFERENCE,
    }
    fake_llm.script(tool_calls(call("memory", replace)), answer("Proposed a change."))
    outcome = reviewer(fake_llm, memory, events).run(conversation(), {"memory"})
    assert outcome is not None and (outcome.staged, outcome.done) == (1, 0)
    assert memory.file("user").read_bytes() == before
    (record,) = memory.pending()
    assert record["origin"] == "background_review"
    assert record["action"] == "replace"
    assert record["selected"] == "The user wants American English."
    assert record["content"] == "The user wants British English."
    (action,) = events.of("review_action")
    assert action["outcome"] == "staged" and action["pending_id"] == record["id"]


def test_a_remove_is_staged_without_a_quote(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    memory.store.add("memory", "Old note about CI.")
    remove = {"action": "remove", "target": "memory", "old_text": "Old note"}
    fake_llm.script(tool_calls(call("memory", remove)), answer("ok"))
    outcome = reviewer(fake_llm, memory, events).run(conversation(), {"memory"})
    assert outcome is not None and outcome.staged == 1
    assert memory.store.entries("memory") == ["Old note about CI."]
    assert memory.pending()[0]["action"] == "remove"


@pytest.mark.parametrize("name", ["terminal", "session_search", "memory_v2"])
def test_a_forbidden_tool_is_refused_and_never_run(
    fake_llm: FakeLLM, memory: Memory, events: Events, tmp_path: Path, name: str
) -> None:
    marker = tmp_path / "ran"

    def handler(_arguments: Any) -> str:
        marker.write_text("it ran")
        return "{}"

    fake_llm.script(tool_calls(call(name, {"command": "rm -rf /"}, "c1")), answer("ok"))
    review = reviewer(
        fake_llm,
        memory,
        events,
        extra={name: handler},
        schemas=[MEMORY_TOOL_SCHEMA, {**TERMINAL_SCHEMA, "function": {"name": name}}],
    )
    outcome = review.run(conversation(), {"memory"})
    assert outcome is not None and outcome.refused == 1
    assert not marker.exists()
    assert [s["function"]["name"] for s in fake_llm.requests[0].json["tools"]] == ["memory"]
    (refused,) = events.of("review_refused")
    assert refused["rule"] == "forbidden" and refused["tool"] == name
    assert "not available" in tool_answer(fake_llm.requests[1].json, "c1")["error"]
    assert events.of("review_action") == []
    assert memory.pending() == [] and not memory.file("user").exists()


def test_skill_manage_runs_only_in_a_skill_review(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    seen: list[Any] = []

    def skill_manage(arguments: Any) -> str:
        seen.append(arguments)
        return json.dumps({"success": True, "skills": []})

    kwargs: dict[str, Any] = {
        "extra": {"skill_manage": skill_manage},
        "schemas": [MEMORY_TOOL_SCHEMA, SKILL_SCHEMA],
    }
    fake_llm.script(tool_calls(call("skill_manage", {"action": "list"})), answer("ok"))
    reviewer(fake_llm, memory, events, **kwargs).run(conversation(), {"memory"})
    assert seen == []
    assert events.of("review_refused")[0]["rule"] == "not_offered"

    fake_llm.script(tool_calls(call("skill_manage", {"action": "list"})), answer("ok"))
    outcome = reviewer(fake_llm, memory, events, **kwargs).run(conversation(), {"skill"})
    assert outcome is not None and outcome.done == 1
    assert seen == [{"action": "list"}]
    assert [s["function"]["name"] for s in fake_llm.requests[2].json["tools"]] == ["skill_manage"]
    assert "skill_manage" in fake_llm.requests[2].json["messages"][0]["content"]


def test_a_skill_review_without_skill_manage_is_skipped(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    assert reviewer(fake_llm, memory, events).run(conversation(), {"skill"}) is None
    assert events.items == [("review_skipped", {"kinds": ["skill"], "reason": "no_tools"})]
    assert fake_llm.requests == []


def test_bad_arguments_and_a_broken_tool_fail_the_call_not_the_review(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    def broken(_arguments: Any) -> str:
        raise OSError("disk on fire")

    step = tool_calls(
        call("memory", "{not json", "c1"),
        call("skill_manage", {"action": "list"}, "c2"),
    )
    fake_llm.script(step, answer("ok"))
    review = reviewer(
        fake_llm,
        memory,
        events,
        extra={"skill_manage": broken},
        schemas=[MEMORY_TOOL_SCHEMA, SKILL_SCHEMA],
    )
    outcome = review.run(conversation(), {"memory", "skill"})
    assert outcome is not None and (outcome.refused, outcome.failed) == (1, 1)
    assert events.of("review_refused")[0]["rule"] == "bad_arguments"
    assert "OSError" in tool_answer(fake_llm.requests[1].json, "c2")["error"]
    assert events.kinds[-1] == "review_finished"


def test_max_rounds_bounds_the_conversation(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    note = {"action": "add", "target": "memory", "content": "A note."}
    fake_llm.default = tool_calls(call("memory", note))
    outcome = reviewer(fake_llm, memory, events, max_rounds=2).run(conversation(), {"memory"})
    assert outcome is not None and outcome.stopped == "max_rounds"
    assert len(fake_llm.requests) == 2


def test_an_empty_answer_after_work_ends_the_review(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    note = {"action": "add", "target": "memory", "content": "A note."}
    fake_llm.script(tool_calls(call("memory", note)), answer(""))
    outcome = reviewer(fake_llm, memory, events).run(conversation(), {"memory"})
    assert outcome is not None and outcome.staged == 1
    assert events.kinds[-1] == "review_finished"


def test_the_context_callback_shows_what_is_kept(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    memory.store.add("memory", "The tests run with tox.")
    fake_llm.script(answer(NOTHING_TO_SAVE))
    review = reviewer(fake_llm, memory, events, context=memory.store.snapshot)
    review.run(conversation(), {"memory"})
    assert "The tests run with tox." in fake_llm.requests[0].json["messages"][1]["content"]


def test_before_each_lets_the_memory_tool_count_failures_per_review(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    """Three failed consolidations make the memory tool give up; a new review starts afresh."""
    miss = {"action": "remove", "target": "memory", "old_text": "no such entry"}
    fake_llm.script(
        tool_calls(*(call("memory", miss, f"m{i}") for i in range(3))),
        answer("ok"),
        tool_calls(call("memory", miss, "again")),
        answer("ok"),
    )
    review = reviewer(fake_llm, memory, events, before_each=memory.tool.new_turn)
    review.run(conversation(), {"memory"})
    review.run(conversation(), {"memory"})
    again = tool_answer(fake_llm.requests[3].json, "again")
    assert "done" not in again and "no_match" in json.dumps(again)


def test_a_listener_that_raises_breaks_nothing(fake_llm: FakeLLM, memory: Memory) -> None:
    def angry(kind: str, data: dict[str, Any]) -> None:
        raise RuntimeError("listener down")

    fake_llm.script(tool_calls(add_user("Wants British English", PREFERENCE)), answer("ok"))
    outcome = reviewer(fake_llm, memory, angry).run(conversation(), {"memory"})
    assert outcome is not None and outcome.done == 1


# --- failures are events -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "kind"),
    [
        (http_error(500, f"boom {KEY}"), "server"),
        (raw("{not json"), "malformed"),
        (hang(30.0), "timeout"),
    ],
    ids=["http-500", "malformed-json", "hang"],
)
def test_a_failing_llm_gives_an_event_and_nothing_else(
    fake_llm: FakeLLM, memory: Memory, events: Events, step: Any, kind: str
) -> None:
    fake_llm.script(step)
    review = reviewer(fake_llm, memory, events, timeout=0.3)
    assert review.run(conversation(), {"memory"}) is None
    assert events.kinds == ["review_started", "review_failed"]
    failed = events.of("review_failed")[0]
    assert failed["llm_error"] == kind and failed["kinds"] == ["memory"]
    assert KEY not in json.dumps(events.items)
    assert not memory.file("user").exists() and not memory.file("memory").exists()
    assert not memory.pending_dir.exists()


def test_a_client_factory_that_raises_is_an_event(memory: Memory, events: Events) -> None:
    def factory() -> ChatClient:
        raise ValueError("ChatEndpoint.base_url is empty")

    review = BackgroundReview(factory, {"memory": memory.tool.handle}, [MEMORY_TOOL_SCHEMA], events)
    assert review.run(conversation(), {"memory"}) is None
    assert events.of("review_failed")[0]["error"] == "ValueError"


def test_unknown_kinds_are_an_event_not_an_exception(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    review = reviewer(fake_llm, memory, events)
    assert review.start(conversation(), {"everything"}) is None
    assert review.run(conversation(), "memory") is None
    assert events.kinds == ["review_failed", "review_failed"]
    assert fake_llm.requests == []


# --- threads, one at a time, close -------------------------------------------------------------


def test_start_runs_on_a_daemon_thread_on_a_copy(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    snapshot = conversation()
    late = add_user("The user loves COBOL", "I love COBOL dearly")
    fake_llm.script(tool_calls(late), answer("x"))
    thread = reviewer(fake_llm, memory, events).start(snapshot, {"memory"})
    snapshot.append({"role": "user", "content": "I love COBOL dearly"})  # after the snapshot
    assert thread is not None and thread.daemon
    thread.join(30)
    assert events.kinds[-1] == "review_finished"
    assert [a["outcome"] for a in events.of("review_action")] == ["staged"]
    assert not memory.file("user").exists()


def test_a_second_start_while_one_runs_is_skipped(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    fake_llm.script(hang(60.0))
    review = reviewer(fake_llm, memory, events, timeout=120.0)
    first = review.start(conversation(), {"memory"})
    assert first is not None
    events.wait_for("review_started")
    assert review.start(conversation(), {"memory"}) is None
    assert events.of("review_skipped") == [{"kinds": ["memory"], "reason": "busy"}]
    fake_llm.close()  # the hanging answer never comes: the review fails, as an event
    events.wait_for("review_failed")
    first.join(30)
    assert not review.running


def test_final_returns_within_its_bound_while_the_llm_hangs(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    fake_llm.script(hang(60.0))
    review = reviewer(fake_llm, memory, events, timeout=120.0)
    assert review.final(conversation(), timeout=0.3) is False
    assert review.running  # still waiting on the fake: final did not wait for it
    assert len(fake_llm.requests) == 1
    assert events.of("review_abandoned")[0]["timeout"] == 0.3
    assert review.start(conversation(), {"memory"}) is None  # closed: nothing new starts
    assert events.of("review_skipped")[-1]["reason"] == "stopped"
    fake_llm.close()
    events.wait_for("review_failed")


def test_final_runs_one_review_and_waits_for_a_running_one(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    fact = "Wants British English"
    fake_llm.script(answer(NOTHING_TO_SAVE), tool_calls(add_user(fact, PREFERENCE)), answer("ok"))
    review = reviewer(fake_llm, memory, events)
    assert review.start(conversation(), {"memory"}) is not None
    assert review.final(conversation(), timeout=30.0) is True
    assert events.kinds.count("review_started") == 2
    assert events.kinds.count("review_finished") == 2
    assert memory.store.entries("user") == [fact]


def test_final_reports_a_failed_review_and_never_raises(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    fake_llm.script(http_error(503))
    review = reviewer(fake_llm, memory, events)
    assert review.final(conversation(), timeout=30.0) is False
    assert events.kinds == ["review_started", "review_failed"]
    assert review.final("not a list", timeout="soon") is False  # type: ignore[arg-type]


def test_stop_prevents_the_tool_calls_still_queued(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    first = {"action": "add", "target": "memory", "content": "First note."}
    second = {"action": "add", "target": "memory", "content": "Second note."}
    fake_llm.script(tool_calls(call("memory", first, "c1"), call("memory", second, "c2")))
    holder: list[BackgroundReview] = []

    def memory_then_stop(arguments: Any) -> str:
        result = memory.tool.handle(arguments)
        holder[0].stop()  # as close() does when its bound runs out
        return result

    review = reviewer(fake_llm, memory, events, extra={"memory": memory_then_stop})
    holder.append(review)
    outcome = review.run(conversation(), {"memory"})
    assert outcome is not None and outcome.stopped == "cancelled"
    assert [r["content"] for r in memory.pending()] == ["First note."]  # staged, not saved
    assert len(fake_llm.requests) == 1


# --- the "done when", with the counters -------------------------------------------------


def test_after_ten_turns_a_quoted_preference_is_saved_and_an_unquoted_one_staged(
    fake_llm: FakeLLM, memory: Memory, events: Events
) -> None:
    counters = ReviewCounters()
    messages = conversation(10)
    for _ in range(9):
        counters.on_user_turn()
    assert counters.due() == set()
    counters.on_user_turn()
    due = counters.due()
    assert due == {"memory"}
    quoted = add_user("The user wants answers in British English.", PREFERENCE, "c1")
    unquoted = add_user("The user prefers dark mode.", None, "c2")
    fake_llm.script(tool_calls(quoted, unquoted), answer("Saved one."))
    thread = reviewer(fake_llm, memory, events).start(messages, due)
    assert thread is not None
    for kind in due:
        counters.reset(kind)
    thread.join(30)
    assert memory.store.entries("user") == ["The user wants answers in British English."]
    assert [r["content"] for r in memory.pending()] == ["The user prefers dark mode."]
    assert counters.due() == set()


# --- what the package may touch ----------------------------------------------------------------


def test_review_imports_no_provider_store_compressor_or_host() -> None:
    """It gets its tools as handlers; it has no way to reach anything else."""
    package = Path(__file__).resolve().parents[2] / "hermes_core" / "review"
    allowed = {
        "hermes_core.compression.serialize",  # text formatting only
        "hermes_core.config.settings",
        "hermes_core.llm",
        "hermes_core.memory.calls",  # deep redaction
        "hermes_core.memory.recall",  # the recall fence's key
        "hermes_core.provenance",  # the write context each review call runs under
        "hermes_core.provenance.marks",  # the marks a fact must share with the user's words
        "hermes_core.redact",
        "hermes_core.threats.unicode",
        "hermes_core.transcript.messages",
        "hermes_core.transcript.appended",  # the split of what the user typed
    }
    found: set[str] = set()
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
    ours = {m for m in found if m.startswith("hermes_core.")}
    ours = {m for m in ours if not m.startswith("hermes_core.review")}
    assert ours <= allowed, ours - allowed
