"""The storage seam (hermes_core.memory.documents) and its file implementation: what a store
asks of where blocks live, answered by the home's files exactly as before; the host and the
plugin obtain the documents through the ``memory_documents`` hook."""

from __future__ import annotations

import contextlib
import multiprocessing
from pathlib import Path
from typing import Any

import pytest
from memory_support import toy_scanner

from hermes_core.errors import MemoryStoreError
from hermes_core.markers import hookimpl
from hermes_core.memory import MemoryStore
from hermes_core.memory.approval import MemoryWriter, WriteRequest
from hermes_core.memory.documents import (
    Claim,
    Decision,
    MemoryDocuments,
    UnsafeLocation,
    checked_documents,
    scope_of,
)
from hermes_core.memory.file_documents import FileMemoryDocuments
from hermes_core.memory.staged import PendingWrite
from hermes_core.plugins import PluginSpec
from hermes_core.testing import make_host
from hermes_plugins.file_memory import FileMemoryPlugin


@pytest.fixture
def docs(tmp_path: Path) -> FileMemoryDocuments:
    return FileMemoryDocuments.for_home(tmp_path)


def keep(text: str | None) -> Decision[str | None]:
    return Decision(text)


def test_the_file_documents_are_the_protocol_and_the_homes_layout(
    docs: FileMemoryDocuments, tmp_path: Path
) -> None:
    assert isinstance(docs, MemoryDocuments) and docs.kind == "files"
    assert docs.path("memory", None) == tmp_path / "memories" / "MEMORY.md"
    assert docs.path("user", None) == tmp_path / "memories" / "USER.md"
    assert docs.path("user", "alice") == tmp_path / "memories" / "users" / "alice" / "USER.md"
    assert docs.path("memory", "alice") == tmp_path / "memories" / "users" / "alice" / "MEMORY.md"
    assert docs.where("user", "alice") == str(docs.path("user", "alice"))
    assert docs.pending.directory == tmp_path / "pending" / "memory"
    assert docs.read("memory", None) is None


def test_scopes_follow_the_layout() -> None:
    assert scope_of("user", "alice", per_user_memory=False) == "alice"
    assert scope_of("memory", "alice", per_user_memory=False) is None  # shared
    assert scope_of("memory", "alice", per_user_memory=True) == "alice"
    assert scope_of("user", None, per_user_memory=True) is None


def test_update_runs_the_decision_on_the_text_and_stores_what_it_decided(
    docs: FileMemoryDocuments,
) -> None:
    seen: list[str | None] = []

    def append(text: str | None) -> Decision[str]:
        seen.append(text)
        return Decision("answer", (text or "") + "x", succeeded=True)

    first = docs.update("memory", None, append)
    assert first is not None and first.value == "answer" and first.written
    docs.update("memory", None, append)
    # files end the text with a newline (so a shell's appended line starts a line of its own)
    assert seen == [None, "x\n"] and docs.read("memory", None) == "x\nx\n"
    unchanged = docs.update("memory", None, keep)
    assert unchanged is not None and not unchanged.written and unchanged.copy_note == ""
    assert docs.path("memory", None).read_text(encoding="utf-8") == "x\nx\n"


def test_a_drift_copy_is_kept_under_the_lock_at_most_once_a_minute(
    docs: FileMemoryDocuments,
) -> None:
    path = docs.path("user", "bob")
    path.parent.mkdir(parents=True)
    path.write_text("edited by hand\n\n", encoding="utf-8")

    def refuse(text: str | None) -> Decision[str]:
        return Decision("refused", keep_copy=True)

    first = docs.update("user", "bob", refuse)
    second = docs.update("user", "bob", refuse)
    assert first is not None and second is not None
    copies = list(path.parent.glob("USER.md.bak.*"))
    assert len(copies) == 1 and copies[0].read_text(encoding="utf-8") == "edited by hand\n\n"
    assert first.copy_note == second.copy_note == f" A copy is in {copies[0].name}."
    assert path.read_text(encoding="utf-8") == "edited by hand\n\n"


def test_a_claim_is_consumed_with_a_successful_write_and_refused_once_gone(
    docs: FileMemoryDocuments,
) -> None:
    record = PendingWrite("0000abcd", "add", "memory", "cli", 1.0, content="staged")
    docs.pending.add(record)
    claim = Claim(record, docs.pending)
    failed = docs.update("memory", None, lambda text: Decision("no", "not stored"), claim=claim)
    assert failed is not None and failed.written  # a decision that did not succeed...
    assert docs.pending.get("0000abcd") == record  # ...leaves the record staged
    done = docs.update(
        "memory", None, lambda text: Decision("yes", "stored", succeeded=True), claim=claim
    )
    assert done is not None and done.value == "yes"
    assert docs.pending.all() == ([], [])
    again = docs.update(
        "memory", None, lambda text: Decision("twice", "x", succeeded=True), claim=claim
    )
    assert again is None and docs.read("memory", None) == "stored\n"


def test_a_claim_on_a_record_edited_since_it_was_read_is_refused(
    docs: FileMemoryDocuments,
) -> None:
    record = PendingWrite("0000abcd", "add", "memory", "cli", 1.0, content="staged")
    docs.pending.add(record)
    docs.pending.add(PendingWrite("0000abcd", "add", "memory", "cli", 1.0, content="edited"))
    claim = Claim(record, docs.pending)
    assert (
        docs.update("memory", None, lambda t: Decision(1, "x", succeeded=True), claim=claim) is None
    )
    assert docs.read("memory", None) is None


