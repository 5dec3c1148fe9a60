"""One memory conformance set, run against both backends: the home's files and PostgreSQL rows.

The store decides every write (limits, scans, matching, drift, approval) and the documents
keep the text, so each backend must give the same answers and keep the same text. Each test
gets a fresh backend: a temporary home, or a fresh database on the real server (skipped
without one, failed with ``HERMES_POSTGRES_REQUIRED=1``). "By other means" is an editor
for files and an operator's ``UPDATE`` for rows.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pg import fresh_database

from hermes_core.memory import MemoryStore
from hermes_core.memory.approval import MemoryWriter, WriteRequest
from hermes_core.memory.documents import MemoryDocuments
from hermes_core.memory.file_documents import FileMemoryDocuments
from hermes_core.types import Finding

BLOCKED = "Blocked: content matches threat pattern 'toy_evil'."


def toy_scanner(text: str) -> list[Finding]:
    """Flags the word EVIL, so the store's rules are tested apart from the real patterns."""
    return [Finding("toy_evil", "override", "toy")] if "EVIL" in text else []


@dataclass
class Backend:
    """Documents plus what a test needs to act as someone else: ``plant`` stores text by
    other means, ``copies`` lists the texts of the copies kept (drift, reset)."""

    name: str
    documents: MemoryDocuments
    plant: Callable[[str, str | None, str], None]
    copies: Callable[[str, str | None], list[str]]

    def store(self, **options: Any) -> MemoryStore:
        return MemoryStore(self.documents, scanner=toy_scanner, **options)

    def writer(self, mode: str = "allow", **options: Any) -> MemoryWriter:
        def store_for(user: str | None) -> MemoryStore:
            return self.store(**{**options, "user_id": user})

        return MemoryWriter(self.store(**options), mode=mode, store_for=store_for)


def _files(home: Path) -> Backend:
    docs = FileMemoryDocuments.for_home(home)

    def plant(target: str, scope: str | None, text: str) -> None:
        path = docs.path(target, scope)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def copies(target: str, scope: str | None) -> list[str]:
        path = docs.path(target, scope)
        found = sorted(path.parent.glob(f"{path.name}.bak.*"))
        return [p.read_text(encoding="utf-8") for p in found]

    return Backend("files", docs, plant, copies)


@contextlib.contextmanager
def _postgres() -> Iterator[Backend]:
    psycopg = pytest.importorskip("psycopg")
    from hermes_plugins.postgres.database import Database
    from hermes_plugins.postgres.memory import PostgresMemoryDocuments

    with fresh_database() as dsn:
        docs = PostgresMemoryDocuments(Database(dsn, pool_size=2))

        def plant(target: str, scope: str | None, text: str) -> None:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(
                    "INSERT INTO hermes.memory_blocks (scope, target, text) VALUES (%s, %s, %s) "
                    "ON CONFLICT (scope, target) DO UPDATE SET text = excluded.text",
                    (scope or "", target, text),
                )

        def copies(target: str, scope: str | None) -> list[str]:
            with psycopg.connect(dsn, autocommit=True) as conn:
                rows = conn.execute(
                    "SELECT text FROM hermes.memory_history WHERE scope = %s AND target = %s "
                    "ORDER BY id",
                    (scope or "", target),
                ).fetchall()
            return [row[0] for row in rows]

        try:
            yield Backend("postgres", docs, plant, copies)
        finally:
            docs.close()


