"""Layer 3: the deterministic summary. Content on the sample middles, bounds, determinism,
robustness on malformed input, the previous summary carried on, no secrets."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scaling import growth

from hermes_core.compression import fallback
from hermes_core.compression.anchors import (
    ANCHOR_HEADER,
    DEFAULT_LEDGER_CHARS,
    AnchorLedger,
    ledger_bound,
    split_summary,
)
from hermes_core.compression.fallback import FALLBACK_MAX_CHARS, fallback_summary
from hermes_core.compression.prompts import SECTIONS

TRANSCRIPTS = Path(__file__).parents[1] / "data" / "transcripts"
KEY = "sk-proj-" + "Z9y8X7w6V5u4T3s2R1q0" * 2


def middle(name: str) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((TRANSCRIPTS / f"{name}.json").read_text())
    return data[3:-20]


def call(name: str, cid: str, **args: Any) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    return {"role": "assistant", "content": "", "tool_calls": [{"id": cid, "function": function}]}


def headings(text: str) -> list[str]:
    return re.findall(r"^## (.+)$", text, flags=re.M)


@pytest.mark.parametrize("name", ["coding-50turns", "coding-200turns"])
def test_content_on_sample_middles(name: str) -> None:
    messages = middle(name)
    summary = fallback_summary(messages)
    prose, ledger = split_summary(summary)
    assert prose.startswith("[Fallback summary:")
    titles = headings(prose)
    template = [s.title for s in SECTIONS]
    assert set(titles) <= set(template)
    assert titles == sorted(titles, key=template.index)  # the template's order
    for title in ("Goal", "Completed Actions", "Active State", "Blocked", "Relevant Files"):
        assert title in titles
    last_ask = [m for m in messages if m["role"] == "user"][-1]
    ask_text = last_ask["content"] if isinstance(last_ask["content"], str) else ""
    assert ask_text[:60] in prose  # the user's latest request
    assert re.search(r"read_file ×\d+", prose)  # actions, grouped with counts
    assert "User asked “" in prose
    assert "terminal" in prose
    assert "/root/.pyenv/versions/3.11.7/lib/python3.11/" in prose  # files
    assert "-> exit 1" in prose or "failed" in prose  # errors
    assert ledger.paths
    assert ledger.commands
    assert ledger.errors
    assert ANCHOR_HEADER in summary


@pytest.mark.parametrize("max_chars", [0, 1, 50, 200, 500, 1000, 3000, FALLBACK_MAX_CHARS, 50_000])
def test_bound(max_chars: int) -> None:
    summary = fallback_summary(middle("coding-200turns"), max_chars=max_chars)
    prose, ledger = split_summary(summary)
    assert len(prose) <= max_chars
    assert len(summary) <= max_chars + 2 + ledger_bound(DEFAULT_LEDGER_CHARS)
    assert not ledger.is_empty()


def test_default_bound_on_the_large_sample() -> None:
    summary = fallback_summary(middle("coding-200turns"))
    prose, _ = split_summary(summary)
    assert FALLBACK_MAX_CHARS - 1000 < len(prose) <= FALLBACK_MAX_CHARS  # the budget is used
    assert "earlier entries omitted" in prose


def test_deterministic_and_input_untouched() -> None:
    messages = middle("coding-50turns")
    before = copy.deepcopy(messages)
    first = fallback_summary(messages, previous_summary="## Goal\nold goal")
    second = fallback_summary(copy.deepcopy(messages), previous_summary="## Goal\nold goal")
    assert first.encode() == second.encode()
    assert messages == before


def test_previous_summary_is_merged() -> None:
    old_ledger = AnchorLedger(paths=["/old/kept.py"], commands=["make old-target"])
    previous = "## Goal\nThe user wanted the old parser fixed.\n\n" + old_ledger.render()
    messages = [
        {"role": "user", "content": "Now fix the new parser."},
        call("read_file", "a", path="/new/parser.py"),
        {"role": "tool", "tool_call_id": "a", "content": '{"content": "x"}'},
    ]
    prose, ledger = split_summary(fallback_summary(messages, previous_summary=previous))
    assert ledger.paths == ["/old/kept.py", "/new/parser.py"]
    assert ledger.commands == ["make old-target"]
    assert "> The user wanted the old parser fixed." in prose  # quoted, never a live heading
    assert "> ## Goal" in prose
    assert headings(prose).count("Goal") == 1


def test_written_as_history() -> None:
    messages = [
        {"role": "user", "content": "Refactor the loader and run the tests."},
        call("terminal", "a", command="pytest -q"),
        {"role": "tool", "tool_call_id": "a", "content": '{"output": "boom", "exit_code": 2}'},
    ]
    prose, ledger = split_summary(fallback_summary(messages))
    assert "The user had asked “Refactor the loader and run the tests.”" in prose
    assert "no reply was recorded" in prose
    assert "The last tool call was terminal (pytest -q), which failed." in prose
    assert "[1 failed]" in prose
    assert ledger.errors == ["`pytest -q` -> exit 2"]
    for order in ("Next step", "Remaining Work", "TODO", "You should", "Continue with"):
        assert order.lower() not in prose.lower()


def test_reasoning_is_not_quoted() -> None:
    messages = [
        {"role": "user", "content": "why?"},
        {"role": "assistant", "content": "<think>secret plan</think>Because of the cache."},
    ]
    prose = split_summary(fallback_summary(messages))[0]
    assert "secret plan" not in prose
    assert "Because of the cache." in prose


def test_no_secrets() -> None:
    messages = [
        {"role": "user", "content": f"my key is {KEY}, use it"},
        call("terminal", "a", command=f"curl -H 'Authorization: Bearer {KEY}' https://api.x.io"),
        {"role": "tool", "tool_call_id": "a", "content": f"Error: invalid key {KEY}"},
        {"role": "assistant", "content": f"The key {KEY} was rejected."},
        call("read_file", "b", path=f"/tmp/{KEY}/x.py"),
    ]
    previous = (
        f"## Critical Context\nkey {KEY}\n\n" + AnchorLedger(commands=[f"echo {KEY}"]).render()
    )
    summary = fallback_summary(messages, previous_summary=previous)
    assert KEY not in summary
    assert KEY[:16] not in summary
    assert "[REDACTED:openai_key]" in summary


def test_empty_and_odd_inputs() -> None:
    assert fallback_summary([]).startswith("[Fallback summary:")
    odd: list[Any] = [None, 3, "text", {"role": "tool"}, {"role": "assistant", "tool_calls": 5}]
    assert fallback_summary(odd).startswith("[Fallback summary:")
    assert fallback_summary([], max_chars=0) == ""


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3)
    ),
    max_leaves=15,
)
messages_strategy = st.lists(
    st.one_of(
        json_values,
        st.fixed_dictionaries(
            {},
            optional={
                "role": st.sampled_from(["user", "assistant", "tool", "system", None]),
                "content": st.one_of(
                    json_values,
                    st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": json_values})),
                ),
                "tool_calls": st.one_of(
                    json_values,
                    st.lists(
                        st.fixed_dictionaries(
                            {"id": json_values},
                            optional={
                                "function": st.one_of(
                                    json_values,
                                    st.fixed_dictionaries(
                                        {
                                            "name": json_values,
                                            "arguments": json_values.map(json.dumps),
                                        }
                                    ),
                                )
                            },
                        ),
                        max_size=3,
                    ),
                ),
                "tool_call_id": json_values,
                "_compressed_summary": st.booleans(),
            },
        ),
    ),
    max_size=10,
)


@settings(max_examples=100, deadline=None)
@given(messages_strategy, st.one_of(st.none(), st.text(max_size=200)), st.integers(-5, 3000))
def test_never_raises(messages: list[Any], previous: str | None, max_chars: int) -> None:
    # the inner builder itself must not raise: the outer guard is only a last resort
    text = fallback._build(messages, previous, max_chars)
    assert text == fallback_summary(messages, previous_summary=previous, max_chars=max_chars)
    assert len(split_summary(text)[0]) <= max(max_chars, 0)


def _summarise(text: str) -> str:
    messages = [
        {"role": "user", "content": text},
        call("terminal", "a", command=text, path=text),
        {"role": "tool", "tool_call_id": "a", "content": text},
        {"role": "assistant", "content": text},
    ]
    return fallback_summary(messages, previous_summary=text)


@pytest.mark.parametrize("text", ["/" * 300_000, "a." * 150_000, "<think>" * 40_000, "`" * 300_000])
def test_hostile_input_costs_linear_work(text: str) -> None:
    assert len(split_summary(_summarise(text))[0]) <= FALLBACK_MAX_CHARS
    ratio = growth(_summarise, text)
    assert ratio < 9, f"4x the text made {ratio:.1f}x the calls (linear: at most 4; quadratic: 16)"