def test_reset_keeps_a_whole_copy_then_deletes(docs: FileMemoryDocuments) -> None:
    assert docs.reset_preview("memory", None) is None and docs.reset("memory", None) is None
    docs.update("memory", None, lambda text: Decision(None, "a note"))
    preview = docs.reset_preview("memory", None)
    assert preview == f"{docs.path('memory', None)} (7 bytes; a .bak copy is kept)"
    removed = docs.reset("memory", None)
    assert removed is not None and removed.copy is not None
    assert Path(removed.copy).read_text(encoding="utf-8") == "a note\n"
    assert docs.read("memory", None) is None


def test_a_link_out_of_the_home_is_an_unsafe_location(
    docs: FileMemoryDocuments, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret", encoding="utf-8")
    docs.directory.mkdir(parents=True)
    docs.path("memory", None).symlink_to(outside)
    for call in (
        lambda: docs.read("memory", None),
        lambda: docs.update("memory", None, keep),
        lambda: docs.reset_preview("memory", None),
        lambda: docs.reset("memory", None),
    ):
        with pytest.raises(UnsafeLocation, match="outside the memory home"):
            call()
    assert outside.read_text(encoding="utf-8") == "secret"


def test_a_store_given_documents_works_as_one_given_a_directory(tmp_path: Path) -> None:
    docs = FileMemoryDocuments(tmp_path / "memories")
    by_docs = MemoryStore(docs, scanner=toy_scanner, user_id="alice")
    by_dir = MemoryStore(tmp_path / "memories", scanner=toy_scanner, user_id="alice")
    assert by_docs.add("user", "likes tea")["success"]
    assert by_dir.entries("user") == ["likes tea"] and by_dir.path("user") == by_docs.path("user")
    assert by_docs.where("user") == str(tmp_path / "memories" / "users" / "alice" / "USER.md")
    writer = MemoryWriter(by_docs, mode="stage")  # staged writes kept with the documents
    staged = writer.write(WriteRequest("add", "user", "staged"))
    assert (tmp_path / "pending" / "memory" / f"{staged['pending_id']}.json").is_file()


def _approve_all(home: str, ids: list[str], results: Any) -> None:
    writer = MemoryWriter(
        MemoryStore(FileMemoryDocuments.for_home(home), scanner=toy_scanner), mode="allow"
    )
    applied = 0
    for pending_id in ids:
        with contextlib.suppress(KeyError):  # consumed by another process before this read it
            applied += bool(writer.approve(pending_id).get("success"))
    results.put(applied)


def test_processes_approving_the_same_staged_writes_apply_each_once(tmp_path: Path) -> None:
    store = MemoryStore(FileMemoryDocuments.for_home(tmp_path), scanner=toy_scanner)
    stage = MemoryWriter(store, mode="stage")
    ids = [stage.write(WriteRequest("add", "memory", f"fact {n}"))["pending_id"] for n in range(6)]
    spawn = multiprocessing.get_context("spawn")
    results = spawn.Queue()
    procs = [
        spawn.Process(target=_approve_all, args=(str(tmp_path), ids, results)) for _ in range(3)
    ]
    for proc in procs:
        proc.start()
    applied = [results.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    assert sum(applied) == 6  # each applied by exactly one of the three
    assert sorted(store.entries("memory")) == [f"fact {n}" for n in range(6)]
    assert stage.pending.all() == ([], [])


# --- through the host ---------------------------------------------------------------------


class _Elsewhere:
    """A plugin that answers memory_documents with something that is not documents."""

    @hookimpl
    def memory_documents(self, home: Path) -> object:
        return {"not": "documents"}


class _Broken:
    @hookimpl
    def memory_documents(self, home: Path) -> object:
        raise RuntimeError("cannot open the vault")


def test_the_host_obtains_the_file_documents_through_the_hook(hermes_home: Path) -> None:
    specs = [PluginSpec("file_memory", FileMemoryPlugin, builtin=True)]
    with make_host(hermes_home, builtins=specs) as host:
        docs = host.memory_documents()
        assert isinstance(docs, FileMemoryDocuments)
        assert docs.directory == hermes_home / "memories"
        other = host.memory_documents(hermes_home / "other")
        assert isinstance(other, FileMemoryDocuments)
        assert other.directory == hermes_home / "other" / "memories"


def test_nobody_answering_is_a_clear_error(hermes_home: Path) -> None:
    host = make_host(hermes_home)  # no file_memory plugin
    with host, pytest.raises(MemoryStoreError, match="no plugin answered memory_documents"):
        host.memory_documents()
    assert not (hermes_home / "memories").exists()  # never the files instead


def test_a_wrong_or_failing_answer_is_refused_with_its_reason(hermes_home: Path) -> None:
    with make_host(hermes_home) as host:
        host.plugins.register(_Elsewhere(), name="elsewhere")
        with pytest.raises(MemoryStoreError, match=r"not a hermes_core\.memory\.documents"):
            host.memory_documents()
    with make_host(hermes_home) as host:
        host.plugins.register(_Broken(), name="broken")
        with pytest.raises(MemoryStoreError, match="cannot open the vault"):
            host.memory_documents()
    with pytest.raises(MemoryStoreError, match="answered a int"):
        checked_documents(3)
