"""Labelled serialisation of turns for the summariser: labels, cuts, cap, redaction."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.compression.serialize import head_tail, serialize_turns
from hermes_core.redact import looks_like_secret

OPENAI_KEY = "sk-proj-" + "A1b2C3d4" * 4
GITHUB_TOKEN = "ghp_" + "x" * 36


def call(cid: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


TRANSCRIPT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": "Run the tests"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            call("call_1", "terminal", '{"command": "pytest -q"}'),
            call("call_2", "read_file", '{"path": "src/app.py"}'),
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "3 passed"},
    {"role": "tool", "tool_call_id": "call_2", "content": "print('hi')"},
    {"role": "assistant", "content": "All green."},
]


def test_labels_and_tool_calls() -> None:
    text = serialize_turns(TRANSCRIPT)
    assert text == (
        "[SYSTEM]\nYou are helpful.\n\n"
        "[USER]\nRun the tests\n\n"
        '[ASSISTANT]\n-> terminal({"command": "pytest -q"})\n'
        '-> read_file({"path": "src/app.py"})\n\n'
        "[TOOL RESULT call_1 terminal]\n3 passed\n\n"
        "[TOOL RESULT call_2 read_file]\nprint('hi')\n\n"
        "[ASSISTANT]\nAll green."
    )


def test_assistant_text_comes_before_its_calls() -> None:
    msg = {"role": "assistant", "content": "Let me look.", "tool_calls": [call("c", "grep", "{}")]}
    assert serialize_turns([msg]) == "[ASSISTANT]\nLet me look.\n-> grep({})"


def test_arguments_given_as_a_mapping_are_json() -> None:
    msg = {
        "role": "assistant",
        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"a": 1}}}],
    }
    assert serialize_turns([msg]) == '[ASSISTANT]\n-> f({"a": 1})'


def test_tool_result_without_a_known_call_uses_its_name_or_nothing() -> None:
    named = {"role": "tool", "tool_call_id": "x9", "name": "web_search", "content": "r"}
    bare = {"role": "tool", "content": "r"}
    assert serialize_turns([named]).startswith("[TOOL RESULT x9 web_search]\n")
    assert serialize_turns([bare]).startswith("[TOOL RESULT]\n")


def test_images_and_parts() -> None:
    msg = {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "input_audio", "input_audio": {"data": "..."}},
        ],
    }
    text = serialize_turns([msg])
    assert text == "[USER]\nWhat is this?\n[image]\n[input_audio]"
    assert "base64" not in text


def test_odd_messages_do_not_break_it() -> None:
    odd: list[Any] = [
        "not a dict",
        {"role": "developer", "content": "dev"},
        {"role": "critic", "content": 42},
        {"content": "no role"},
        {"role": "assistant", "content": None, "tool_calls": [None, {"function": "x"}]},
    ]
    text = serialize_turns(odd)
    assert text == "[SYSTEM]\ndev\n\n[CRITIC]\n\n[UNKNOWN]\nno role\n\n[ASSISTANT]\n-> ?()"


def test_long_content_keeps_head_and_tail() -> None:
    body = "HEAD" + "m" * 50_000 + "TAIL"
    text = serialize_turns([{"role": "tool", "tool_call_id": "c", "content": body}])
    label, kept = text.split("\n", 1)
    assert label == "[TOOL RESULT c]"
    assert len(kept) <= 20_000
    assert kept.startswith("HEAD") and kept.endswith("TAIL")
    omitted = int(re.search(r"\[\.\.\. (\d+) chars omitted \.\.\.\]", kept).group(1))  # type: ignore[union-attr]
    assert len(kept) - len(f"\n[... {omitted} chars omitted ...]\n") + omitted == len(body)


def test_per_message_limit_is_configurable() -> None:
    text = serialize_turns([{"role": "user", "content": "x" * 500}], per_message_max=100)
    assert len(text) <= len("[USER]\n") + 100
    assert "chars omitted" in text


def test_total_cap_keeps_head_and_tail_with_marker() -> None:
    msgs = [{"role": "user", "content": f"turn {i} " + "w" * 900} for i in range(400)]
    text = serialize_turns(msgs)
    assert len(text) <= 160_000
    assert text.startswith("[USER]\nturn 0 ")
    assert text.endswith("w" * 900) and "turn 399 " in text[-1000:]
    assert re.search(r"\[\.\.\. \d+ chars of older turns omitted \.\.\.\]", text)


def test_redaction_before_anything_leaves() -> None:
    msgs = [
        {"role": "user", "content": f"my key is {OPENAI_KEY}"},
        {"role": "assistant", "content": None, "tool_calls": [call("c", "gh", GITHUB_TOKEN)]},
        {"role": "tool", "tool_call_id": "c", "content": "x " * 15_000 + OPENAI_KEY + " y" * 4_995},
        {"role": "tool", "tool_call_id": OPENAI_KEY, "content": "id leak"},
    ]
    text = serialize_turns(msgs)
    assert OPENAI_KEY not in text and GITHUB_TOKEN not in text
    assert looks_like_secret(text) is None
    assert "[REDACTED:openai_key]" in text and "[REDACTED:github_token]" in text


JWT = "eyJ" + "a" * 1_990 + ".eyJ" + "b" * 3_990 + "." + "c" * 1_990


@settings(max_examples=40, deadline=None)
@given(
    st.integers(min_value=0, max_value=60_000),
    st.sampled_from([OPENAI_KEY, GITHUB_TOKEN, JWT]),
    st.integers(min_value=0, max_value=6),
    st.sampled_from([20_000, 1_000]),
)
def test_a_cut_never_leaves_part_of_a_key(
    position: int, secret: str, jwts_before: int, per_message: int
) -> None:
    # Big JWTs early on shrink the redacted head window; the key may straddle any cut.
    prefix = (JWT + " ") * jwts_before
    body = prefix + " " * position + secret + " " * (60_000 - position)
    text = serialize_turns([{"role": "user", "content": body}], per_message_max=per_message)
    assert secret[:14] not in text and secret[-14:] not in text
    assert looks_like_secret(text) is None


def test_head_tail_small_limits() -> None:
    assert head_tail("abcdef", 6) == "abcdef"
    assert head_tail("abcdef", 3) == "abc"
    assert head_tail("abcdef", 0) == ""


_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=300)
_content = st.one_of(
    st.none(),
    _text,
    st.builds(lambda n, c: c * n, st.integers(0, 400_000), st.sampled_from("xé\n中")),
    st.lists(
        st.one_of(
            st.builds(lambda t: {"type": "text", "text": t}, _text),
            st.just({"type": "image_url", "image_url": {"url": "data:,"}}),
        ),
        max_size=3,
    ),
)
_message = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["system", "user", "assistant", "tool"]),
        "content": _content,
    },
    optional={
        "tool_call_id": st.text(max_size=10),
        "tool_calls": st.lists(
            st.builds(call, st.text(max_size=8), st.text(max_size=8), _text), max_size=3
        ),
    },
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(_message, max_size=40),
    st.integers(min_value=0, max_value=200_000),
    st.integers(min_value=0, max_value=30_000),
)
def test_cap_is_never_exceeded(messages: list[dict[str, Any]], cap: int, per_message: int) -> None:
    text = serialize_turns(messages, max_chars=cap, per_message_max=per_message)
    assert len(text) <= cap


@settings(max_examples=25, deadline=None)
@given(st.lists(_message, min_size=1, max_size=60))
def test_default_cap_is_never_exceeded(messages: list[dict[str, Any]]) -> None:
    assert len(serialize_turns(messages)) <= 160_000


def test_huge_input_stays_under_the_default_cap() -> None:
    msgs = [{"role": "tool", "tool_call_id": str(i), "content": "z" * 100_000} for i in range(60)]
    text = serialize_turns(msgs)
    assert 150_000 < len(text) <= 160_000
