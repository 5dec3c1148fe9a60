"""Issue 26 item 7: no command prints a terminal control from a file it reads, live: a tool
name, a role or a problem's text carrying ESC sequences, C1 controls or bidi overrides comes
out escaped from ``tokens``, ``validate`` and ``compress`` (text and JSON), and from the
top-level error line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.cli import main

HOSTILE = ("\x1b[2J", "\x1b]52;c;aGk=\x07", "\x9b31m", "\u202e")
NAME = "run" + "".join(HOSTILE)


def _raw(text: str) -> list[str]:
    return [h for h in HOSTILE if h in text] + [c for c in "\x1b\x9b\u202e\x07" if c in text]


def _transcript(tmp_path: Path) -> Path:
    call = {"id": "c1", "type": "function", "function": {"name": NAME, "arguments": "{}"}}
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
        {"role": "assistant", "content": "ok"},
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def _bad(tmp_path: Path) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"role": "user" + "".join(HOSTILE), "content": "x"}]), "utf-8")
    return path


@pytest.mark.parametrize(
    "argv",
    [["tokens"], ["tokens", "--json"], ["validate"], ["validate", "--json"]],
)
def test_text_from_the_file_is_printed_escaped(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for path in (_transcript(tmp_path), _bad(tmp_path)):
        main([*argv, str(path)])
        out, err = capsys.readouterr()
        assert _raw(out) == [] and _raw(err) == [], (argv, path.name, out, err)


def test_the_error_line_is_printed_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["compress", str(_bad(tmp_path)), "--out", str(tmp_path / "o.json")])
    out, err = capsys.readouterr()
    assert code != 0 and "error" in err
    assert _raw(out) == [] and _raw(err) == [], err
