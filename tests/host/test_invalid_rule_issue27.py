"""Issue 27 item 6: one rule for invalid transcripts on every path (docs/formats.md,
"Invalid transcripts"). What a provider would reject anywhere but at the very end (an unknown
role, a call answered by nothing before the next message, an orphan result) is refused, with
nothing written or stored; tool calls still without results at the very end are a turn in
flight: kept verbatim, with a warning on the command line (``validate`` reports them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from host_support import make_hermes

import hermes_core as hc
from hermes_core.cli import main
from hermes_core.formats import to_openai

pytestmark = pytest.mark.usefixtures("isolated_home")

CALL = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
START: list[dict[str, Any]] = [
    {"role": "system", "content": "sys"},
    {"role": "user", "content": "hi"},
]
REFUSED = {
    "unknown-role": [*START, {"role": "bot", "content": "hello"}, {"role": "user", "content": "x"}],
    "unanswered-call": [
        *START,
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "user", "content": "again"},
    ],
    "orphan-result": [*START, {"role": "tool", "tool_call_id": "zz", "content": "out"}],
}
IN_FLIGHT = [*START, {"role": "assistant", "content": None, "tool_calls": [CALL]}]


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_the_command_line_refuses_and_writes_nothing(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(REFUSED[case]))
    out = tmp_path / "out.json"
    for argv in (
        ["compress", str(path), "--summarizer", "fallback", "--force", "--out", str(out)],
        ["tokens", str(path)],
        ["validate", str(path)],
    ):
        code, err = cli(capsys, *argv)
        assert code == 1, argv
        assert "message 2" in err, argv
    assert not out.exists()


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_the_library_refuses(case: str) -> None:
    with pytest.raises(hc.InvalidMessages):
        hc.compress(REFUSED[case], context_length=8_000, summarizer="fallback", force=True)
    with pytest.raises(hc.InvalidMessages):
        to_openai(REFUSED[case], "openai")


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_session_refuses_and_stores_nothing(case: str, tmp_path: Path) -> None:
    with make_hermes(tmp_path / "h", {"model": {"context_length": 8_000}}) as host:
        session = host.session("s1")
        session.prepare(START)
        with pytest.raises(hc.InvalidMessages, match="nothing was stored"):
            session.prepare(REFUSED[case])
        assert session.messages == START
    with make_hermes(tmp_path / "h", {"model": {"context_length": 8_000}}) as host:
        assert host.session("s1").messages == START


def test_a_turn_in_flight_is_kept_everywhere_and_the_command_line_warns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(IN_FLIGHT))
    out = tmp_path / "out.json"
    code, err = cli(
        capsys, "compress", str(path), "--summarizer", "fallback", "--force", "--out", str(out)
    )
    assert code == 0 and "warning" in err and "(c1)" in err and "turn in flight" in err
    assert json.loads(out.read_text())[-1] == IN_FLIGHT[-1]
    code, err = cli(capsys, "tokens", str(path))
    assert code == 0 and "turn in flight" in err
    code, err = cli(capsys, "validate", str(path))
    assert code == 1 and "has no result" in err  # a provider would refuse it as it is
    result = hc.compress(IN_FLIGHT, context_length=8_000, summarizer="fallback", force=True)
    assert result.messages[-1] == IN_FLIGHT[-1]
    assert to_openai(IN_FLIGHT, "openai").messages == IN_FLIGHT
    with make_hermes(tmp_path / "h", {"model": {"context_length": 8_000}}) as host:
        session = host.session("s1")
        session.prepare(IN_FLIGHT)
        assert session.messages[-1]["tool_calls"][0]["id"] == "c1"


def test_an_id_used_again_turns_later_is_refused_turn_by_turn_too(tmp_path: Path) -> None:
    """``prepare`` re-validates only what a call adds; the ids of the earlier turns still count
    (servers that number calls per turn reuse ``call_0``), as in every other path."""
    answered = [
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
        {"role": "assistant", "content": "one file"},
    ]
    first = [*START, *answered, {"role": "user", "content": "again"}]
    second = [*first, *answered]
    with pytest.raises(hc.InvalidMessages):
        hc.compress(second, context_length=8_000, summarizer="fallback", force=True)
    with make_hermes(tmp_path / "h", {"model": {"context_length": 8_000}}) as host:
        session = host.session("s1")
        session.prepare(first)
        with pytest.raises(hc.InvalidMessages, match='id "c1" is already used by message 2'):
            session.prepare(second[:-1])
        assert session.messages == first
