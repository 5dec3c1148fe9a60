"""What the memory conformance checks share, and the checks on writes, users and reset.

Part of :class:`hermes_core.testing.MemoryDocumentsConformance`. :class:`MemoryKit` builds the
stores and writers a check uses over the documents under test (a toy scanner, so the store's
rules are tested apart from the real threat patterns); every check takes it as ``memory``, so
it can also be called directly with a kit of one's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hermes_core.memory.approval import MemoryWriter
from hermes_core.memory.documents import DatedDocuments, Decision, MemoryDocuments, Scope
from hermes_core.memory.store import MemoryStore
from hermes_core.types import Finding

__all__ = [
    "BLOCKED",
    "KeptCopies",
    "MemoryKit",
    "OpenDocuments",
    "PlantText",
    "UserChecks",
    "WriteChecks",
    "fill",
    "toy_scanner",
]

#: opens another documents object on the test's data (closed by the suite after the test)
OpenDocuments = Callable[[], MemoryDocuments]
#: stores ``text`` as ``(target, scope)``'s text by other means (an editor, an operator's SQL)
PlantText = Callable[[str, Scope, str], None]
#: the texts of the copies kept of ``(target, scope)`` (drift, reset), oldest first
KeptCopies = Callable[[str, Scope], list[str]]

BLOCKED = "Blocked: content matches threat pattern 'toy_evil'."


def toy_scanner(text: str) -> list[Finding]:
    """Flags the word EVIL, so the store's rules are tested apart from the real patterns."""
    return [Finding("toy_evil", "override", "toy")] if "EVIL" in text else []


class MemoryKit:
    """Stores and writers over the documents under test, as a host builds them.

    ``documents`` is the first instance; :meth:`other` opens another on the same data (a
    second host). ``plant`` writes text by other means (default: a raw write through the
    documents, which is what an editor's change looks like to the store); ``copies`` lists
    the copies kept, or is None when the backend offers no way to read them (then only the
    messages about copies are checked).
    """

    def __init__(
        self,
        open_documents: OpenDocuments,
        plant: PlantText | None = None,
        copies: KeptCopies | None = None,
    ) -> None:
        self.open_documents = open_documents
        self.documents = open_documents()
        self._plant = plant
        self._copies = copies

    def other(self) -> MemoryDocuments:
        """Another documents object on the same data."""
        return self.open_documents()

    def store(self, documents: MemoryDocuments | None = None, **options: Any) -> MemoryStore:
        """A store (``user_id``, limits, ``per_user_memory``, ...) over ``documents``."""
        return MemoryStore(documents or self.documents, scanner=toy_scanner, **options)

    def writer(
        self, mode: str = "allow", documents: MemoryDocuments | None = None, **options: Any
    ) -> MemoryWriter:
        """A writer in approval ``mode``; staged writes are kept with ``documents``."""
        docs = documents or self.documents

        def store_for(user: str | None) -> MemoryStore:
            return self.store(docs, **{**options, "user_id": user})

        return MemoryWriter(self.store(docs, **options), mode=mode, store_for=store_for)

    def plant(self, target: str, scope: Scope, text: str) -> None:
        """Store ``text`` as it is, bypassing every rule of the store."""
        if self._plant is not None:
            self._plant(target, scope, text)
            return
        self.documents.update(target, scope, lambda _old: Decision(None, text=text))

    def copies(self, target: str, scope: Scope) -> list[str] | None:
        return None if self._copies is None else self._copies(target, scope)


def _text(raw: str) -> str:
    """A stored text without the one final newline a backend may end it with (files do, so
    that a line appended by a shell starts a line of its own)."""
    return raw[:-1] if raw.endswith("\n") else raw


def fill(store: MemoryStore, *entries: str, target: str = "memory") -> None:
    for entry in entries:
        result = store.add(target, entry)
        assert result["success"], f"adding {entry!r} was refused: {result}"


#: user ids that must each have a profile of their own (close pairs included)
USER_PAIRS: tuple[tuple[str, str], ...] = (
    ("alice", "bob"),
    ("alice", "Alice"),
    ("alice", "alice "),
    ("a/b", "a_b"),
    ("ålice", "alice"),
)


