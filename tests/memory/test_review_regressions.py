"""Defects a reviewer reproduced against the first version of the store, each fixed."""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from memory_support import toy_scanner

from hermes_core.cli import main
from hermes_core.memory import MemoryStore
from hermes_core.memory.approval import MemoryWriter, PendingWrites, WriteRequest
from hermes_core.memory.entries import round_trips
from hermes_core.memory.files import backup_copy
from hermes_core.memory.tool import MemoryTool


def staged_writer(memdir: Path, tmp_path: Path, **limits: int) -> MemoryWriter:
    store = MemoryStore(memdir, scanner=toy_scanner, **limits)
    return MemoryWriter(store, PendingWrites(tmp_path / "pending"), mode="stage")


def test_every_kind_of_line_end_is_stored_so_the_file_round_trips(store: MemoryStore) -> None:
    assert store.add("memory", "x\r\r\nsecond line\rthird")["success"]
    assert store.entries("memory") == ["x\n\nsecond line\nthird"]
    assert round_trips(store.raw("memory"))
    refused = store.add("memory", "a\r\r\n§\r\r\nb")
    assert refused["reason"] == "invalid" and "§" in refused["error"]
    assert store.remove("memory", "second line")["success"]  # no drift was left behind


@pytest.mark.parametrize("text", ["fact A\n§ \nfact B", "fact A\n  §\nfact B", "a\n§"])
def test_a_separator_typed_with_spaces_or_at_the_end_is_drift(
    store: MemoryStore, text: str
) -> None:
    store.path("memory").parent.mkdir(parents=True)
    store.path("memory").write_text(text, encoding="utf-8")
    assert store.remove("memory", "fact A" if "fact" in text else "a")["reason"] == "drift"
    assert store.path("memory").read_text(encoding="utf-8") == text
    assert store.add("memory", "x\n § \ny")["reason"] == "invalid"


def test_lone_surrogates_are_refused_not_raised(memdir: Path, tmp_path: Path) -> None:
    store = MemoryStore(memdir, scanner=toy_scanner)
    assert store.add("memory", "a\ud800")["reason"] == "invalid"
    assert store.batch("memory", [{"action": "add", "content": "\udfff"}])["reason"] == "invalid"
    staged = staged_writer(memdir, tmp_path).write(WriteRequest("add", "memory", "b\ud800"))
    assert staged["reason"] == "invalid"


@pytest.mark.parametrize(
    "target", [[], {}, 10**5000, b"memory", 1.5], ids=["list", "dict", "huge", "bytes", "float"]
)
def test_odd_targets_and_actions_are_errors(store: MemoryStore, target: Any) -> None:
    assert store.add(target, "x")["reason"] == "invalid"
    assert store.remove(target, "x")["reason"] == "invalid"
    assert store.check(target, []) is not None
    result = store.batch("memory", [{"action": target, "content": "x"}])
    assert result["reason"] == "invalid" and len(result["error"]) < 200


def test_the_tool_survives_a_giant_integer(memdir: Path, tmp_path: Path) -> None:
    store = MemoryStore(memdir, scanner=toy_scanner)
    tool = MemoryTool(MemoryWriter(store, PendingWrites(tmp_path)))
    answer = json.loads(tool.handle('{"target": "memory", "action": ' + "9" * 5000 + "}"))
    assert answer["success"] is False and "plain JSON object" in answer["error"]


def test_misquoted_old_text_also_ends_the_turns_retries(memdir: Path, tmp_path: Path) -> None:
    store = MemoryStore(memdir, scanner=toy_scanner)
    tool = MemoryTool(MemoryWriter(store, PendingWrites(tmp_path)))
    misquote = {"action": "replace", "target": "memory", "old_text": "nope", "content": "q"}
    answers = [json.loads(tool.handle(misquote)) for _ in range(4)]
    assert [a.get("reason") for a in answers[:2]] == ["no_match", "no_match"]
    assert all("Stop retrying" in a["error"] for a in answers[2:])


