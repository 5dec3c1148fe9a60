"""The memory conformance suite: what every ``MemoryDocuments`` backend must do.

The store decides every write (limits, threat scans, matching, drift, approval) and the
documents keep the text (:mod:`hermes_core.memory.documents`), so a backend (the home's files,
the PostgreSQL plugin's rows, yours) must give the same answers and keep the same text as any
other. The suite checks that through :class:`~hermes_core.memory.store.MemoryStore` and
:class:`~hermes_core.memory.approval.MemoryWriter` built on the documents, as a host builds
them (:mod:`hermes_core.memory.home`), never through the backend's own storage.

Subclass :class:`MemoryDocumentsConformance` in your backend's tests (the class name must
start with ``Test`` for pytest to collect it) and supply ``documents_factory``: a callable
that returns a *new* documents object over the same fresh, empty data each time it is called
(the suite opens several, as several hosts would, to check that what one writes another
reads, that concurrent writers all land and that a staged write is applied exactly once).
The suite closes every object it opened. Two optional fixtures let it look further:
``plant_text`` (store text by other means: an editor, an operator's SQL) and ``kept_copies``
(read the copies a drift or a reset kept).

Example::

    class TestMyMemoryConformance(MemoryDocumentsConformance):
        @pytest.fixture
        def documents_factory(self, tmp_path):
            dsn = make_empty_database(tmp_path)  # fresh data for each test
            return lambda: MyMemoryDocuments(dsn)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hermes_core.memory.approval import WriteRequest
from hermes_core.memory.documents import MemoryDocuments
from hermes_core.memory.store import Result
from hermes_core.testing.memory_checks import (
    BLOCKED,
    KeptCopies,
    MemoryKit,
    OpenDocuments,
    PlantText,
    UserChecks,
    WriteChecks,
    fill,
    toy_scanner,
)

__all__ = [
    "BLOCKED",
    "KeptCopies",
    "MemoryDocumentsConformance",
    "MemoryKit",
    "OpenDocuments",
    "PlantText",
    "fill",
    "toy_scanner",
]


def _in_threads(work: list[Callable[[], Any]]) -> list[Any]:
    """Run each callable in a thread of its own, all released at once; what each returned
    (or the exception it raised)."""
    gate = threading.Barrier(len(work))
    results: list[Any] = [None] * len(work)

    def run(n: int) -> None:
        try:
            gate.wait()
            results[n] = work[n]()
        except Exception as exc:  # noqa: BLE001 - reported by the check, with the others
            results[n] = exc

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(work))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


class ApprovalChecks:
    """Staged writes wait, are judged again when approved, and land exactly once."""

    def test_staged_writes_wait_and_approval_applies_each_once(self, memory: MemoryKit) -> None:
        stage = memory.writer("stage", user_id="alice")
        staged = stage.write(WriteRequest("add", "user", "prefers short answers"))
        assert staged["staged"] is True and len(staged["pending_id"]) == 8, staged
        assert stage.store.entries("user") == [], "a staged write landed before approval"
        records, broken = stage.pending.all()
        assert [r.id for r in records] == [staged["pending_id"]] and broken == []
        assert records[0].user_id == "alice" and records[0].origin == "assistant_tool"
        operator = memory.writer("stage", memory.other())  # another host, without --user
        applied = operator.approve(staged["pending_id"])
        assert applied["success"] and "applied" in applied["message"], applied
        assert stage.store.entries("user") == ["prefers short answers"]
        assert memory.store().entries("user") == [], "it must go to alice's profile only"
        with pytest.raises(KeyError, match="no pending write"):
            operator.approve(staged["pending_id"])  # an approval consumes its record
        assert stage.pending.all() == ([], []), "the applied record is still staged"

    def test_an_approval_is_judged_again_and_refused_when_its_entry_changed(
        self, memory: MemoryKit
    ) -> None:
        allow, stage = memory.writer("allow"), memory.writer("stage")
        allow.write(WriteRequest("add", "memory", "deploy on Fridays"))
        staged = stage.write(WriteRequest("remove", "memory", old_text="Fridays"))
        record = stage.pending.get(staged["pending_id"])
        assert record.selected == "deploy on Fridays", record
        allow.write(WriteRequest("replace", "memory", "deploy on Fridays after 2pm", "Fridays"))
        changed = stage.approve(record.id)
        assert changed["reason"] == "changed", f"approved onto a changed entry: {changed}"
        assert "since it was staged" in changed["error"], changed
        assert stage.store.entries("memory") == ["deploy on Fridays after 2pm"]
        assert stage.pending.get(record.id) == record, "kept, for a person to reject"
        assert stage.reject(record.id)["success"] and stage.pending.all() == ([], [])
        with pytest.raises(KeyError, match="no pending write"):
            stage.reject(record.id)

    def test_an_approval_is_held_to_the_limit_again(self, memory: MemoryKit) -> None:
        stage = memory.writer("stage", memory_char_limit=40)
        staged = stage.write(WriteRequest("add", "memory", "thirty characters of a fact."))
        fill(memory.store(memory_char_limit=40), "another fact, twenty")
        over = stage.approve(staged["pending_id"])
        assert over["reason"] == "over_limit", f"approval must check the limit again: {over}"
        assert memory.store().entries("memory") == ["another fact, twenty"]

    def test_staging_refuses_what_would_be_refused_and_block_refuses_all(
        self, memory: MemoryKit
    ) -> None:
        stage = memory.writer("stage")
        assert stage.write(WriteRequest("add", "memory", "EVIL"))["reason"] == "threat"
        assert stage.write(WriteRequest("remove", "memory", old_text="x"))["reason"] == "no_match"
        assert stage.pending.all() == ([], []), "a refused write was staged"
        blocked = memory.writer("block").write(WriteRequest("add", "memory", "anything"))
        assert blocked["reason"] == "read_only", blocked
        assert memory.store().raw("memory") == "", "block mode wrote"

    def test_background_review_only_proposes_what_nobody_asked_for(self, memory: MemoryKit) -> None:
        writer = memory.writer("allow", user_id="alice")
        own = writer.write(WriteRequest("add", "user", "likes tea"), "background_review")
        assert own.get("staged") is None and writer.store.entries("user") == ["likes tea"], own
        shared = writer.write(WriteRequest("add", "memory", "alice's address"), "background_review")
        assert shared["staged"] is True and writer.store.entries("memory") == [], shared
        proposal = writer.write(
            WriteRequest("replace", "user", "likes green tea", "tea"), "background_review"
        )
        assert proposal["staged"] is True and writer.store.entries("user") == ["likes tea"]
        assert writer.pending.get(proposal["pending_id"]).origin == "background_review"
        assert writer.approve(proposal["pending_id"])["success"]
        assert writer.store.entries("user") == ["likes green tea"]

    def test_a_write_staged_for_a_users_own_block_is_not_approved_into_the_shared_one(
        self, memory: MemoryKit
    ) -> None:
        """A host keeping MEMORY.md per user stages alice's write; a host on the same data
        with MEMORY.md shared must refuse to approve it where bob would read it."""
        own = memory.writer("stage", user_id="alice", per_user_memory=True)
        staged = own.write(WriteRequest("add", "memory", "alice banks with Acme"))
        sharing = memory.other()
        refused = memory.writer("allow", sharing).approve(staged["pending_id"])
        assert refused["success"] is False and refused["reason"] == "scope", refused
        bob = memory.store(sharing, user_id="bob")
        assert bob.entries("memory") == [], "alice's own entry reached the shared block"
        assert own.approve(staged["pending_id"])["success"], "approvable where it was staged"
        assert own.store.entries("memory") == ["alice banks with Acme"]
        assert bob.entries("memory") == [], "alice's own entry reached the shared block"


class ConcurrencyChecks:
    """Several documents objects (hosts) on one data: nothing written is lost."""

    #: threads in the concurrency checks, and adds per thread
    threads: int = 8
    adds_per_thread: int = 5

    def test_writes_through_several_instances_in_turn_all_land(self, memory: MemoryKit) -> None:
        one, two = memory.store(), memory.store(memory.other())
        fill(one, "from host one")
        fill(two, "from host two")
        fill(one, "one again")
        assert two.remove("memory", "one again")["success"], "host two sees host one's write"
        assert one.replace("memory", "host two", "host two, replaced")["success"]
        third = memory.store(memory.other())
        assert third.entries("memory") == ["from host one", "host two, replaced"], (
            "a write decided on a text another host had changed lost that change"
        )

    def test_concurrent_adds_from_many_instances_all_land(self, memory: MemoryKit) -> None:
        stores = [
            memory.store(memory.other(), memory_char_limit=100_000) for _ in range(self.threads)
        ]

        def adder(n: int) -> Callable[[], list[Result]]:
            def work() -> list[Result]:
                return [
                    stores[n].add("memory", f"host {n} fact {i}")
                    for i in range(self.adds_per_thread)
                ]

            return work

        results = _in_threads([adder(n) for n in range(self.threads)])
        for n, done in enumerate(results):
            assert isinstance(done, list), f"thread {n} raised {done!r}"
            refused = [r for r in done if not r.get("success")]
            assert refused == [], f"thread {n}: concurrent adds were refused: {refused}"
        wanted = {
            f"host {n} fact {i}" for n in range(self.threads) for i in range(self.adds_per_thread)
        }
        stored = memory.store(memory.other()).entries("memory")
        assert sorted(stored) == sorted(wanted), (
            f"{len(wanted - set(stored))} of {len(wanted)} concurrent adds were lost, "
            f"{len(stored) - len(set(stored))} doubled"
        )

    def test_a_staged_write_approved_by_many_instances_at_once_lands_once(
        self, memory: MemoryKit
    ) -> None:
        stage = memory.writer("stage", user_id="alice")
        pending_id = stage.write(WriteRequest("add", "user", "prefers short answers"))["pending_id"]
        writers = [memory.writer("allow", memory.other()) for _ in range(self.threads)]

        def approver(n: int) -> Callable[[], Result | str]:
            def work() -> Result | str:
                try:
                    return writers[n].approve(pending_id)
                except KeyError:
                    return "no pending write"  # another approver consumed it first

            return work

        results = _in_threads([approver(n) for n in range(self.threads)])
        raised = [r for r in results if isinstance(r, Exception)]
        assert raised == [], f"approving raised: {raised!r}"
        applied = [r for r in results if isinstance(r, dict) and r.get("success")]
        assert len(applied) == 1, f"{len(applied)} of {self.threads} approvals applied it"
        others = [r if isinstance(r, str) else r.get("reason") for r in results if r not in applied]
        assert set(others) <= {"gone", "no pending write"}, f"other approvers: {results}"
        assert stage.store.entries("user") == ["prefers short answers"]
        assert stage.pending.all() == ([], []), "the applied record is still staged"


class MemoryDocumentsConformance(WriteChecks, UserChecks, ApprovalChecks, ConcurrencyChecks):
    """Inherit and provide ``documents_factory``; the inherited ``test_*`` methods run.

    Every check takes ``memory`` (a :class:`MemoryKit` over fresh documents), so a test can
    also call one directly with a kit of its own.
    """

    @pytest.fixture
    def documents_factory(self) -> Callable[[], MemoryDocuments]:
        """Returns a callable opening new documents on this test's fresh data (override)."""
        pytest.fail(
            "override the documents_factory fixture in your MemoryDocumentsConformance subclass"
        )

    @pytest.fixture
    def plant_text(self) -> PlantText | None:
        """Stores text by other means (override to use the backend's own; default: a raw
        write through the documents)."""
        return None

    @pytest.fixture
    def kept_copies(self) -> KeptCopies | None:
        """Reads the copies a drift or a reset kept (override to have them checked)."""
        return None

    @pytest.fixture
    def open_documents(
        self, documents_factory: Callable[[], MemoryDocuments]
    ) -> Iterator[OpenDocuments]:
        """``documents_factory`` with every object it opened closed after the test."""
        opened: list[MemoryDocuments] = []

        def open_one() -> MemoryDocuments:
            documents = documents_factory()
            opened.append(documents)
            return documents

        yield open_one
        for documents in reversed(opened):
            documents.close()

    @pytest.fixture
    def memory(
        self,
        open_documents: OpenDocuments,
        plant_text: PlantText | None,
        kept_copies: KeptCopies | None,
    ) -> MemoryKit:
        """Stores and writers over fresh documents."""
        return MemoryKit(open_documents, plant_text, kept_copies)
