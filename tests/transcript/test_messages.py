"""Tests for hermes_core.transcript.messages: validation, wire copies, turn groups, helpers."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.transcript.messages import (
    KNOWN_ROLES,
    TurnGroup,
    is_real_user_message,
    message_text,
    to_wire,
    tool_call_ids,
    tool_name_for_results,
    turn_groups,
    validate_messages,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "transcripts"
SAMPLES = sorted(DATA.glob("*.json"))

Msg = dict[str, Any]


def call(cid: str, name: str = "read_file", arguments: Any = "{}") -> Msg:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant(*ids: str, content: Any = None) -> Msg:
    msg: Msg = {"role": "assistant", "content": content}
    if ids:
        msg["tool_calls"] = [call(cid) for cid in ids]
    return msg


def result(cid: str, content: Any = "ok") -> Msg:
    return {"role": "tool", "tool_call_id": cid, "content": content}


def user(content: Any = "hi") -> Msg:
    return {"role": "user", "content": content}


SYSTEM: Msg = {"role": "system", "content": "You are helpful."}


def only(problems: list[str], prefix: str, fragment: str) -> None:
    """Exactly one problem, at the given place, saying the given thing."""
    assert len(problems) == 1, problems
    assert problems[0].startswith(prefix), problems
    assert fragment in problems[0], problems


# ---------------------------------------------------------------- valid transcripts


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_sample_transcripts_validate_clean(path: Path) -> None:
    messages = json.loads(path.read_text(encoding="utf-8"))
    assert validate_messages(messages) == []
    groups = turn_groups(messages)
    assert not any(group.pending for group in groups)
    assert sum(len(group) for group in groups) == len(messages)


@pytest.mark.parametrize(
    "order", [("a", "b", "c"), ("c", "a", "b"), ("b", "c", "a"), ("c", "b", "a")]
)
def test_parallel_results_in_any_order(order: tuple[str, ...]) -> None:
    messages = [
        SYSTEM,
        user(),
        assistant("a", "b", "c"),
        *map(result, order),
        assistant(content="done"),
    ]
    assert validate_messages(messages) == []


def test_valid_shapes_accepted() -> None:
    messages = [
        SYSTEM,
        {"role": "developer", "content": [{"type": "text", "text": "be brief"}]},
        user(
            [
                {"type": "text", "text": "look"},
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64,AA", "detail": "low"},
                },
                {"type": "input_audio", "input_audio": {"data": "AA", "format": "wav"}},
                {"type": "file", "file": {"file_id": "f1"}},
            ]
        ),
        assistant("a", content=""),
        result("a", [{"type": "text", "text": "part"}]),
        {"role": "system", "content": "a system message mid-transcript is fine"},
        {"role": "assistant", "content": "<think>hmm</think> answer", "tool_calls": None},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}]},
        {"role": "assistant", "content": None, "refusal": "I can't help with that"},
        {"role": "user", "content": "", "_compressed_summary": True},
    ]
    assert validate_messages(messages) == []
    assert validate_messages(tuple(messages)) == []


# ---------------------------------------------------------------- whole-transcript rules


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (None, "got null"),
        ("[]", "got a string"),
        ({"messages": []}, "got an object"),
        (3, "got a number"),
        ([], "no messages"),
    ],
)
def test_transcript_level_problems(value: object, fragment: str) -> None:
    only(validate_messages(value), "transcript: ", fragment)


# ---------------------------------------------------------------- tool pairing rules


def test_call_without_result() -> None:
    problems = validate_messages([user(), assistant("a", "b"), result("a"), user("next")])
    only(problems, "message 1: ", 'tool call "b" (read_file) has no result before message 3')


def test_call_without_result_at_end_is_reported_by_default() -> None:
    messages = [user(), assistant("a", "b"), result("a")]
    only(validate_messages(messages), "message 1: ", 'tool call "b"')


def test_pending_calls_at_end_allowed_when_asked() -> None:
    assert validate_messages([user(), assistant("a")], allow_pending_tool_calls=True) == []
    partial = [user(), assistant("a", "b"), result("b")]
    assert validate_messages(partial, allow_pending_tool_calls=True) == []
    # Only the trailing turn may be pending.
    earlier = [user(), assistant("a"), user("again"), assistant("b")]
    only(validate_messages(earlier, allow_pending_tool_calls=True), "message 1: ", '"a"')


def test_call_answered_twice_in_its_block() -> None:
    problems = validate_messages([user(), assistant("a"), result("a"), result("a")])
    only(problems, "message 3: ", "answered twice (also by message 2)")


def test_call_answered_again_after_the_block() -> None:
    messages = [user(), assistant("a"), result("a"), user("more"), result("a")]
    only(validate_messages(messages), "message 4: ", "already answered by message 2")


def test_result_answering_no_call() -> None:
    problems = validate_messages([user(), assistant("a"), result("a"), result("zzz")])
    only(problems, "message 3: ", 'tool_call_id "zzz" answers no earlier tool call')


def test_result_before_any_assistant() -> None:
    only(validate_messages([user(), result("a")]), "message 1: ", "answers no earlier tool call")


def test_result_before_its_call() -> None:
    messages = [user(), result("a"), assistant("a"), result("a")]
    only(validate_messages(messages), "message 1: ", "answers a call made later, in message 2")


def test_result_after_an_intervening_user_message() -> None:
    messages = [user(), assistant("a", "b"), result("a"), user("wait"), result("b")]
    problems = validate_messages(messages)
    assert problems == [
        'message 1: tool call "b" (read_file) has no result before message 3; add a tool '
        "message with this tool_call_id before it, or remove the call",
        'message 4: tool_call_id "b" answers a call in message 1, but message 3 (user) comes '
        "between them; results must directly follow their assistant message",
    ]


def test_result_after_an_intervening_assistant_message() -> None:
    messages = [user(), assistant("a"), assistant(content="thinking"), result("a")]
    problems = validate_messages(messages)
    assert len(problems) == 2
    assert problems[1].startswith("message 3: ")
    assert "message 2 (assistant) comes between them" in problems[1]


def test_intervening_system_message_also_ends_the_block() -> None:
    messages = [user(), assistant("a"), SYSTEM, result("a")]
    assert len(validate_messages(messages)) == 2


def test_result_for_earlier_turn_answered_in_a_later_block() -> None:
    messages = [user(), assistant("a"), user(), assistant("b"), result("b"), result("a")]
    problems = validate_messages(messages)
    assert any(p.startswith("message 5: ") and "message 2 (user)" in p for p in problems)


def test_duplicate_id_within_one_message() -> None:
    problems = validate_messages([user(), assistant("a", "a"), result("a")])
    only(problems, "message 1: ", 'tool_calls[1] repeats id "a" of tool_calls[0]')


def test_duplicate_id_across_transcript() -> None:
    messages = [user(), assistant("a"), result("a"), user(), assistant("a"), result("a")]
    only(validate_messages(messages), "message 4: ", "already used by message 1")


@pytest.mark.parametrize(
    ("tool_msg", "fragment"),
    [
        ({"role": "tool", "content": "x"}, "has no tool_call_id"),
        ({"role": "tool", "tool_call_id": "", "content": "x"}, "non-empty string, got a string"),
        ({"role": "tool", "tool_call_id": 7, "content": "x"}, "non-empty string, got a number"),
        ({"role": "tool", "tool_call_id": None, "content": "x"}, "got null"),
    ],
)
def test_bad_tool_call_id(tool_msg: Msg, fragment: str) -> None:
    problems = validate_messages([user(), assistant("a"), result("a"), tool_msg])
    only(problems, "message 3: ", fragment)


# ---------------------------------------------------------------- tool call shapes


def with_calls(calls: Any) -> list[Msg]:
    return [user(), {"role": "assistant", "content": None, "tool_calls": calls}, result("a")]


@pytest.mark.parametrize(
    ("calls", "fragment"),
    [
        ({"id": "a"}, "tool_calls must be a list, got an object"),
        ("a", "tool_calls must be a list, got a string"),
        ([], "tool_calls is an empty list"),
        ([call("a"), "b"], "tool_calls[1] must be an object with id, type and function"),
        (
            [call("a"), {"type": "function", "function": {"name": "f", "arguments": "{}"}}],
            'tool_calls[1] has no "id"',
        ),
        ([call("a"), {**call("x"), "id": 5}], "tool_calls[1].id must be a non-empty string"),
        ([{**call("a"), "type": "tool"}], 'tool_calls[0].type must be "function" (got "tool")'),
        ([{k: v for k, v in call("a").items() if k != "type"}], "(it is missing)"),
        ([{"id": "a", "type": "function"}], 'tool_calls[0] has no "function" object'),
        ([{"id": "a", "type": "function", "function": "f"}], 'has no "function" object'),
        (
            [{"id": "a", "type": "function", "function": {"arguments": "{}"}}],
            "tool_calls[0].function.name must be a non-empty string",
        ),
        (
            [{"id": "a", "type": "function", "function": {"name": "f"}}],
            "function.arguments is missing",
        ),
        ([call("a", arguments={"x": 1})], "arguments must be a JSON string, got an object"),
        ([call("a", arguments=None)], "arguments must be a JSON string, got null"),
        ([call("a", arguments="{x}")], "arguments is not valid JSON"),
        ([call("a", arguments="")], "arguments is not valid JSON"),
        ([call("a", arguments="[1, 2]")], "arguments must be a JSON object, got a list"),
        ([call("a", arguments='"text"')], "arguments must be a JSON object, got a string"),
        ([call("a", arguments="[" * 100_000)], "arguments is not valid JSON"),
    ],
)
def test_bad_tool_call_shapes(calls: Any, fragment: str) -> None:
    problems = validate_messages(with_calls(calls))
    shape = [p for p in problems if fragment in p]
    assert shape, problems
    assert all(p.startswith("message 1: ") for p in shape)


def test_good_arguments_accepted() -> None:
    calls = [call("a", arguments='{"path": "a.py", "nested": {"k": [1, 2]}}')]
    assert validate_messages(with_calls(calls)) == []


def test_calls_with_bad_shape_still_pair_by_id() -> None:
    """A malformed call with a usable id is still paired, so its result is no orphan."""
    problems = validate_messages(with_calls([{"id": "a", "type": "function"}]))
    assert len(problems) == 1


# ---------------------------------------------------------------- roles and messages


def test_unknown_role_names_the_known_roles() -> None:
    only(validate_messages([user(), {"role": "bot", "content": "x"}]), "message 1: ", "bot")
    problem = validate_messages([{"role": "bot", "content": "x"}])[0]
    assert all(role in problem for role in KNOWN_ROLES)


def test_missing_role() -> None:
    only(validate_messages([{"content": "x"}]), "message 0: ", 'has no "role"; use one of system')


def test_role_not_a_string() -> None:
    only(validate_messages([{"role": ["user"]}]), "message 0: ", '"role" must be a string')


@pytest.mark.parametrize("value", ["user", 3, None, ["role", "user"]])
def test_message_not_an_object(value: object) -> None:
    only(validate_messages([user(), value]), "message 1: ", "expected a message object")


def test_user_message_with_none_or_missing_content_is_valid() -> None:
    # spec 10: content is a string, None or a list of parts, for every role
    assert validate_messages([user(None)]) == []
    assert validate_messages([{"role": "user"}]) == []


def test_system_message_with_none_or_missing_content_is_valid() -> None:
    assert validate_messages([{"role": "system"}, user()]) == []
    assert validate_messages([{"role": "system", "content": None}, user()]) == []


def test_assistant_without_content_or_calls() -> None:
    only(validate_messages([user(), assistant()]), "message 1: ", "neither content nor tool_calls")


def test_tool_message_with_null_content_is_valid() -> None:
    assert validate_messages([user(), assistant("a"), result("a", None)]) == []


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (5, "content must be a string or a list of content parts, got a number"),
        ({"type": "text", "text": "x"}, "got an object"),
        (["plain"], "content[0] must be an object"),
        ([{"text": "x"}], 'content[0] has no "type"'),
        ([{"type": 3, "text": "x"}], 'content[0] has a "type" that is a number'),
        ([{"type": "text"}], 'content[0] is a text part without a string "text"'),
        ([{"type": "text", "text": None}], "without a string"),
        ([{"type": "image_url"}], "content[0] is an image_url part without"),
        ([{"type": "image_url", "image_url": {}}], "image_url part without"),
        ([{"type": "image_url", "image_url": {"url": ""}}], "image_url part without"),
        ([{"type": "image_url", "image_url": "http://x"}], "image_url part without"),
        ([{"type": "input_audio"}], 'input_audio part without an "input_audio" object'),
        ([{"type": "file", "file": "id"}], 'file part without an "file" object'),
        ([{"type": "refusal"}], 'refusal part without a string "refusal"'),
    ],
)
def test_bad_content_shapes(content: Any, fragment: str) -> None:
    only(validate_messages([SYSTEM, user(content)]), "message 1: ", fragment)


def test_every_bad_part_is_reported() -> None:
    problems = validate_messages([user([{"type": "text", "text": "ok"}, 1, {"type": "text"}])])
    assert [p.split(":")[1].strip().split()[0] for p in problems] == ["content[1]", "content[2]"]


def test_problems_are_ordered_by_message_and_single_line() -> None:
    messages = [
        user(None),
        assistant("a", "b"),
        result("a"),
        {"role": "x"},
        result("q", 5),
        user("long\nid"),
        {"role": "tool", "tool_call_id": "line\nbreak" * 50, "content": ""},
    ]
    problems = validate_messages(messages)
    indexes = [int(p.split(":")[0].split()[1]) for p in problems]
    assert indexes == sorted(indexes)
    assert all("\n" not in p for p in problems)
    assert max(len(p) for p in problems) < 400


# ---------------------------------------------------------------- hypothesis: never raises

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=30,
)
KEYS = st.sampled_from(
    [
        "role",
        "content",
        "tool_calls",
        "tool_call_id",
        "id",
        "type",
        "function",
        "name",
        "arguments",
        "text",
        "image_url",
        "url",
        "refusal",
        "_compressed_summary",
    ]
)
WORDS = st.sampled_from(
    [*KNOWN_ROLES, "function", "text", "image_url", "a", "b", "", "{}", "[]", "{", '{"x": 1}']
)
MESSAGE_LIKE = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | WORDS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=40,
)


def check_never_raises(value: object) -> None:
    problems = validate_messages(value)
    assert isinstance(problems, list)
    for problem in problems:
        assert isinstance(problem, str)
        assert problem.startswith(("message ", "transcript: "))
        assert "\n" not in problem
    if isinstance(value, list):
        validate_messages(value, allow_pending_tool_calls=True)
        groups = turn_groups(value)
        assert_partition(groups, len(value))
        for msg in value:
            is_real_user_message(msg)
            message_text(msg)
            tool_call_ids(msg)
        tool_name_for_results(value)
        dicts = [m for m in value if isinstance(m, dict)]
        assert len(to_wire(dicts)) == len(dicts)


@settings(max_examples=150)
@given(JSON)
def test_validate_never_raises_on_arbitrary_json(value: object) -> None:
    check_never_raises(value)


@settings(max_examples=100)
@given(st.lists(MESSAGE_LIKE, max_size=8))
def test_validate_never_raises_on_message_like_json(value: list[object]) -> None:
    check_never_raises(value)


# ---------------------------------------------------------------- hypothesis: pairing oracle


@st.composite
def transcripts(draw: st.DrawFn) -> list[Msg]:
    """A well-formed transcript: user turns, assistant steps with 0-4 parallel calls."""
    messages: list[Msg] = [SYSTEM] if draw(st.booleans()) else []
    counter = 0
    for _ in range(draw(st.integers(1, 4))):
        messages.append(user(draw(st.sampled_from(["hi", "ünïcode ✓", "", "fix it"]))))
        for _ in range(draw(st.integers(0, 3))):
            count = draw(st.integers(0, 4))
            ids = [f"call_{counter + k}" for k in range(count)]
            counter += count
            if not ids:
                messages.append(assistant(content="<think>plan</think>done"))
                continue
            messages.append(
                assistant(*ids, content=draw(st.sampled_from([None, "", "let me look"])))
            )
            messages.extend(result(cid) for cid in draw(st.permutations(ids)))
    return messages


def pairing_ok(messages: list[Msg], allow_pending: bool = False) -> bool:
    """Oracle: each assistant's contiguous tool run holds each of its call ids exactly once,
    and every tool message belongs to such a run."""
    n = len(messages)
    covered = [False] * n
    for i, msg in enumerate(messages):
        if msg["role"] != "assistant":
            continue
        j = i + 1
        while j < n and messages[j]["role"] == "tool":
            covered[j] = True
            j += 1
        calls = Counter(c["id"] for c in msg.get("tool_calls") or [])
        answers = Counter(m["tool_call_id"] for m in messages[i + 1 : j])
        if allow_pending and j == n:
            if answers - calls or any(count > 1 for count in answers.values()):
                return False
        elif answers != calls:
            return False
    return all(covered[i] for i, msg in enumerate(messages) if msg["role"] == "tool")


@st.composite
def mutated_transcripts(draw: st.DrawFn) -> list[Msg]:
    messages = draw(transcripts())
    for _ in range(draw(st.integers(0, 3))):
        tools = [i for i, m in enumerate(messages) if m["role"] == "tool"]
        if not tools:
            break
        victim = draw(st.sampled_from(tools))
        action = draw(st.sampled_from(["drop", "duplicate", "move"]))
        if action == "drop":
            del messages[victim]
        elif action == "duplicate":
            messages.insert(draw(st.integers(0, len(messages))), dict(messages[victim]))
        else:
            moved = messages.pop(victim)
            messages.insert(draw(st.integers(0, len(messages))), moved)
    if draw(st.booleans()):  # sometimes end with an in-flight assistant turn
        messages.append(assistant("call_pending_1", "call_pending_2"))
        messages.extend(result(c) for c in draw(st.sampled_from([[], ["call_pending_2"]])))
    return messages


@settings(max_examples=200)
@given(mutated_transcripts())
def test_problems_reported_exactly_when_pairing_broken(messages: list[Msg]) -> None:
    assert bool(validate_messages(messages)) is not pairing_ok(messages)
    pending = validate_messages(messages, allow_pending_tool_calls=True)
    assert bool(pending) is not pairing_ok(messages, allow_pending=True)


@settings(max_examples=100)
@given(transcripts())
def test_well_formed_transcripts_are_valid(messages: list[Msg]) -> None:
    assert validate_messages(messages) == []


# ---------------------------------------------------------------- turn groups


def assert_partition(groups: list[TurnGroup], n: int) -> None:
    position = 0
    for group in groups:
        assert group.start == position
        assert group.end > group.start
        position = group.end
    assert position == n


@settings(max_examples=150)
@given(mutated_transcripts())
def test_turn_groups_partition_and_keep_results_with_their_call(messages: list[Msg]) -> None:
    groups = turn_groups(messages)
    assert_partition(groups, len(messages))
    group_of = {i: g for g in groups for i in range(g.start, g.end)}
    for g in groups:
        first_role = messages[g.start]["role"]
        expected = {"system": "system", "user": "user", "assistant": "assistant"}
        assert g.kind == expected.get(first_role, "tool_orphan")
        assert all(m["role"] == "tool" for m in messages[g.start + 1 : g.end])
        assert g.pending == (g is groups[-1] and g.pending)
    for i, msg in enumerate(messages):
        if msg["role"] != "assistant":
            continue
        calls = set(tool_call_ids(msg))
        j = i + 1
        while j < len(messages) and messages[j]["role"] == "tool":
            if messages[j]["tool_call_id"] in calls:
                assert group_of[j] is group_of[i]
            j += 1


def test_turn_groups_kinds_and_pending() -> None:
    messages = [
        SYSTEM,
        user(),
        assistant("a", "b"),
        result("b"),
        result("stray"),
        result("a"),
        result("orphan"),
        {"role": "developer", "content": "d"},
        result("orphan2"),
        result("orphan3"),
        {"role": "alien"},
        assistant(content="ok"),
        user(),
        assistant("c", "d"),
        result("c"),
    ]
    assert turn_groups(messages) == [
        TurnGroup(0, 1, "system"),
        TurnGroup(1, 2, "user"),
        TurnGroup(2, 6, "assistant"),
        TurnGroup(6, 7, "tool_orphan"),
        TurnGroup(7, 8, "system"),
        TurnGroup(8, 10, "tool_orphan"),
        TurnGroup(10, 11, "other"),
        TurnGroup(11, 12, "assistant"),
        TurnGroup(12, 13, "user"),
        TurnGroup(13, 15, "assistant", pending=True),
    ]
    assert turn_groups([]) == []
    assert turn_groups([user(), assistant("x")])[-1].pending
    assert not turn_groups([user(), assistant("x"), result("x")])[-1].pending
    assert len(TurnGroup(2, 6, "assistant")) == 4


def test_turn_group_is_frozen() -> None:
    group = TurnGroup(0, 1, "user")
    with pytest.raises(AttributeError):
        group.start = 3  # type: ignore[misc]


# ---------------------------------------------------------------- to_wire


def test_to_wire_strips_private_keys_without_mutating() -> None:
    messages = [
        {"role": "system", "content": "s", "_note": 1},
        {
            "role": "user",
            "content": [{"type": "text", "text": "x", "_keep": 1}],
            "_compressed_summary": True,
        },
        assistant("a"),
    ]
    before = copy.deepcopy(messages)
    wire = to_wire(messages)
    assert messages == before
    assert wire == [
        {"role": "system", "content": "s"},
        {"role": "user", "content": [{"type": "text", "text": "x", "_keep": 1}]},
        assistant("a"),
    ]
    assert all(w is not m for w, m in zip(wire, messages, strict=True))
    # Nested containers are copies: editing the wire list never reaches the input.
    wire[1]["content"][0]["text"] = "changed"
    wire[2]["tool_calls"][0]["function"]["name"] = "changed"
    wire[2]["tool_calls"].append("x")
    assert messages == before


@given(st.lists(st.dictionaries(st.text(max_size=4), JSON, max_size=5), max_size=5))
def test_to_wire_property(messages: list[dict[str, Any]]) -> None:
    before = copy.deepcopy(messages)
    wire = to_wire(messages)
    assert messages == before
    assert len(wire) == len(messages)
    for out, original in zip(wire, messages, strict=True):
        assert not any(key.startswith("_") for key in out)
        assert out == {k: v for k, v in original.items() if not k.startswith("_")}


# ---------------------------------------------------------------- helpers


def test_is_real_user_message() -> None:
    assert is_real_user_message(user())
    assert is_real_user_message({**user(), "_compressed_summary": False})
    assert not is_real_user_message({**user(), "_compressed_summary": True})
    assert not is_real_user_message(assistant(content="x"))
    assert not is_real_user_message("user")


def test_tool_call_ids() -> None:
    msg = assistant("a", "b")
    msg["tool_calls"].extend([{"id": ""}, "junk", {"id": 3}, {"function": {}}])
    assert tool_call_ids(msg) == ["a", "b"]
    assert tool_call_ids(user()) == []
    assert tool_call_ids({"role": "assistant", "tool_calls": "a"}) == []


def test_message_text() -> None:
    assert message_text(user("plain")) == "plain"
    assert message_text(assistant("a")) == ""
    parts = [
        {"type": "text", "text": "one"},
        {"type": "image_url", "image_url": {"url": "u"}},
        {"type": "text", "text": "two"},
        {"type": "text", "text": 5},
        "junk",
    ]
    assert message_text(user(parts)) == "one\ntwo"
    assert message_text({"role": "user", "content": 42}) == ""


def test_tool_name_for_results() -> None:
    first = assistant("a", "b")
    first["tool_calls"][1]["function"]["name"] = "terminal"
    later = {"role": "assistant", "tool_calls": [call("c", "web_search"), {"id": "d"}, 1]}
    messages = [user(), first, result("a"), result("b"), later, result("c")]
    assert tool_name_for_results(messages) == {"a": "read_file", "b": "terminal", "c": "web_search"}


def test_validation_is_linear() -> None:
    """A 20,000-message transcript validates in one pass (guards against quadratic scans)."""
    messages: list[Msg] = [SYSTEM]
    for turn in range(5_000):
        ids = [f"c{turn}_{k}" for k in range(2)]
        messages += [user(), assistant(*ids), *map(result, reversed(ids))]
    assert validate_messages(messages) == []
    assert len(turn_groups(messages)) == 1 + 2 * 5_000


# ---------------------------------------------------------------- nesting depth (issue 11 §4.5)


def nested_dict(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value}
    return value


def nested_list(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def deep_transcripts(depth: int) -> dict[str, list[Msg]]:
    """Transcripts valid but for one value nested ``depth`` levels, in each place one can hide."""
    text = '{"a":' * depth + "1" + "}" * depth
    return {
        "content part": [user([{"type": "text", "text": "hi", "extra": nested_dict(depth)}])],
        "content list": [user([{"type": "text", "text": "hi"}, *nested_list(depth)])],
        "arguments object": [
            user(),
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call("c1", arguments=nested_dict(depth))],
            },
            result("c1"),
        ],
        "arguments string": [
            user(),
            {"role": "assistant", "content": None, "tool_calls": [call("c1", arguments=text)]},
            result("c1"),
        ],
        "extra key": [{**user(), "metadata": nested_dict(depth)}],
        "extra key list": [{**user(), "metadata": nested_list(depth)}],
    }


@pytest.mark.parametrize("depth", [500, 5_000])
@pytest.mark.parametrize("place", sorted(deep_transcripts(1)))
def test_nesting_deeper_than_the_limit_is_a_problem(depth: int, place: str) -> None:
    messages = deep_transcripts(depth)[place]
    problems = validate_messages(messages)
    deep = [p for p in problems if "deeper than 64 levels" in p]
    assert deep, problems
    assert all("\n" not in p and p.startswith("message ") for p in problems)


def test_nesting_up_to_the_limit_is_fine() -> None:
    from hermes_core.transcript.validation import MAX_NESTING, nesting_exceeds

    assert MAX_NESTING == 64
    # the field's value is level 1: a content list holding 63 more levels is at the limit
    at_limit = [user([{"type": "text", "text": "hi", "extra": nested_dict(MAX_NESTING - 2)}])]
    assert validate_messages(at_limit) == []
    arguments = json.dumps(nested_dict(MAX_NESTING))
    fine = [
        user(),
        {"role": "assistant", "content": None, "tool_calls": [call("c1", arguments=arguments)]},
        result("c1"),
    ]
    assert validate_messages(fine) == []
    over = [user([{"type": "text", "text": "hi", "extra": nested_dict(MAX_NESTING - 1)}])]
    assert validate_messages(over) == [
        'message 0: "content" nests lists or objects deeper than 64 levels; flatten it'
    ]
    assert not nesting_exceeds(nested_list(64)) and nesting_exceeds(nested_list(65))
    assert not nesting_exceeds("x" * 10) and not nesting_exceeds(None)


def test_a_cycle_is_too_deep_not_a_hang() -> None:
    loop: dict[str, Any] = {"type": "text", "text": "hi"}
    loop["self"] = loop
    problems = validate_messages([user([loop])])
    assert any("deeper than 64 levels" in p for p in problems)