class WriteChecks:
    """Add, replace, remove and batch; limits and threats; drift."""

    def test_they_are_memory_documents_with_a_kind(self, memory: MemoryKit) -> None:
        docs = memory.documents
        assert isinstance(docs, MemoryDocuments), "the documents lack MemoryDocuments methods"
        assert isinstance(docs.kind, str) and docs.kind, "kind must be a short name"
        assert docs.read("memory", None) is None, "fresh documents must hold no text"
        assert docs.reset_preview("user", "alice") is None, "nothing to reset yet"
        wheres = {docs.where("user", u) for u in ("alice", "bob", None)}
        assert len(wheres) == 3, f"where() must tell each profile apart, got {wheres}"
        docs.close()
        docs.close()  # closing twice is safe

    def test_add_keeps_the_seed_format_and_a_duplicate_writes_nothing(
        self, memory: MemoryKit
    ) -> None:
        store = memory.store()
        assert store.add("memory", "  uses uv, not pip  ") == {
            "success": True,
            "done": True,
            "message": "Entry added.",
            "usage": "0% — 16/2,200 chars",
        }
        fill(store, "tests take\ntwo minutes")
        stored = "uses uv, not pip\n§\ntests take\ntwo minutes"
        assert _text(store.raw("memory")) == stored, "entries are kept joined by a line holding '§'"
        assert _text(memory.store(memory.other()).raw("memory")) == stored, "another host sees it"
        again = store.add("memory", "uses uv, not pip")
        assert again["success"] and "already exists" in again["message"], again
        assert store.entries("memory") == ["uses uv, not pip", "tests take\ntwo minutes"]

    def test_replace_and_remove_pick_one_entry_or_refuse_changing_nothing(
        self, memory: MemoryKit
    ) -> None:
        store = memory.store()
        fill(store, "prefers tabs over spaces", "tabs", "runs pytest -q", "runs pytest with cov")
        replaced = store.replace("memory", "tabs", "uses 4 spaces")
        assert replaced["success"] and replaced["replaced"] == "tabs", "the exact entry wins"
        before = store.raw("memory")
        multiple = store.remove("memory", "pytest")
        assert multiple["reason"] == "multiple" and len(multiple["matches"]) == 2, multiple
        missing = store.remove("memory", "coffee")
        assert missing["reason"] == "no_match" and "uses 4 spaces" in missing["entries"]
        assert store.raw("memory") == before, "a refused remove changed the text"
        removed = store.remove("memory", "cov")
        assert removed["success"] and removed["removed"] == "runs pytest with cov", removed
        assert memory.store(memory.other()).entries("memory") == [
            "prefers tabs over spaces",
            "uses 4 spaces",
            "runs pytest -q",
        ]

    def test_batch_is_all_or_nothing(self, memory: MemoryKit) -> None:
        store = memory.store()
        fill(store, "old fact", "stale")
        before = store.raw("memory")
        bad = store.batch(
            "memory",
            [
                {"action": "replace", "old_text": "old fact", "content": "new fact"},
                {"action": "remove", "old_text": "missing"},
            ],
        )
        assert bad["success"] is False and bad["error"].startswith("operation 2:"), bad
        assert store.raw("memory") == before, "a refused batch applied part of itself"
        good = store.batch(
            "memory",
            [
                {"action": "replace", "old_text": "old fact", "content": "new fact"},
                {"action": "remove", "old_text": "stale"},
                {"action": "add", "content": "another"},
            ],
        )
        assert good["success"] and len(good["applied"]) == 3, good
        assert store.entries("memory") == ["new fact", "another"]

    def test_limits_refuse_growth_list_the_entries_and_never_block_shrinking(
        self, memory: MemoryKit
    ) -> None:
        store = memory.store(memory_char_limit=60)
        fill(store, "alpha " * 4, "beta " * 4)
        before = store.raw("memory")
        over = store.add("memory", "gamma " * 6)
        assert over["reason"] == "over_limit" and over["usage"] == "75% — 45/60 chars", over
        assert over["entries"] == ["alpha alpha alpha alpha", "beta beta beta beta"], over
        assert store.raw("memory") == before, "a write over the limit changed the text"
        lowered = memory.store(memory_char_limit=10)
        assert lowered.remove("memory", "beta")["success"], "shrinking must pass any limit"
        assert lowered.entries("memory") == ["alpha alpha alpha alpha"]

    def test_every_content_is_scanned_before_anything_is_stored(self, memory: MemoryKit) -> None:
        store = memory.store()
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
            assert result["reason"] == "threat" and BLOCKED in result["error"], result
        assert store.raw("memory") == before, "a refused threat changed the text"
        assert store.add("user", "x\n§\ny")["reason"] == "invalid"
        assert store.add("user", "bell \x07 here")["reason"] == "invalid"
        assert memory.documents.read("user", None) is None, "a refused write created text"

    def test_a_planted_entry_is_blocked_in_the_snapshot_and_kept_raw(
        self, memory: MemoryKit
    ) -> None:
        memory.plant("memory", None, "fine\n§\nan EVIL plan")
        store = memory.store()
        snapshot = store.snapshot()
        assert "fine" in snapshot and "EVIL" not in snapshot, snapshot
        assert "[BLOCKED: MEMORY.md entry" in snapshot, snapshot
        assert "an EVIL plan" in store.raw("memory"), "the raw text must be kept as stored"
        shown = store.remove("memory", "nothing like it")["entries"]
        assert store.remove("memory", shown[1])["success"], "removable by its placeholder"
        assert store.entries("memory") == ["fine"]

    def test_drift_refuses_rewrites_keeps_one_copy_and_add_keeps_the_foreign_text(
        self, memory: MemoryKit
    ) -> None:
        store = memory.store(user_id="alice")
        fill(store, "one", "two", target="user")
        drifted = "one\n\n§\ntwo\n\n"  # edited inside, not only appended to
        memory.plant("user", "alice", drifted)
        for result in (
            store.replace("user", "one", "uno"),
            store.remove("user", "two"),
            store.batch("user", [{"action": "remove", "old_text": "one"}]),
        ):
            assert result["reason"] == "drift" and "edited outside" in result["error"], result
            assert "A copy is in" in result["error"], f"no copy was kept: {result['error']}"
        assert store.raw("user") == drifted, "a drifted text was rewritten"
        copies = memory.copies("user", "alice")
        assert copies in (None, [drifted]), f"one copy a minute, of the text: {copies}"
        assert store.add("user", "three")["success"], "add still works on a drifted text"
        assert _text(store.raw("user")) == drifted.rstrip("\n") + "\n§\nthree"

    def test_text_appended_after_the_last_entry_is_kept_as_an_entry_of_its_own(
        self, memory: MemoryKit
    ) -> None:
        """``echo note >> MEMORY.md`` glues "note" onto the last entry; a remove of that
        entry must not take it along: it is split off, reported, and a copy is kept."""
        store = memory.store()
        if not isinstance(store.documents, DatedDocuments):
            pytest.skip("these documents keep no dates, so the store's own text is not known")
        if memory._plant is None:
            pytest.skip("needs plant_text: a raw write through the documents dates the text")
        fill(store, "one", "two")
        glued = store.raw("memory").rstrip("\n") + "\nnote\n"  # on a line of its own
        memory.plant("memory", None, glued)
        assert store.entries("memory") == ["one", "two", "note"]
        removed = store.remove("memory", "two")
        assert removed["success"] and removed["removed"] == "two", removed
        assert removed["appended"] == ["note"] and "A copy is in" in removed["message"]
        assert store.entries("memory") == ["one", "note"], "the appended note was lost"
        copies = memory.copies("memory", None)
        assert copies in (None, [glued]), f"the copy is of the text as it was: {copies}"
        assert [d is not None for _, d in store.dated("memory")] == [True, True]

    def test_a_trailing_newline_is_not_drift(self, memory: MemoryKit) -> None:
        memory.plant("memory", None, "one\n§\ntwo\n")
        store = memory.store()
        assert store.remove("memory", "one")["success"], "a trailing newline is not drift"
        assert _text(store.raw("memory")) == "two"


