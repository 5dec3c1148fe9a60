"""Issue 26, ``memory audit`` and ``skills audit``: filters, ``--entries``, per-user views,
escaping, and lines that cannot be read (reported, skipped, never a crash)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_core.cli import main
from hermes_core.provenance.audit_log import cli_actor, entry_sha256


def cli(capsys: pytest.CaptureFixture[str], home: Path, *argv: str) -> tuple[int, str, str]:
    code = main([*argv, "--home", str(home)])
    out, err = capsys.readouterr()
    return code, out, err


def plant(home: Path, *records: dict[str, Any], store: str = "memory", raw: str = "") -> None:
    path = home / "audit" / f"{store}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r) + "\n" for r in records) + raw
    with path.open("a") as handle:
        handle.write(text)


def line(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "v": 1,
        "at": time.time(),
        "event": "landed",
        "store": "memory",
        "target": "memory",
        "actor": "model",
        "user_id": None,
        "shared": False,
        "source": "user",
        "content": "a note",
    }
    return base | fields


def test_lines_print_newest_last_with_time_event_actor_file_source_preview(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    now = time.time()
    plant(tmp_path, line(at=now, content="second"), line(at=now - 60, content="first"))
    code, out, err = cli(capsys, tmp_path, "memory", "audit")
    assert code == 0 and err == ""
    header, *rows = out.splitlines()
    assert header.split() == ["time", "event", "actor", "file", "source", "preview"]
    assert "first" in rows[0] and "second" in rows[1]
    assert "landed" in rows[0] and "model" in rows[0] and "MEMORY.md" in rows[0]


def test_filters_event_source_and_since(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = time.time() - 10 * 86400
    tool = {"source": "tool", "sources": [{"kind": "tool", "tool": "web_fetch", "overlap": 1.0}]}
    plant(
        tmp_path,
        line(at=old, content="old one"),
        line(event="staged", content="from a page", source="tool:web_fetch", provenance=tool),
        line(content="recent"),
    )

    def shown(*argv: str) -> list[str]:
        code, out, _ = cli(capsys, tmp_path, "memory", "audit", "--json", *argv)
        assert code == 0
        return [x["content"] for x in json.loads(out)["lines"]]

    assert shown() == ["old one", "from a page", "recent"]
    assert shown("--since", "7d") == ["from a page", "recent"]
    assert shown("--event", "staged") == ["from a page"]
    assert shown("--source", "tool") == ["from a page"]
    assert shown("--source", "tool:web_fetch") == ["from a page"]
    assert shown("--source", "user") == ["old one", "recent"]


def test_a_bad_since_is_a_usage_error_that_says_what_to_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "memories").mkdir()  # a used home: read commands refuse an empty --home
    code, out, err = cli(capsys, tmp_path, "memory", "audit", "--since", "seven days")
    assert code == 2 and out == ""
    assert "use a number and s, m, h, d or w (e.g. 7d)" in err


def test_a_user_sees_their_own_and_shared_lines_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As ``memory show --user``: alice sees lines about her USER.md and the MEMORY.md every
    user shares, not bob's blocks nor the profile of the home's no-user sessions."""
    plant(
        tmp_path,
        line(user_id="alice", content="alice private", target="user"),
        line(user_id="bob", content="bob private", target="user"),
        line(user_id="bob", content="bob shared", shared=True),
        line(user_id=None, content="operator note"),
        line(user_id=None, content="profile of a home without users", target="user"),
        line(user_id="bob", content="bob's own notes", target="memory", shared=False),
    )
    _, out, _ = cli(capsys, tmp_path, "memory", "audit", "--json", "--user", "alice")
    assert [x["content"] for x in json.loads(out)["lines"]] == [
        "alice private",
        "bob shared",
        "operator note",
    ]
    _, out, _ = cli(capsys, tmp_path, "memory", "audit", "--json")
    assert len(json.loads(out)["lines"]) == 6  # the operator, without --user, sees every line


def test_control_characters_in_a_line_are_printed_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plant(tmp_path, line(content="hid\x1b[8mden\u202e", actor="cli:\x1b]52;c;x\x07"))
    code, out, _ = cli(capsys, tmp_path, "memory", "audit")
    assert code == 0 and "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert "\\x1b[8m" in out
    _, out, _ = cli(capsys, tmp_path, "memory", "audit", "--json")
    assert "\x1b" not in out and "\u202e" not in out
    assert json.loads(out)["lines"][0]["content"] == "hid\x1b[8mden\u202e"


def test_unreadable_lines_are_reported_and_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plant(tmp_path, line(content="good"), raw='{"v": 1, "event": "landed"\n[1, 2]\n\xff\n')
    code, out, err = cli(capsys, tmp_path, "memory", "audit", "--json")
    assert code == 0 and [x["content"] for x in json.loads(out)["lines"]] == ["good"]
    assert "line 2: not JSON; skipped" in err and "line 3: not a JSON object" in err
    assert err.count("skipped") == 3


def test_entries_joins_current_entries_to_their_last_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, tmp_path, "memory", "add", "The project uses uv")[0] == 0
    memory_md = tmp_path / "memories" / "MEMORY.md"
    memory_md.write_text(memory_md.read_text() + "\n§\nwritten by hand\n")
    code, out, _ = cli(capsys, tmp_path, "memory", "audit", "--entries")
    assert code == 0
    header, uv, by_hand = out.splitlines()
    assert header.split() == ["file", "entry", "time", "event", "actor", "source"]
    assert "The project uses uv" in uv and "landed" in uv and cli_actor() in uv
    assert "written by hand" in by_hand and "unknown (before audit / hand-edited)" in by_hand
    code, out, _ = cli(capsys, tmp_path, "memory", "audit", "--entries", "--json")
    rows = json.loads(out)["entries"]
    assert rows[0]["last"]["entry_sha256"] == entry_sha256("The project uses uv")
    assert rows[1]["last"] is None


def test_skills_audit_lists_lines_and_current_skills(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plant(
        tmp_path,
        line(store="skills", name="lint", content="Run make lint", target=None),
        store="skills",
    )
    folder = tmp_path / "skills" / "deploy"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: deploy\ndescription: Deploy it.\n---\nGo.\n")
    (tmp_path / "skills" / "lint").mkdir()
    (tmp_path / "skills" / "lint" / "SKILL.md").write_text(
        "---\nname: lint\ndescription: Lint it.\n---\nRun make lint\n"
    )
    code, out, _ = cli(capsys, tmp_path, "skills", "audit")
    assert code == 0 and "lint" in out.splitlines()[1] and "Run make lint" in out
    code, out, _ = cli(capsys, tmp_path, "skills", "audit", "--entries")
    _, deploy, lint = out.splitlines()
    assert "unknown (before audit / hand-edited)" in deploy and "landed" in lint
