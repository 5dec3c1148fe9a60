"""Review E, 9: ``memory audit`` and ``skills audit`` read lines a person may have edited by
hand. Every field of a line, given each JSON type in turn, is either read (a type it may
hold) or skipped with a message naming the line; no filter or view ends in a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_core.cli import main

GOOD: dict[str, Any] = {
    "v": 1,
    "at": 1_796_420_912.095,
    "event": "landed",
    "store": "memory",
    "action": "add",
    "target": "memory",
    "name": None,
    "reason": None,
    "actor": "model",
    "content": "The project uses tox.",
    "entry_sha256": "04280f8c88f4f589373955aed7bf862de4fb9e6a28ab630ff336a2301351dc4b",
    "entries_sha256": None,
    "origin": "assistant_tool",
    "pending_id": None,
    "provenance": {
        "source": "model",
        "sources": [{"kind": "tool", "tool": "web_fetch", "overlap": 0.5}],
        "backed_by": "none",
        "session_id": "s1",
        "user_id": None,
        "written_at": 1_796_420_912.0,
        "decided": "landed",
        "policy": "stage",
    },
    "source": "tool:web_fetch",
    "user_id": None,
    "shared": True,
    "session_id": "s1",
    "approved_by": None,
    "rejected_by": None,
}
#: one value of every JSON type, and the shapes that broke the reader before
VALUES: list[Any] = [None, True, 7, 2.5, "text", [], [1, "a"], {}, {"k": [1]}, float("inf")]
VIEWS = [
    [],
    ["--json"],
    ["--entries"],
    ["--entries", "--json"],
    ["--source", "tool"],
    ["--event", "landed"],
    ["--since", "9999d"],
    ["--user", "alice"],
]


def edited_lines() -> list[str]:
    lines = [json.dumps(GOOD)]
    for field in GOOD:
        for value in VALUES:
            lines.append(json.dumps({**GOOD, field: value}))
    for key in ("source", "sources"):  # inside the provenance too
        for value in VALUES:
            lines.append(json.dumps({**GOOD, "provenance": {**GOOD["provenance"], key: value}}))
    lines.append(json.dumps({**GOOD, "entries_sha256": ["a", 5]}))
    lines.append(json.dumps({**GOOD, "provenance": {**GOOD["provenance"], "sources": [5]}}))
    return lines


@pytest.fixture
def home(tmp_path: Path) -> Path:
    audit = tmp_path / "audit"
    audit.mkdir()
    text = "\n".join(edited_lines()) + "\n"
    (audit / "memory.jsonl").write_text(text, encoding="utf-8")
    skills = text.replace('"store": "memory"', '"store": "skills"')
    (audit / "skills.jsonl").write_text(skills, encoding="utf-8")
    (tmp_path / "memories").mkdir()
    (tmp_path / "memories" / "MEMORY.md").write_text("The project uses tox.\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: " ".join(v) or "plain")
@pytest.mark.parametrize("store", ["memory", "skills"])
def test_every_field_of_any_type_is_read_or_skipped(
    home: Path, capsys: pytest.CaptureFixture[str], store: str, view: list[str]
) -> None:
    if store == "skills" and "--user" in view:
        return  # skills audit has no --user
    assert main(["--home", str(home), store, "audit", *view]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err.lower()
    assert "skipped" in err  # the edited lines are named, not silently dropped
    if "--json" in view:
        json.loads(out)  # still one document


def test_a_line_whose_provenance_sources_is_not_a_list_is_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reviewer's line: ``--source`` walked ``provenance.sources`` and raised TypeError."""
    audit = tmp_path / "audit"
    audit.mkdir()
    bad = {**GOOD, "provenance": {"sources": 5}}
    (audit / "memory.jsonl").write_text(
        json.dumps(bad) + "\n" + json.dumps(GOOD) + "\n", encoding="utf-8"
    )
    assert main(["--home", str(tmp_path), "memory", "audit", "--source", "tool"]) == 0
    out, err = capsys.readouterr()
    assert "line 1: its provenance sources are not a list of objects; skipped" in err
    assert "The project uses tox." in out


def test_entries_with_no_entries_says_entries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "memories").mkdir()  # a used home: read commands refuse an empty --home
    assert main(["--home", str(tmp_path), "memory", "audit", "--entries"]) == 0
    assert "no current entries" in capsys.readouterr().err
