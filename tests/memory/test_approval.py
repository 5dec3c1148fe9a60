"""Write approval: allow, stage (records, approve, reject, re-validation), block, and
background review's proposals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memory_support import toy_scanner

from hermes_core.memory import MemoryStore
from hermes_core.memory.approval import MemoryWriter, PendingWrites, WriteRequest


def writer(memdir: Path, tmp_path: Path, mode: str, user_id: str | None = None) -> MemoryWriter:
    store = MemoryStore(memdir, scanner=toy_scanner, user_id=user_id)

    def store_for(other: str | None) -> MemoryStore:
        return MemoryStore(memdir, scanner=toy_scanner, user_id=other)

    pending = PendingWrites(tmp_path / "pending" / "memory", clock=lambda: 1_700_000_000.0)
    return MemoryWriter(store, pending, mode=mode, store_for=store_for)


def add(content: str, target: str = "memory") -> WriteRequest:
    return WriteRequest("add", target, content)


def test_stage_records_every_write_and_approval_applies_it(memdir: Path, tmp_path: Path) -> None:
    w = writer(memdir, tmp_path, "stage", user_id="alice")
    result = w.write(add("prefers short answers", "user"))
    assert result["success"] and result["staged"] is True
    pending_id = result["pending_id"]
    assert len(pending_id) == 8 and int(pending_id, 16) >= 0
    assert not w.store.path("user").exists()  # nothing written yet
    record = json.loads((tmp_path / "pending" / "memory" / f"{pending_id}.json").read_text())
    assert record == {
        "id": pending_id,
        "action": "add",
        "target": "user",
        "origin": "assistant_tool",
        "created": 1_700_000_000.0,
        "content": "prefers short answers",
        "old_text": None,
        "selected": None,
        "operations": [],
        "user_id": "alice",
        "shared": False,
        "format": 2,
        "provenance": {  # no session context: a write from library code
            "source": "unknown",
            "sources": [],
            "backed_by": "none",
            "session_id": None,
            "user_id": None,
            "written_at": 1_700_000_000.0,
            "decided": "staged",
            "policy": "stage",
        },
    }
    approved = w.approve(pending_id)
    assert approved["success"] and w.store.entries("user") == ["prefers short answers"]
    assert w.pending.all() == ([], [])


def test_a_staged_replace_records_the_entry_it_selected(memdir: Path, tmp_path: Path) -> None:
    allow = writer(memdir, tmp_path, "allow")
    allow.write(add("uses tabs"))
    w = writer(memdir, tmp_path, "stage")
    staged = w.write(WriteRequest("replace", "memory", "uses spaces", "tabs"))
    record = w.pending.get(staged["pending_id"])
    assert record.selected == "uses tabs" and record.old_text == "tabs"
    assert w.approve(record.id)["applied"] == [
        {"action": "replace", "replaced": "uses tabs", "content": "uses spaces"}
    ]
    assert w.store.entries("memory") == ["uses spaces"]


def test_approval_refuses_when_the_entry_changed_since(memdir: Path, tmp_path: Path) -> None:
    allow = writer(memdir, tmp_path, "allow")
    allow.write(add("deploy on Fridays"))
    w = writer(memdir, tmp_path, "stage")
    staged = w.write(WriteRequest("remove", "memory", old_text="Fridays"))
    allow.write(WriteRequest("replace", "memory", "deploy on Fridays after 2pm", "Fridays"))
    result = w.approve(staged["pending_id"])
    assert result["reason"] == "changed" and "since it was staged" in result["error"]
    assert w.store.entries("memory") == ["deploy on Fridays after 2pm"]
    assert w.pending.get(staged["pending_id"])  # kept, for the person to reject


def test_approval_scans_again(memdir: Path, tmp_path: Path) -> None:
    w = writer(memdir, tmp_path, "stage")
    staged = w.write(add("harmless"))
    path = tmp_path / "pending" / "memory" / f"{staged['pending_id']}.json"
    record = json.loads(path.read_text())
    record["content"] = "now EVIL"  # edited on disk while waiting
    path.write_text(json.dumps(record))
    assert w.approve(staged["pending_id"])["reason"] == "threat"
    assert not w.store.path("memory").exists()


def test_staging_refuses_what_would_be_refused_anyway(memdir: Path, tmp_path: Path) -> None:
    w = writer(memdir, tmp_path, "stage")
    assert w.write(add("EVIL"))["reason"] == "threat"
    assert w.write(WriteRequest("remove", "memory", old_text="nothing"))["reason"] == "no_match"
    assert w.write(add("x", target="diary"))["reason"] == "invalid"
    assert w.pending.all() == ([], [])


def test_reject_drops_and_ids_are_validated(memdir: Path, tmp_path: Path) -> None:
    w = writer(memdir, tmp_path, "stage")
    staged = w.write(add("maybe"))
    assert w.reject(staged["pending_id"])["success"]
    with pytest.raises(KeyError, match="no pending write"):
        w.reject(staged["pending_id"])
    for bad in ("../../etc/passwd", "ABCDEF12", "1234567", "", "all"):
        with pytest.raises(KeyError, match="8 hex digits"):
            w.approve(bad)


def test_an_unreadable_record_is_reported_not_fatal(memdir: Path, tmp_path: Path) -> None:
    w = writer(memdir, tmp_path, "stage")
    good = w.write(add("fine"))["pending_id"]
    (tmp_path / "pending" / "memory" / "0badf00d.json").write_text("{not json")
    records, broken = w.pending.all()
    assert [r.id for r in records] == [good] and broken == ["0badf00d"]
    with pytest.raises(KeyError, match="cannot be read"):
        w.approve("0badf00d")


def test_block_mode_refuses_every_write(memdir: Path, tmp_path: Path) -> None:
    w = writer(memdir, tmp_path, "block")
    result = w.write(add("anything"))
    assert result["reason"] == "read_only" and "read-only" in result["error"]
    assert not w.store.path("memory").exists()


def test_background_review_adds_but_only_proposes_replace_and_remove(
    memdir: Path, tmp_path: Path
) -> None:
    w = writer(memdir, tmp_path, "allow")
    assert w.write(add("learned: tests need docker"), "background_review").get("staged") is None
    proposal = w.write(
        WriteRequest("replace", "memory", "tests need podman", "docker"), "background_review"
    )
    assert proposal["staged"] is True
    assert w.store.entries("memory") == ["learned: tests need docker"]
    assert w.pending.get(proposal["pending_id"]).origin == "background_review"


def test_a_staged_batch_keeps_its_selection(memdir: Path, tmp_path: Path) -> None:
    allow = writer(memdir, tmp_path, "allow")
    allow.write(add("one"))
    allow.write(add("two"))
    w = writer(memdir, tmp_path, "stage")
    ops = (
        {"action": "remove", "old_text": "one"},
        {"action": "replace", "old_text": "tw", "content": "2"},
        {"action": "add", "content": "three"},
    )
    staged = w.write(WriteRequest("batch", "memory", operations=ops))
    record = w.pending.get(staged["pending_id"])
    assert [op["selected"] for op in record.operations] == ["one", "two", None]
    assert w.approve(record.id)["success"]
    assert w.store.entries("memory") == ["2", "three"]


def test_approval_targets_the_staging_users_file(memdir: Path, tmp_path: Path) -> None:
    alice = writer(memdir, tmp_path, "stage", user_id="alice")
    staged = alice.write(add("alice likes tea", "user"))
    operator = writer(memdir, tmp_path, "stage")  # the CLI, without --user
    assert operator.approve(staged["pending_id"])["success"]
    assert MemoryStore(memdir, scanner=toy_scanner, user_id="alice").entries("user") == [
        "alice likes tea"
    ]
    assert MemoryStore(memdir, scanner=toy_scanner).entries("user") == []


def test_unknown_mode_is_refused(memdir: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="allow, stage or block"):
        writer(memdir, tmp_path, "maybe")


@pytest.mark.parametrize(
    "change",
    [{"target": "../../etc"}, {"action": "chmod"}, {"id": "00000000"}, {"operations": "x"}],
)
def test_a_tampered_record_is_refused_whole(
    memdir: Path, tmp_path: Path, change: dict[str, str]
) -> None:
    w = writer(memdir, tmp_path, "stage")
    pending_id = w.write(add("fine"))["pending_id"]
    path = tmp_path / "pending" / "memory" / f"{pending_id}.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **change}))
    with pytest.raises(KeyError, match="cannot be read"):
        w.approve(pending_id)
    assert not w.store.path("memory").exists()


def test_background_review_only_proposes_writes_to_a_file_other_users_share(
    memdir: Path, tmp_path: Path
) -> None:
    store = MemoryStore(memdir, user_id="alice")  # MEMORY.md is shared, USER.md is alice's
    w = MemoryWriter(store, PendingWrites(tmp_path / "pending"))
    shared = w.write(WriteRequest("add", "memory", "alice lives at 12 Elm St"), "background_review")
    assert shared.get("staged") is True and store.entries("memory") == []
    own = WriteRequest("add", "user", "prefers short answers")
    assert w.write(own, "background_review").get("staged") is None
    assert store.entries("user") == ["prefers short answers"]
    asked = w.write(WriteRequest("add", "memory", "tests need docker"), "assistant_tool")
    assert asked.get("staged") is None  # the model in conversation was asked to: it lands
