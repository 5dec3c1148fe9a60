"""Finding facts of each kind, and planting synthetic ones into a copy of a transcript."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hermes_core.evals.facts import KINDS, Fact, find_facts, normal_number, plant_facts
from hermes_core.evals.kept import Holdings
from hermes_core.transcript.files import read_transcript
from hermes_core.transcript.validation import validate_messages


def call(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    return {"id": cid, "type": "function", "function": function}


SESSION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a coding agent."},
    {
        "role": "user",
        "content": "Fix the parser in src/app/parse.py. Never push to main without a review. "
        "The build takes 42 s today.",
    },
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            call("c1", "read_file", {"path": "/repo/src/app/parse.py"}),
            call("c2", "terminal", {"command": "pytest  tests/test_parse.py   -q"}),
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "def parse(): ..."},
    {
        "role": "tool",
        "tool_call_id": "c2",
        "name": "terminal",
        "content": json.dumps(
            {
                "output": "Traceback (most recent call last):\nKeyError: 'currency'\n1 failed",
                "exit_code": 1,
            }
        ),
    },
    {
        "role": "assistant",
        "content": "We decided to keep the old tokenizer instead of rewriting it. "
        "The parse step now takes 1,375 ms.",
    },
]


def by_kind(facts: list[Fact]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {kind: [] for kind in KINDS}
    for fact in facts:
        out[fact.kind].append(fact.text)
    return out


def test_each_kind_is_found_where_a_session_has_it() -> None:
    found = by_kind(find_facts(SESSION))
    assert found["paths"] == ["src/app/parse.py", "/repo/src/app/parse.py"]
    assert found["commands"] == ["pytest tests/test_parse.py -q"]  # whitespace collapsed
    assert found["errors"] == ["KeyError: 'currency'"]  # not the traceback's header
    assert found["rules"] == ["Never push to main without a review"]
    assert found["decisions"] == ["We decided to keep the old tokenizer instead of rewriting it"]
    assert found["numbers"] == ["42 s", "1,375 ms"]


def test_find_reads_only_the_slice_and_each_text_once() -> None:
    assert find_facts(SESSION, 2, 5) == [
        Fact("paths", "/repo/src/app/parse.py", 2),
        Fact("commands", "pytest tests/test_parse.py -q", 2),
        Fact("errors", "KeyError: 'currency'", 4),
    ]
    twice = [*SESSION, dict(SESSION[1])]
    assert len(find_facts(twice)) == len(find_facts(SESSION))


def test_a_successful_command_has_no_error_and_a_summary_is_not_the_user() -> None:
    ok = {"output": "error handling fine: 3 passed", "exit_code": 0}
    messages: list[dict[str, Any]] = [
        {"role": "assistant", "content": "", "tool_calls": [call("c", "terminal", {"cmd": "ls"})]},
        {"role": "tool", "tool_call_id": "c", "content": json.dumps(ok)},
        {"role": "user", "content": "Always do X please now", "_compressed_summary": True},
    ]
    found = by_kind(find_facts(messages))
    assert found["errors"] == [] and found["rules"] == []


def test_numbers_compare_without_commas_or_the_space_before_the_unit() -> None:
    assert normal_number("1,375 ms") == normal_number("1375ms") == "1375ms"
    holdings = Holdings([{"role": "assistant", "content": "it took 1375ms, then 41375 ms"}])
    assert holdings.holds(Fact("numbers", "1,375 ms", 0))
    assert not holdings.holds(Fact("numbers", "375 ms", 0))  # not inside a larger number


def test_grouped_ledger_lines_count_as_kept() -> None:
    summary = (
        "prose\n\n## Anchors (carried verbatim)\n"
        "Files (dir/{a, b} is dir/a, dir/b):\n- /repo/src/{a.py, b.py}\n"
        "Commands (`· args` under `- prog` is `prog args`):\n"
        "- git diff\n  · src/a.py\n  · src/b.py\n"
    )
    holdings = Holdings([{"role": "user", "content": summary}])
    assert holdings.holds(Fact("paths", "/repo/src/b.py", 0))
    assert holdings.holds(Fact("commands", "git diff src/b.py", 0))
    assert not holdings.holds(Fact("paths", "/repo/src/c.py", 0))


def test_planting_spreads_every_kind_and_keeps_the_transcript_valid(transcripts_dir: Any) -> None:
    messages = read_transcript(transcripts_dir / "coding-50turns.json")
    original = json.dumps(messages)
    planted, facts = plant_facts(messages, 5, 100, per_kind=3)
    assert json.dumps(messages) == original  # the input is not changed
    assert validate_messages(planted) == []
    assert [sum(f.kind == k for f in facts) for k in KINDS] == [3] * len(KINDS)
    assert all(f.planted and 5 <= f.index < 100 + len(planted) - len(messages) for f in facts)
    for fact in facts:  # each fact sits in the message its index names
        assert Holdings([planted[fact.index]]).holds(fact), fact
        assert not Holdings(messages).holds(fact), fact  # and nowhere in the original
    for kind in KINDS:  # early and late in the slice
        at = [f.index for f in facts if f.kind == kind]
        assert at[-1] - at[0] > 40


def test_planting_is_deterministic_and_skips_texts_already_there() -> None:
    first = plant_facts(SESSION, 1, 6)
    assert first == plant_facts(SESSION, 1, 6)
    taken = [*SESSION, {"role": "assistant", "content": "It weighs 48.6 MB."}]
    _, facts = plant_facts(taken, 1, 6)
    assert "48.6 MB" not in [f.text for f in facts]
    with pytest.raises(ValueError, match="no turn boundary"):
        plant_facts(SESSION, 6, 6)
