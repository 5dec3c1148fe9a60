"""Issue 28 item 2 on the command line: ``memory consolidate`` and ``skills consolidate`` show
the plan with ``--dry-run`` and change nothing, follow the approval mode otherwise, keep to
the named user, and print block text escaped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.cli import main

BLOCK = [
    "tabs for indentation",
    "Deploys happen on Fridays after review",
    "User prefers tabs for indentation in Python files",
    "deploy happens friday after the review",
    "User likes dark mode in the editor",
    "User no longer likes dark mode in the editor",
]
#: what stays: a hand-written file has no dates, so the two dark-mode entries, which say
#: opposite things, are shown for a person and both kept
KEPT = [BLOCK[2], BLOCK[3], BLOCK[4], BLOCK[5]]


def _write(path: Path, entries: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n§\n".join(entries), encoding="utf-8")


def test_a_dry_run_prints_the_plan_and_changes_nothing(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memory = isolated_home / "memories" / "MEMORY.md"
    _write(memory, BLOCK)
    before = memory.read_bytes()
    assert main(["memory", "consolidate", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "remove (covered) tabs for indentation" in out
    assert "remove (duplicate) Deploys happen on Fridays after review" in out
    assert "opposite, which is newer is unknown, left for you: User likes dark mode" in out
    assert "(dry run: nothing changed)" in out
    assert memory.read_bytes() == before
    assert not (isolated_home / "pending").exists()


def test_it_lands_under_allow_and_waits_under_stage(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memory = isolated_home / "memories" / "MEMORY.md"
    _write(memory, BLOCK)
    assert main(["memory", "consolidate", "--target", "memory", "--json"]) == 0
    [block] = json.loads(capsys.readouterr().out)["blocks"]
    assert block["result"]["success"] and len(block["steps"]) == 2
    assert memory.read_text(encoding="utf-8").rstrip("\n").split("\n§\n") == KEPT
    _write(memory, BLOCK)
    (isolated_home / "config.yaml").write_text("memory:\n  write_approval: stage\n")
    assert main(["memory", "consolidate", "--json"]) == 0
    blocks = json.loads(capsys.readouterr().out)["blocks"]
    assert blocks[0]["result"]["staged"] is True and blocks[1]["steps"] == []
    assert memory.read_text(encoding="utf-8").split("\n§\n") == BLOCK


def test_it_keeps_to_the_named_user(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alice = isolated_home / "memories" / "users" / "alice" / "USER.md"
    bob = isolated_home / "memories" / "users" / "bob" / "USER.md"
    _write(alice, BLOCK)
    _write(bob, BLOCK)
    assert main(["memory", "consolidate", "--user", "alice", "--target", "user"]) == 0
    capsys.readouterr()
    assert alice.read_text(encoding="utf-8").rstrip("\n").split("\n§\n") == KEPT
    assert bob.read_text(encoding="utf-8").split("\n§\n") == BLOCK


def test_block_text_is_printed_escaped(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(
        isolated_home / "memories" / "MEMORY.md",
        ["red \x1b[8mhidden\x1b[0m alert colour", "red alert colour hidden"],
    )
    assert main(["memory", "consolidate", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b" in out


def _skill(home: Path, name: str, description: str, body: str) -> None:
    folder = home / "skills" / name
    folder.mkdir(parents=True)
    text = f"---\nname: {name}\ndescription: {description}\n---\n{body}"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")


def test_skills_consolidate_proposes_the_merge(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _skill(isolated_home, "deploy-app", "Deploy the app to production with docker", "1. build\n")
    _skill(
        isolated_home, "app-deploy", "Deploy the application to production using docker", "1. x\n"
    )
    assert main(["skills", "consolidate", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "merge app-deploy into deploy-app" in out and "(dry run: nothing changed)" in out
    assert sorted(p.name for p in (isolated_home / "skills").iterdir()) == [
        "app-deploy",
        "deploy-app",
    ]
    (isolated_home / "config.yaml").write_text("skills:\n  write_approval: stage\n")
    assert main(["skills", "consolidate"]) == 0
    out = capsys.readouterr().out
    assert "edit: staged as" in out and "delete: once the merged text has landed" in out
    assert len(list((isolated_home / "pending" / "skills").glob("*.json"))) == 1
