"""Every numeric option of the commands is bounded (issue 16 §3): a figure out of range is a
usage error (exit 2) that names the option and the range, before any work is done."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.cli import build_parser, main
from hermes_core.cli.common import MAX_TOKENS_OPTION

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "coding-session.json")
#: commands other helpers own (issue 16 splits the work); their options are checked there
ELSEWHERE = {"memory", "eval"}

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.mark.parametrize(
    ("argv", "bound"),
    [
        (
            ["compress", EXAMPLE, "--context-length", "99999999999999999999999999"],
            "1 to 100,000,000",
        ),
        (["compress", EXAMPLE, "--context-length", "100000001"], "1 to 100,000,000"),
        (["compress", EXAMPLE, "--context-length", "0"], "1 to 100,000,000"),
        (["compress", EXAMPLE, "--context-length", "-5"], "1 to 100,000,000"),
        (["compress", EXAMPLE, "--max-tokens", "99999999999999999999999999"], "0 to 100,000,000"),
        (["compress", EXAMPLE, "--max-tokens", "-1"], "0 to 100,000,000"),
        (["sessions", "list", "--limit", "0"], "1 to 10,000"),
        (["sessions", "list", "--limit", "99999999999999999999999999"], "1 to 10,000"),
        (["sessions", "search", "backup", "--limit", "10001"], "1 to 10,000"),
    ],
)
def test_out_of_range_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], argv: list[str], bound: str
) -> None:
    option = next(a for a in argv if a.startswith("--"))
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    last = err.strip().splitlines()[-1]
    assert f"argument {option}: " in last and f"give a whole number from {bound}" in last
    assert "e+" not in err and "e25" not in err


@pytest.mark.parametrize("text", ["1e6", "abc", "12.5", ""])
def test_not_a_whole_number(capsys: pytest.CaptureFixture[str], text: str) -> None:
    assert main(["compress", EXAMPLE, "--context-length", text]) == 2
    assert f"not a whole number: {text!r}" in capsys.readouterr().err


def test_the_largest_window_is_accepted(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = ["compress", EXAMPLE, "--context-length", str(MAX_TOKENS_OPTION)]
    code = main([*argv, "--out", str(tmp_path / "o.json")])
    err = capsys.readouterr().err
    assert code == 0 and err.startswith("unchanged: ")
    assert "(threshold 50,000,000)" in err  # a real figure, not 5e25


def _numeric_options() -> Iterator[tuple[str, argparse.Action]]:
    """Every option of every command that takes a value and is not text or a choice."""

    def walk(parser: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, argparse.Action]]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    if f"{path} {name}".split()[0] not in ELSEWHERE:
                        yield from walk(child, f"{path} {name}".strip())
            elif action.nargs != 0 and action.type is not None and action.type is not str:
                yield path, action

    yield from walk(build_parser(), "")


def test_every_numeric_option_is_bounded() -> None:
    found = list(_numeric_options())
    names = {(path, action.dest) for path, action in found}
    assert {("compress", "context_length"), ("sessions list", "limit")} <= names
    unbounded = [(p, a.dest) for p, a in found if getattr(a.type, "__name__", "") != "whole number"]
    assert unbounded == []