class UserChecks:
    """Each user's profile is theirs; MEMORY.md is shared unless per_user_memory; reset."""

    def test_each_user_reads_only_their_own_profile(self, memory: MemoryKit) -> None:
        alice, bob = memory.store(user_id="alice"), memory.store(memory.other(), user_id="bob")
        fill(alice, "alice is vegetarian", target="user")
        fill(bob, "bob prefers rust", target="user")
        fill(alice, "the build uses make")  # MEMORY.md: shared by the home's users
        assert bob.entries("user") == ["bob prefers rust"], "bob read another profile"
        assert "vegetarian" not in bob.snapshot(), "alice's profile reached bob's prompt"
        assert "the build uses make" in bob.snapshot(), "MEMORY.md is shared by default"
        assert bob.remove("user", "vegetarian")["reason"] == "no_match"
        assert memory.store().entries("user") == [], "the single-user profile is another one"
        own = memory.store(user_id="alice", per_user_memory=True)
        assert own.entries("memory") == [], "per_user_memory: a MEMORY.md of alice's own"
        fill(own, "alice's own note")
        assert bob.entries("memory") == ["the build uses make"], "alice's own note leaked"

    @pytest.mark.parametrize(("owner", "other"), USER_PAIRS)
    def test_close_user_ids_have_separate_profiles(
        self, memory: MemoryKit, owner: str, other: str
    ) -> None:
        fill(memory.store(user_id=owner), "private to the owner", target="user")
        intruder = memory.store(memory.other(), user_id=other)
        assert intruder.entries("user") == [], f"{other!r} read the profile of {owner!r}"
        fill(intruder, "the other's own", target="user")
        assert memory.store(user_id=owner).entries("user") == ["private to the owner"]

    def test_reset_keeps_a_copy_then_deletes_and_refuses_shared_text(
        self, memory: MemoryKit
    ) -> None:
        shared = memory.store()
        fill(shared, "everyone's fact")
        bob = memory.store(user_id="bob")
        fill(bob, "bob's profile", target="user")
        refused = bob.reset("memory")
        assert refused["reason"] == "shared" and "Nothing was deleted" in refused["error"]
        assert shared.entries("memory") == ["everyone's fact"], "a refused reset deleted"
        assert memory.documents.reset_preview("user", "bob"), "reset_preview names the text"
        done = bob.reset("user")
        assert done["success"] and done["copy"], f"a reset keeps a copy: {done}"
        assert bob.entries("user") == [], "reset did not delete"
        assert memory.copies("user", "bob") in (None, ["bob's profile"], ["bob's profile\n"]), (
            "the copy is whole"
        )
        assert memory.documents.reset_preview("user", "bob") is None
        assert "does not exist" in bob.reset("user")["message"]
        assert shared.reset("memory")["success"] and shared.entries("memory") == []
        own = memory.store(user_id="bob", per_user_memory=True)
        fill(own, "bob's own note")
        assert own.reset("memory")["success"], "a MEMORY.md of one's own may be reset"
        assert memory.copies("memory", "bob") in (None, ["bob's own note"], ["bob's own note\n"])