def test_staging_judges_a_write_as_applying_it_would(memdir: Path, tmp_path: Path) -> None:
    w = staged_writer(memdir, tmp_path, memory_char_limit=30)
    w.store.path("memory").parent.mkdir(parents=True)
    w.store.path("memory").write_text("fine\n§\nan EVIL plan", encoding="utf-8")
    placeholder = w.store.remove("memory", "missing")["entries"][1]
    assert w.write(WriteRequest("remove", "memory", old_text=placeholder))["staged"]
    ops = (
        {"action": "add", "content": "gamma"},
        {"action": "replace", "old_text": "gamma", "content": "delta"},
    )
    assert w.write(WriteRequest("batch", "memory", operations=ops))["staged"]
    assert w.write(WriteRequest("add", "memory", "y" * 40))["reason"] == "over_limit"
    duplicate = w.write(WriteRequest("add", "memory", "fine"))
    assert duplicate["success"] and "staged" not in duplicate  # nothing to review
    multiple = w.write(WriteRequest("remove", "memory", old_text="n"))
    assert multiple["reason"] == "multiple" and multiple["matches"]


def test_staging_refuses_a_drifted_file(memdir: Path, tmp_path: Path) -> None:
    w = staged_writer(memdir, tmp_path)
    w.store.path("memory").parent.mkdir(parents=True)
    w.store.path("memory").write_text("a\n§\nb\n\n\n", encoding="utf-8")
    assert w.write(WriteRequest("remove", "memory", old_text="a"))["reason"] == "drift"


def test_approval_only_ever_hits_the_exact_entry_it_selected(memdir: Path, tmp_path: Path) -> None:
    w = staged_writer(memdir, tmp_path)
    w.store.add("memory", "deploy on Fridays")
    staged = w.write(WriteRequest("remove", "memory", old_text="Fridays"))
    w.store.replace("memory", "Fridays", "deploy on Fridays at 2pm")  # contains the old text
    result = w.approve(staged["pending_id"])
    assert result["reason"] == "changed"
    assert w.store.entries("memory") == ["deploy on Fridays at 2pm"]


def test_a_file_over_a_lowered_limit_can_still_shrink(memdir: Path) -> None:
    MemoryStore(memdir, scanner=toy_scanner).add("memory", "z" * 100)
    small = MemoryStore(memdir, memory_char_limit=40, scanner=toy_scanner)
    assert small.replace("memory", "zzz", "short")["success"]
    assert small.add("memory", "x" * 40)["reason"] == "over_limit"


def test_one_unreadable_file_does_not_blank_the_other_block(store: MemoryStore) -> None:
    store.add("user", "likes tea")
    store.path("memory").write_bytes(b"\xff broken")
    snapshot = store.snapshot()
    assert "likes tea" in snapshot and "MEMORY (your" not in snapshot


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_symlinked_file_inside_the_home_is_written_through(store: MemoryStore) -> None:
    real = store.directory / "dotfiles" / "MEMORY.md"
    real.parent.mkdir(parents=True)
    real.write_text("kept", encoding="utf-8")
    store.path("memory").symlink_to(real)
    assert store.add("memory", "added")["success"]
    assert store.path("memory").is_symlink()
    assert real.read_text(encoding="utf-8") == "kept\n§\nadded\n"


def test_a_backup_from_the_future_does_not_stop_backups(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("x", encoding="utf-8")
    now = time.time()
    (tmp_path / f"MEMORY.md.bak.{int(now) + 10_000}").write_text("old", encoding="utf-8")
    copy = backup_copy(path, now)
    assert copy is not None and copy.name == f"MEMORY.md.bak.{int(now)}"


@pytest.mark.usefixtures("isolated_home")
def test_cli_bad_user_bad_stdin_and_tampered_records(
    capsys: pytest.CaptureFixture[str], isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["memory", "add", "--user", "", "x"]) == 2
    assert "user id" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"x\xff")))
    assert main(["memory", "add", "-"]) == 1
    assert "not UTF-8" in capsys.readouterr().err
    pending = isolated_home / "pending" / "memory"
    pending.mkdir(parents=True)
    (pending / "0badf00d.json").write_text(
        json.dumps(
            {
                "id": "0badf00d",
                "action": "add",
                "target": "memory",
                "origin": "cli",
                "created": "yesterday",
                "content": "x",
            }
        )
    )
    assert main(["memory", "pending"]) == 0
    err = capsys.readouterr().err
    assert "0badf00d cannot be read" in err and "Traceback" not in err
    assert main(["memory", "approve", "0badf00d"]) == 1
    assert "cannot be read" in capsys.readouterr().err
