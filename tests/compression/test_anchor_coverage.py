"""Anchor coverage after one compaction (issue 12 §3): every written file, every failed command
with its error line and the last command survive; paths and commands keep 95% whenever a
grouped rendering fits the ledger's budget; grouped lines read back to exactly their items.

The sessions and the measure are bench/anchor_coverage.py's (the bench prints the figures):
"kept" means verbatim in the summary, or recoverable from a documented grouped line."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.compression.anchors import (
    ANCHOR_HEADER,
    AnchorLedger,
    extract_anchors,
    guard_summary,
    ledger_bound,
    parse_anchor_section,
    split_summary,
)

REPO = Path(__file__).resolve().parents[2]
TRANSCRIPTS = REPO / "tests" / "data" / "transcripts"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_anchor_coverage", REPO / "bench" / "anchor_coverage.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


bench = _bench()
_SESSIONS: dict[int, list[dict[str, Any]]] = {}


def session(turns: int) -> list[dict[str, Any]]:
    if turns not in _SESSIONS:
        _SESSIONS[turns] = bench.make_session(turns)
    return _SESSIONS[turns]


def sample(name: str) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((TRANSCRIPTS / f"{name}.json").read_text())
    return data


# --- what one compaction keeps -------------------------------------------------------------


@pytest.mark.parametrize(
    ("turns", "context"), [(150, 32_000), (300, 32_000), (300, 128_000), (1000, 32_000)]
)
def test_written_files_failures_and_the_last_command_all_survive(turns: int, context: int) -> None:
    row = bench.measure(f"session {turns}", session(turns), context)
    for name in ("edited", "failed", "last"):
        kept, total = row.shares[name]
        assert total > 0, name
        assert kept == total, f"{name}: {kept}/{total} at {turns} turns, {context:,}"
    assert row.ledger <= row.budget
    assert row.prose <= row.prose_budget


@pytest.mark.parametrize(
    ("label", "context"),
    [
        ("session 150", 32_000),
        ("session 300", 32_000),
        ("session 300", 128_000),
        ("coding-200turns", 32_000),
    ],
)
def test_paths_and_commands_keep_95_percent_when_a_compact_rendering_fits(
    label: str, context: int
) -> None:
    messages = session(int(label.split()[1])) if label.startswith("session") else sample(label)
    row = bench.measure(label, messages, context)
    assert row.compact <= row.budget  # the case the target is set for
    for name in ("paths", "commands"):
        kept, total = row.shares[name]
        assert kept >= 0.95 * total, f"{name}: {kept}/{total} ({label}, {context:,})"
    assert row.ledger <= ledger_bound(row.budget)  # rules and decisions have a room on top


def test_past_the_budget_written_files_and_failures_go_last() -> None:
    """A middle whose files and commands cannot all fit even grouped: the newest paths and
    commands are what is kept of them, and nothing written or failed is lost."""
    middle = session(1000)[1:-40]
    ledger = extract_anchors(middle)
    shown = parse_anchor_section(ledger.render(12_000))
    assert set(shown.edited) == set(ledger.edited)
    assert {f.split("` -> ", 1)[0] for f in shown.failures} == {
        f.split("` -> ", 1)[0] for f in ledger.failures
    }
    others = [p for p in ledger.paths if p not in set(ledger.edited)]
    kept = set(shown.paths) - set(ledger.edited)
    assert 0 < len(kept) < len(others)
    assert kept == set(others[-len(kept) :])
    assert ledger.commands[-1] in shown.commands


# --- the grouped rendering -----------------------------------------------------------------


def grouped_ledger() -> AnchorLedger:
    root = "/home/dev/acme/services/billing/src/billing"
    return AnchorLedger(
        paths=[f"{root}/{layer}/{name}.py" for layer in ("api", "db") for name in "abcdefgh"],
        commands=[f"pytest tests/test_{name}.py -q" for name in "abcdefgh"]
        + [f"git diff {root}/api/{name}.py" for name in "abc"]
        + ["make lint"],
        edited=[f"{root}/api/{name}.py" for name in "ab"],
        failures=["`pytest tests/test_a.py -q` -> exit 1: FAILED tests/test_a.py::t - KeyError"],
        asks=["fix the billing tests"],
    )


def test_grouped_lines_are_documented_and_read_back_exactly() -> None:
    ledger = grouped_ledger()
    full = ledger.render(100_000)
    assert "{" not in full  # one item per line while that fits
    rendered = ledger.render(len(full) - 200)
    assert len(rendered) <= len(full) - 200
    root = "/home/dev/acme/services/billing/src/billing"
    assert f"- {root}/db/{{a.py, b.py, c.py, d.py, e.py, f.py, g.py, h.py}}" in rendered
    assert "Files (dir/{a, b} is dir/a, dir/b):" in rendered
    assert "\n- pytest\n  · tests/test_a.py -q\n" not in rendered  # a failed one: listed there
    assert "\n- pytest\n  · tests/test_b.py -q\n  · tests/test_c.py -q\n" in rendered
    assert "- `pytest" not in rendered
    assert "- pytest tests/test_a.py -q\n  ↳ exit 1: FAILED tests/test_a.py::t - KeyError" in (
        rendered
    )
    parsed = parse_anchor_section(rendered)
    assert set(parsed.paths) == set(ledger.paths)
    assert set(parsed.commands) == set(ledger.commands)
    assert parsed.edited == ledger.edited
    assert parsed.failures == ledger.failures
    found = bench.Found(rendered)  # the bench reads the same lines the same way
    assert all(found.path(p) for p in ledger.paths)
    assert all(found.command(c) for c in ledger.commands)
    assert found.failure("pytest tests/test_a.py -q", ["FAILED tests/test_a.py::t - KeyError"])


def test_a_grouped_ledger_survives_the_next_compaction() -> None:
    previous = "## Goal\nold\n\n" + grouped_ledger().render(1500)
    new = "## Goal\nnew\n\n" + AnchorLedger(paths=["/srv/new.py"], commands=["make x"]).render()
    accepted = guard_summary(new, previous, 1000, lambda s: len(s) // 4, max_ledger_chars=4000)
    carried = parse_anchor_section(accepted)
    before = parse_anchor_section(previous)
    assert set(before.paths) | {"/srv/new.py"} <= set(carried.paths)
    assert set(before.commands) | {"make x"} <= set(carried.commands)
    assert carried.edited == before.edited
    assert carried.failures == before.failures


def test_failures_keep_their_newest_error_once() -> None:
    first = "`pytest -q` -> exit 1: FAILED a.py::t - KeyError: 'x'"
    second = "`pytest -q` -> exit 2: ERROR collecting b.py"
    merged = AnchorLedger(failures=[first]).merge(AnchorLedger(failures=[second]))
    assert merged.failures == [second]


def test_extraction_finds_written_files_and_failed_commands() -> None:
    def call(name: str, cid: str, **args: Any) -> dict[str, Any]:
        function = {"name": name, "arguments": json.dumps(args)}
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": cid, "function": function}],
        }

    def result(cid: str, content: str) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": cid, "content": content}

    trace = "Traceback (most recent call last):\n  File \"x\"\nKeyError: 'currency'\n"
    messages = [
        call("read_file", "a", path="src/a.py"),
        result("a", '{"content": "1|x"}'),
        call("write_file", "b", path="src/b.py", content="x = 1"),
        result("b", '{"ok": true}'),
        call("str_replace_based_edit_tool", "c", command="view", path="src/c.py"),
        result("c", "1|x"),
        call("str_replace_based_edit_tool", "d", command="str_replace", path="src/d.py"),
        result("d", "ok"),
        call("terminal", "e", command="python -m app.cli run"),
        result("e", json.dumps({"output": trace, "exit_code": 1})),
        call("terminal", "f", command="ruff check src/b.py"),
        result("f", json.dumps({"output": "src/b.py:3:1: F401 `os` imported but unused"})),
    ]
    ledger = extract_anchors(messages)
    assert ledger.edited == ["src/b.py", "src/d.py"]
    assert ledger.failures == ["`python -m app.cli run` -> exit 1: KeyError: 'currency'"]
    assert "src/b.py:3:1: F401 `os` imported but unused" in ledger.errors  # a linter's finding


def test_the_walk_still_finds_old_written_files_after_its_early_stop() -> None:
    middle = session(1000)[1:-40]
    full = extract_anchors(middle)
    early = extract_anchors(middle, max_chars=8000)
    assert set(early.edited) == set(full.edited)
    assert {f.split("` -> ")[0] for f in early.failures} == {
        f.split("` -> ")[0] for f in full.failures
    }
    assert len(early.paths) < len(full.paths)  # it did stop early


# --- the parser never invents an item ------------------------------------------------------

_piece = st.text(alphabet="ab/{}, ·↳-`>:.1 ", min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(
    lists=st.lists(st.lists(_piece, max_size=8), min_size=4, max_size=4),
    bound=st.sampled_from([200, 400, 800, 100_000]),
)
def test_what_is_read_back_was_in_the_ledger(lists: list[list[str]], bound: int) -> None:
    paths, commands, edited, failures = lists
    failures = failures + [f"`{c}` -> exit 1: {c}" for c in commands[:2]]
    ledger = AnchorLedger(paths=paths + edited, commands=commands, edited=edited, failures=failures)
    rendered = ledger.render(bound)
    assert len(rendered) <= bound
    assert not rendered or rendered.startswith(ANCHOR_HEADER)
    parsed = parse_anchor_section(rendered)
    clean = AnchorLedger().merge(ledger)
    failed = {f.split("` -> ", 1)[0][1:] for f in clean.failures if f.startswith("`")}
    assert set(parsed.paths) <= set(clean.paths)
    assert set(parsed.edited) <= set(clean.edited)
    assert set(parsed.commands) <= set(clean.commands) | failed
    assert set(parsed.failures) <= set(clean.failures)


def test_a_removed_line_does_not_end_the_section() -> None:
    """The directive filter replaces a line it distrusts; the rest of the ledger still reads,
    and the members of a removed program line are not pinned on another program."""
    removed = "[line removed: it read like an instruction, not a record]"
    rendered = "\n".join(
        [
            ANCHOR_HEADER,
            "Commands (`· args` under `- prog` is `prog args`):",
            "- git",
            "  · diff a.py",
            removed,
            "  · -q",
            "- make lint",
            "User asks:",
            "- fix it",
        ]
    )
    prose, ledger = split_summary("## Goal\nx\n\n" + rendered)
    assert prose == "## Goal\nx"
    assert ledger.commands == ["git diff a.py", "make lint"]
    assert ledger.asks == ["fix it"]