@pytest.fixture(params=["files", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "files":
        yield _files(tmp_path / "home")
    else:
        with _postgres() as pg:
            yield pg


def fill(store: MemoryStore, *entries: str, target: str = "memory") -> None:
    for entry in entries:
        assert store.add(target, entry)["success"], entry


# --- add, replace, remove, batch ----------------------------------------------------------


def test_add_keeps_the_seed_format_and_a_duplicate_writes_nothing(backend: Backend) -> None:
    store = backend.store()
    assert store.add("memory", "  uses uv, not pip  ") == {
        "success": True,
        "done": True,
        "message": "Entry added.",
        "usage": "0% — 16/2,200 chars",
    }
    fill(store, "tests take\ntwo minutes")
    assert store.raw("memory") == "uses uv, not pip\n§\ntests take\ntwo minutes"
    again = store.add("memory", "uses uv, not pip")
    assert again["success"] and "already exists" in again["message"]
    assert store.entries("memory") == ["uses uv, not pip", "tests take\ntwo minutes"]


def test_replace_and_remove_pick_one_entry_or_refuse_changing_nothing(backend: Backend) -> None:
    store = backend.store()
    fill(store, "prefers tabs over spaces", "tabs", "runs pytest -q", "runs pytest with coverage")
    replaced = store.replace("memory", "tabs", "uses 4 spaces")
    assert replaced["success"] and replaced["replaced"] == "tabs"  # the exact entry wins
    before = store.raw("memory")
    multiple = store.remove("memory", "pytest")
    assert multiple["reason"] == "multiple" and len(multiple["matches"]) == 2
    missing = store.remove("memory", "coffee")
    assert missing["reason"] == "no_match" and "uses 4 spaces" in missing["entries"]
    assert store.raw("memory") == before
    removed = store.remove("memory", "coverage")
    assert removed["success"] and removed["removed"] == "runs pytest with coverage"
    assert store.entries("memory") == [
        "prefers tabs over spaces",
        "uses 4 spaces",
        "runs pytest -q",
    ]


def test_batch_is_all_or_nothing(backend: Backend) -> None:
    store = backend.store()
    fill(store, "old fact", "stale")
    before = store.raw("memory")
    bad = store.batch(
        "memory",
        [
            {"action": "replace", "old_text": "old fact", "content": "new fact"},
            {"action": "remove", "old_text": "missing"},
        ],
    )
    assert bad["success"] is False and bad["error"].startswith("operation 2:")
    assert store.raw("memory") == before
    good = store.batch(
        "memory",
        [
            {"action": "replace", "old_text": "old fact", "content": "new fact"},
            {"action": "remove", "old_text": "stale"},
            {"action": "add", "content": "another"},
        ],
    )
    assert good["success"] and len(good["applied"]) == 3
    assert store.entries("memory") == ["new fact", "another"]


# --- limits and threats -------------------------------------------------------------------


def test_limits_refuse_growth_list_the_entries_and_never_block_shrinking(
    backend: Backend,
) -> None:
    store = backend.store(memory_char_limit=60)
    fill(store, "alpha " * 4, "beta " * 4)
    before = store.raw("memory")
    over = store.add("memory", "gamma " * 6)
    assert over["reason"] == "over_limit" and over["usage"] == "75% — 45/60 chars"
    assert over["entries"] == ["alpha alpha alpha alpha", "beta beta beta beta"]
    assert store.raw("memory") == before
    lowered = backend.store(memory_char_limit=10)  # now over the limit: shrinking still works
    assert lowered.remove("memory", "beta")["success"]
    assert lowered.entries("memory") == ["alpha alpha alpha alpha"]


def test_every_content_is_scanned_before_anything_is_stored(backend: Backend) -> None:
    store = backend.store()
    fill(store, "keep me")
    before = store.raw("memory")
    for result in (
        store.add("memory", "an EVIL plan"),
        store.replace("memory", "keep", "EVIL"),
        store.batch(
            "memory",
            [{"action": "remove", "old_text": "keep"}, {"action": "add", "content": "EVIL"}],
        ),
    ):
        assert result["reason"] == "threat" and BLOCKED in result["error"]
    assert store.raw("memory") == before
    assert store.add("user", "x\n§\ny")["reason"] == "invalid"
    assert store.add("user", "bell \x07 here")["reason"] == "invalid"
    assert store.raw("user") == ""


def test_a_planted_entry_is_blocked_in_the_snapshot_and_kept_raw(backend: Backend) -> None:
    backend.plant("memory", None, "fine\n§\nan EVIL plan")
    store = backend.store()
    snapshot = store.snapshot()
    assert "fine" in snapshot and "EVIL" not in snapshot and "[BLOCKED: MEMORY.md entry" in snapshot
    assert "an EVIL plan" in store.raw("memory")
    shown = store.remove("memory", "nothing like it")["entries"]
    assert store.remove("memory", shown[1])["success"]  # removed by its placeholder
    assert store.entries("memory") == ["fine"]


# --- drift --------------------------------------------------------------------------------


def test_drift_refuses_rewrites_keeps_one_copy_and_add_keeps_the_foreign_text(
    backend: Backend,
) -> None:
    store = backend.store(user_id="alice")
    fill(store, "one", "two", target="user")
    drifted = "one\n§\ntwo\n\nappended by other means\n\n"
    backend.plant("user", "alice", drifted)
    for result in (
        store.replace("user", "one", "uno"),
        store.remove("user", "two"),
        store.batch("user", [{"action": "remove", "old_text": "one"}]),
    ):
        assert result["reason"] == "drift" and "edited outside" in result["error"]
        assert "A copy is in" in result["error"]
    assert store.raw("user") == drifted
    assert backend.copies("user", "alice") == [drifted]  # one copy a minute
    assert store.add("user", "three")["success"]
    assert store.raw("user") == drifted.rstrip("\n") + "\n§\nthree"


def test_a_trailing_newline_is_not_drift(backend: Backend) -> None:
    backend.plant("memory", None, "one\n§\ntwo\n")
    store = backend.store()
    assert store.remove("memory", "one")["success"]
    assert store.raw("memory") == "two"


# --- users --------------------------------------------------------------------------------


def test_each_user_reads_only_their_own_profile(backend: Backend) -> None:
    alice, bob = backend.store(user_id="alice"), backend.store(user_id="bob")
    fill(alice, "alice is vegetarian", target="user")
    fill(bob, "bob prefers rust", target="user")
    fill(alice, "the build uses make")  # MEMORY.md: shared by the home's users
    assert bob.entries("user") == ["bob prefers rust"]
    assert "vegetarian" not in bob.snapshot() and "the build uses make" in bob.snapshot()
    assert bob.remove("user", "vegetarian")["reason"] == "no_match"
    assert backend.store().entries("user") == []  # the single-user profile is another one
    own = backend.store(user_id="alice", per_user_memory=True)
    assert own.entries("memory") == []  # per_user_memory: a MEMORY.md of alice's own
    fill(own, "alice's own note")
    assert bob.entries("memory") == ["the build uses make"]


# --- reset --------------------------------------------------------------------------------


def test_reset_keeps_a_copy_then_deletes_and_refuses_shared_text(backend: Backend) -> None:
    shared = backend.store()
    fill(shared, "everyone's fact")
    bob = backend.store(user_id="bob")
    fill(bob, "bob's profile", target="user")
    refused = bob.reset("memory")
    assert refused["reason"] == "shared" and "Nothing was deleted" in refused["error"]
    assert shared.entries("memory") == ["everyone's fact"]
    done = bob.reset("user")
    assert done["success"] and done["copy"]
    assert bob.entries("user") == [] and backend.copies("user", "bob") == ["bob's profile"]
    assert "does not exist" in bob.reset("user")["message"]
    assert shared.reset("memory")["success"] and shared.entries("memory") == []
    own = backend.store(user_id="bob", per_user_memory=True)
    fill(own, "bob's own note")
    assert own.reset("memory")["success"] and backend.copies("memory", "bob") == ["bob's own note"]


# --- approval -----------------------------------------------------------------------------


def test_staged_writes_wait_and_approval_applies_each_once(backend: Backend) -> None:
    stage = backend.writer("stage", user_id="alice")
    staged = stage.write(WriteRequest("add", "user", "prefers short answers"))
    assert staged["staged"] is True and len(staged["pending_id"]) == 8
    assert stage.store.entries("user") == []
    records, broken = stage.pending.all()
    assert [r.id for r in records] == [staged["pending_id"]] and broken == []
    assert records[0].user_id == "alice" and records[0].origin == "assistant_tool"
    operator = backend.writer("stage")  # the command line, without --user
    applied = operator.approve(staged["pending_id"])
    assert applied["success"] and "applied" in applied["message"]
    assert stage.store.entries("user") == ["prefers short answers"]
    assert backend.store().entries("user") == []  # it went to alice's profile only
    with pytest.raises(KeyError, match="no pending write"):
        operator.approve(staged["pending_id"])
    assert stage.pending.all() == ([], [])


def test_an_approval_is_judged_again_and_refused_when_its_entry_changed(
    backend: Backend,
) -> None:
    allow, stage = backend.writer("allow"), backend.writer("stage")
    allow.write(WriteRequest("add", "memory", "deploy on Fridays"))
    staged = stage.write(WriteRequest("remove", "memory", old_text="Fridays"))
    record = stage.pending.get(staged["pending_id"])
    assert record.selected == "deploy on Fridays"
    allow.write(WriteRequest("replace", "memory", "deploy on Fridays after 2pm", "Fridays"))
    changed = stage.approve(record.id)
    assert changed["reason"] == "changed" and "since it was staged" in changed["error"]
    assert stage.store.entries("memory") == ["deploy on Fridays after 2pm"]
    assert stage.pending.get(record.id) == record  # kept, for a person to reject
    assert stage.reject(record.id)["success"] and stage.pending.all() == ([], [])
    with pytest.raises(KeyError, match="no pending write"):
        stage.reject(record.id)


def test_staging_refuses_what_would_be_refused_and_block_refuses_all(backend: Backend) -> None:
    stage = backend.writer("stage")
    assert stage.write(WriteRequest("add", "memory", "EVIL"))["reason"] == "threat"
    assert stage.write(WriteRequest("remove", "memory", old_text="x"))["reason"] == "no_match"
    assert stage.pending.all() == ([], [])
    blocked = backend.writer("block").write(WriteRequest("add", "memory", "anything"))
    assert blocked["reason"] == "read_only" and backend.store().raw("memory") == ""


def test_background_review_only_proposes_what_nobody_asked_for(backend: Backend) -> None:
    writer = backend.writer("allow", user_id="alice")
    own = writer.write(WriteRequest("add", "user", "likes tea"), "background_review")
    assert own.get("staged") is None and writer.store.entries("user") == ["likes tea"]
    shared = writer.write(WriteRequest("add", "memory", "alice's address"), "background_review")
    assert shared["staged"] is True and writer.store.entries("memory") == []
    proposal = writer.write(
        WriteRequest("replace", "user", "likes green tea", "tea"), "background_review"
    )
    assert proposal["staged"] is True and writer.store.entries("user") == ["likes tea"]
    assert writer.pending.get(proposal["pending_id"]).origin == "background_review"
    assert writer.approve(proposal["pending_id"])["success"]
    assert writer.store.entries("user") == ["likes green tea"]


def test_approval_writes_to_the_scope_it_was_staged_for(pg_dsn: str, tmp_path: Path) -> None:
    """Review finding: home A keeps MEMORY.md per user and stages alice's write; home B, on
    the same database but with MEMORY.md shared, must not approve it into the shared block."""
    from hermes_core import Hermes
    from hermes_core.memory.approval import WriteRequest
    from hermes_core.memory.home import open_store, open_writer

    def host(name: str, per_user: bool) -> Hermes:
        memory = {"backend": "postgres", "write_approval": "stage", "per_user_memory": per_user}
        config = {"sessions": {"backend": "postgres", "dsn": pg_dsn}, "memory": memory}
        return Hermes.from_config(config, home=tmp_path / name)

    with host("a", True) as a, host("b", False) as b:
        staging = open_writer(a.home, a.settings, user_id="alice", documents=a.memory_documents())
        staged = staging.write(WriteRequest("add", "memory", "alice banks with Acme"))
        approver = open_writer(b.home, b.settings, user_id=None, documents=b.memory_documents())
        refused = approver.approve(staged["pending_id"])
        assert refused["success"] is False and refused["reason"] == "scope"
        bob = open_store(b.home, b.settings, user_id="bob", documents=b.memory_documents())
        assert bob.entries("memory") == []
        applied = staging.approve(staged["pending_id"])  # where the setting matches
        assert applied["success"]
        alice = open_store(a.home, a.settings, user_id="alice", documents=a.memory_documents())
        assert alice.entries("memory") == ["alice banks with Acme"]
        assert bob.entries("memory") == []
