"""Issue 28, dated entries: created, updated and last used in a sidecar the prompt never
shows, kept in step by every write; text appended by hand after the store's own is kept as an
entry of its own (copied and reported), never removed with the entry it was glued onto."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memory_support import toy_scanner

from hermes_core.cli import main
from hermes_core.errors import MemoryStoreError
from hermes_core.memory import MemoryStore
from hermes_core.memory.dated import read_block_dates, write_block_dates
from hermes_core.memory.dates import (
    BlockMeta,
    EntryDates,
    Split,
    apply_changes,
    dump_meta,
    entry_key,
    load_meta,
    mark_written,
    reconcile,
    short_dates,
    split_appended,
)
from hermes_core.memory.entries import parse_entries

DAY = 86400.0
T0 = 1_780_000_000.0  # 2026-05-28


def _meta(*pairs: tuple[str, EntryDates], written: str | None = None) -> BlockMeta:
    meta = BlockMeta(tuple((entry_key(e), d) for e, d in pairs))
    return mark_written(meta, written, None) if written is not None else meta


# --- the pure rules -------------------------------------------------------------------------


def test_a_replace_keeps_created_and_is_updated_and_used_now() -> None:
    meta = _meta(("a", EntryDates(T0, T0)), ("b", EntryDates(T0, T0)))
    after = apply_changes(meta, ["a", "b2"], T0 + DAY, renamed=[("b", "b2")])
    assert after.lookup()[entry_key("b2")] == EntryDates(T0, T0 + DAY, T0 + DAY)
    assert after.lookup()[entry_key("a")] == EntryDates(T0, T0)


def test_a_duplicate_add_marks_the_entry_used_and_new_entries_are_new() -> None:
    meta = _meta(("a", EntryDates(T0, T0)))
    after = apply_changes(meta, ["a", "c"], T0 + 2 * DAY, used=["a"])
    assert after.lookup()[entry_key("a")] == EntryDates(T0, T0, T0 + 2 * DAY)
    assert after.lookup()[entry_key("c")] == EntryDates(T0 + 2 * DAY, T0 + 2 * DAY)


def test_a_hand_edit_in_place_is_an_update_and_a_vanished_entry_loses_its_record() -> None:
    meta = _meta(("a", EntryDates(T0, T0, T0)), ("b", EntryDates(T0, T0)))
    seen = reconcile(meta, ["a edited", "b", "new by hand"], T0 + DAY)
    assert [key for key, _ in seen.entries] == [
        entry_key(e) for e in ("a edited", "b", "new by hand")
    ]
    assert seen.lookup()[entry_key("a edited")] == EntryDates(T0, T0 + DAY, T0)
    assert seen.lookup()[entry_key("new by hand")] == EntryDates(T0 + DAY, T0 + DAY)


def test_text_glued_after_the_store_s_own_is_split_off() -> None:
    meta = _meta(("a", EntryDates(T0, T0)), ("b", EntryDates(T0, T0)), written="a\n§\nb")
    glued = split_appended("a\n§\nb\nnote\n", meta)
    assert glued.text == "a\n§\nb\n§\nnote" and glued.appended == ("note",)
    # the same line going on is a hand edit of the last entry, not an append
    assert split_appended("a\n§\nb.11 and uv\n", meta) == Split("a\n§\nb.11 and uv\n")
    on_its_line = split_appended("a\n§\nb\n\nnote one\n§\nnote two\n", meta)
    assert on_its_line.appended == ("note one", "note two")
    # appended with its own separator: a hand-added entry, nothing to split or report
    assert split_appended("a\n§\nb\n§\nnote", meta).appended == ()
    assert split_appended("a\n§\nb\n", meta).appended == ()  # a newline alone is not text
    assert split_appended("x\n§\nbnote", meta).appended == ()  # edited inside: other rules


def test_a_text_a_crash_left_before_its_dates_is_not_taken_for_an_append() -> None:
    """The dates are stored before the text: a crash in between leaves the text the write
    replaced, which may begin with the new text (a replace of "bc" with "b")."""
    meta = mark_written(BlockMeta(), "a\n§\nb", "a\n§\nb\nc")
    assert split_appended("a\n§\nb\nc", meta).appended == ()
    assert split_appended("a\n§\nb\nc\nd", meta).appended == ("c\nd",)


def test_the_sidecar_json_round_trips_and_bad_records_are_dropped_not_fatal() -> None:
    meta = _meta(("a", EntryDates(T0, T0 + 5, T0 + 9)), written="a")
    assert load_meta(json.loads(json.dumps(dump_meta(meta)))) == meta
    raw = dump_meta(meta)
    raw["entries"].append({"sha256": "x", "created": "yesterday", "updated": None})
    raw["entries"].append("not a record")
    assert load_meta(raw) == meta
    assert load_meta({"v": 99}) == BlockMeta() and load_meta("junk") == BlockMeta()


def test_short_dates_are_compact() -> None:
    assert short_dates(EntryDates(T0, T0, T0 + DAY), T0 + 13 * DAY) == (
        "added 2026-05-28, last used 12d ago"
    )
    assert short_dates(EntryDates(T0, T0 + 3 * DAY), T0 + 3 * DAY) == (
        "added 2026-05-28, updated 2026-05-31, never used"
    )
    assert short_dates(None, T0) == "not dated (edited by hand)"


# --- the file store ---------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path / "memories", scanner=toy_scanner)


def _sidecar(store: MemoryStore, target: str = "memory") -> dict[str, object]:
    path = store.path(target).with_name(store.path(target).name + ".meta.json")
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _keys(store: MemoryStore, target: str = "memory") -> list[str]:
    entries = _sidecar(store, target)["entries"]
    assert isinstance(entries, list)
    return [record["sha256"] for record in entries]


def test_every_write_keeps_one_record_per_entry_and_the_prompt_has_no_dates(
    store: MemoryStore,
) -> None:
    for entry in ("one", "two", "three"):
        assert store.add("memory", entry)["success"]
    assert store.replace("memory", "two", "two, reworded")["success"]
    assert store.remove("memory", "one")["success"]
    batch = [{"action": "add", "content": "four"}, {"action": "remove", "old_text": "three"}]
    assert store.batch("memory", batch)["success"]
    assert _keys(store) == [entry_key(e) for e in store.entries("memory")]
    assert store.raw("memory") == "two, reworded\n§\nfour\n"  # the text itself is unchanged
    assert store.snapshot() == store.block("memory") and "2026-" not in store.snapshot()
    assert store.snapshot().endswith("\ntwo, reworded\n§\nfour")
    for entry, dates in store.dated("memory"):
        assert dates is not None and dates.created <= dates.updated, entry


def test_echo_appended_to_memory_md_is_kept_copied_and_reported(store: MemoryStore) -> None:
    """The drift case of issue 28: ``echo "note" >> MEMORY.md`` then ``memory remove`` of
    the last entry used to delete the note with it, and keep no copy."""
    for entry in ("first", "last entry"):
        assert store.add("memory", entry)["success"]
    path = store.path("memory")
    with path.open("a", encoding="utf-8") as shell:
        shell.write("note\n")
    glued = path.read_text(encoding="utf-8")
    assert glued == "first\n§\nlast entry\nnote\n"  # the store ends its text with a newline
    assert store.entries("memory") == ["first", "last entry", "note"]  # the prompt's view
    removed = store.remove("memory", "last entry")
    assert removed["success"] and removed["removed"] == "last entry"
    assert removed["appended"] == ["note"] and "by other means" in removed["message"]
    assert store.raw("memory") == "first\n§\nnote\n"
    copies = list(path.parent.glob("MEMORY.md.bak.*"))
    assert [c.read_text(encoding="utf-8") for c in copies] == [glued]
    assert copies[0].name in removed["message"]
    assert _keys(store) == [entry_key("first"), entry_key("note")]
    assert store.remove("memory", "note")["success"]  # now an ordinary entry
    assert store.entries("memory") == ["first"]


def test_an_append_after_a_recent_copy_of_another_text_gets_its_own_copy(
    store: MemoryStore,
) -> None:
    for entry in ("one", "two"):
        assert store.add("memory", entry)["success"]
    path = store.path("memory")
    path.write_text("one\n\n§\ntwo", encoding="utf-8")  # edited inside: refused, copied
    assert store.remove("memory", "two")["reason"] == "drift"
    path.write_text("one\n§\ntwo", encoding="utf-8")  # fixed by hand
    assert store.add("memory", "three")["success"]
    with path.open("a", encoding="utf-8") as shell:
        shell.write(" and a note")
    glued = path.read_text(encoding="utf-8")
    assert store.remove("memory", "three")["success"]
    copies = sorted(path.parent.glob("MEMORY.md.bak.*"))
    assert [c.read_text(encoding="utf-8") for c in copies] == ["one\n\n§\ntwo", glued]
    assert store.entries("memory") == ["one", "two", "and a note"]


def test_a_hand_edited_entry_is_updated_not_an_error(store: MemoryStore) -> None:
    for entry in ("alpha", "beta"):
        assert store.add("memory", entry)["success"]
    created = dict(store.dated("memory"))["alpha"]
    store.path("memory").write_text("alpha, edited by hand\n§\nbeta", encoding="utf-8")
    assert dict(store.dated("memory"))["alpha, edited by hand"] is None  # until a write
    assert store.add("memory", "gamma")["success"]
    dates = dict(store.dated("memory"))["alpha, edited by hand"]
    assert dates is not None and created is not None and dates.created == created.created


def test_a_duplicate_add_marks_last_used(store: MemoryStore) -> None:
    assert store.add("memory", "kept")["success"]
    assert dict(store.dated("memory"))["kept"].last_used is None  # type: ignore[union-attr]
    assert store.add("memory", "kept")["message"].startswith("Entry already exists")
    assert dict(store.dated("memory"))["kept"].last_used is not None  # type: ignore[union-attr]


def test_a_refused_write_changes_no_dates(store: MemoryStore) -> None:
    assert store.add("memory", "only")["success"]
    before = _sidecar(store)
    assert store.remove("memory", "absent")["reason"] == "no_match"
    assert store.add("memory", "x" * 5000)["reason"] == "over_limit"
    assert _sidecar(store) == before


def test_the_full_memory_answer_lists_each_entry_s_dates(tmp_path: Path) -> None:
    small = MemoryStore(tmp_path / "m", scanner=toy_scanner, memory_char_limit=40)
    assert small.add("memory", "an old fact")["success"]
    assert small.add("memory", "an old fact")["success"]  # used
    assert small.add("memory", "another")["success"]
    full = small.add("memory", "x" * 30)
    assert full["reason"] == "over_limit" and full["entries"] == ["an old fact", "another"]
    assert len(full["entry_dates"]) == 2 and "last used" in full["entry_dates"][0]
    assert full["entry_dates"][1].endswith("never used") and "entry_dates" in full["error"]


def test_an_unreadable_sidecar_never_blocks_a_write(store: MemoryStore) -> None:
    assert store.add("memory", "one")["success"]
    store.path("memory").with_name("MEMORY.md.meta.json").write_text("{not json", "utf-8")
    assert store.add("memory", "two")["success"]
    assert _keys(store) == [entry_key("one"), entry_key("two")]


def test_reset_drops_the_sidecar_with_the_file(store: MemoryStore) -> None:
    assert store.add("memory", "one")["success"]
    assert store.reset("memory")["success"]
    assert not store.path("memory").with_name("MEMORY.md.meta.json").exists()


def test_the_public_pair_carries_dates_to_another_home(tmp_path: Path) -> None:
    old = MemoryStore(tmp_path / "old", scanner=toy_scanner, user_id="alice")
    assert old.add("user", "likes tea")["success"]
    assert old.add("user", "likes tea")["success"]  # used
    dates = read_block_dates(old.documents, "user", "alice")
    new = MemoryStore(tmp_path / "new", scanner=toy_scanner, user_id="alice")
    assert new.add("user", "likes tea")["success"] and new.add("user", "other")["success"]
    assert write_block_dates(new.documents, "user", "alice", dates) == 1
    moved = dict(new.dated("user"))
    assert moved["likes tea"] == dict(old.dated("user"))["likes tea"]
    assert moved["other"] is not None
    with pytest.raises(ValueError, match="v: 1"):
        write_block_dates(new.documents, "user", "alice", {"entries": []})


def test_memory_show_dates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    assert main(["--home", str(home), "memory", "add", "a fact"]) == 0
    (home / "memories" / "MEMORY.md").open("a", encoding="utf-8").write("by hand\n")
    capsys.readouterr()
    assert main(["--home", str(home), "memory", "show", "--dates", "--target", "memory"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("  1. [added ") and out[1].endswith("never used] a fact")
    assert out[2] == "  2. [not dated (edited by hand)] by hand"
    assert main(["--home", str(home), "memory", "show", "--json", "--target", "memory"]) == 0
    shown = json.loads(capsys.readouterr().out)["blocks"][0]["dates"]
    assert [d["sha256"] for d in shown] == [entry_key("a fact"), entry_key("by hand")]
    assert shown[1]["created"] is None


def test_a_note_appended_then_an_edit_elsewhere_keeps_the_note(store: MemoryStore) -> None:
    """Review of issue 28, item 2: ``echo note >>`` and then a hand edit of an earlier entry
    used to glue the note onto "beta" for good, and ``remove beta`` deleted it uncopied."""
    for entry in ("alpha", "beta"):
        assert store.add("memory", entry)["success"]
    path = store.path("memory")
    with path.open("a", encoding="utf-8") as shell:
        shell.write("note\n")
    path.write_text(path.read_text(encoding="utf-8").replace("alpha", "ALPHA"), encoding="utf-8")
    assert store.entries("memory") == ["ALPHA", "beta", "note"]
    removed = store.remove("memory", "beta")
    assert removed["removed"] == "beta" and removed["appended"] == ["note"]
    assert store.entries("memory") == ["ALPHA", "note"]
    assert len(list(path.parent.glob("MEMORY.md.bak.*"))) == 1


def test_a_same_line_edit_of_the_last_entry_is_a_hand_edit(store: MemoryStore) -> None:
    """Only text that starts a line counts as appended: "Python 3" made "Python 3.11 and uv"
    in an editor is that entry edited (updated, created kept), not a new ".11 and uv"."""
    for entry in ("User's editor is vim", "Project uses Python 3"):
        assert store.add("memory", entry)["success"]
    path = store.path("memory")
    created = dict(store.dated("memory"))["Project uses Python 3"]
    path.write_text(
        path.read_text(encoding="utf-8").replace("Python 3\n", "Python 3.11 and uv\n"),
        encoding="utf-8",
    )
    assert store.entries("memory") == ["User's editor is vim", "Project uses Python 3.11 and uv"]
    assert store.add("memory", "Tests use pytest")["success"]
    edited = dict(store.dated("memory"))["Project uses Python 3.11 and uv"]
    assert created is not None and edited is not None and edited.created == created.created


def test_an_append_while_a_write_holds_the_lock_is_kept(tmp_path: Path) -> None:
    """``echo >>`` takes no lock: a line appended between a write's read and its rename used
    to be replaced. The file is read again right before the rename; a changed file is
    decided again, its new text kept (split off, copied, reported)."""
    from hermes_core.memory.documents import Decision
    from hermes_core.memory.entries import render_entries
    from hermes_core.memory.file_documents import FileMemoryDocuments

    store = MemoryStore(tmp_path / "memories", scanner=toy_scanner)
    assert store.add("memory", "alpha")["success"]
    documents = FileMemoryDocuments(tmp_path / "memories")
    seen: list[str | None] = []

    def add_beta(text: str | None) -> Decision[str]:
        seen.append(text)
        if len(seen) == 1:  # the shell's append lands while this write holds the lock
            with store.path("memory").open("a", encoding="utf-8") as shell:
                shell.write("note from echo\n")
        return Decision("ok", render_entries([*parse_entries(text or ""), "beta"]), succeeded=True)

    done = documents.update("memory", None, add_beta)
    assert done is not None and done.appended == ("note from echo",)
    assert seen == ["alpha\n", "alpha\n§\nnote from echo"]
    assert store.entries("memory") == ["alpha", "note from echo", "beta"]
    assert len(list(store.path("memory").parent.glob("MEMORY.md.bak.*"))) == 1

    def keeps_appending(text: str | None) -> Decision[str]:
        with store.path("memory").open("a", encoding="utf-8") as shell:
            shell.write("more\n")
        return Decision("ok", "replaced", succeeded=True)

    with pytest.raises(MemoryStoreError, match="changed 3 times"):
        documents.update("memory", None, keeps_appending)
    assert store.raw("memory").endswith("more\nmore\nmore\n")  # nothing was replaced


def test_removing_an_entry_edited_by_hand_keeps_a_copy_first(tmp_path: Path) -> None:
    """A note appended and then the entry it was glued to edited by hand reads as one entry
    the store never wrote: removing it keeps a copy of the text as it was, and says so."""
    store = MemoryStore(tmp_path)
    assert store.add("memory", "alpha one")["success"]
    assert store.add("memory", "beta two")["success"]
    path = tmp_path / "MEMORY.md"
    with path.open("a", encoding="utf-8") as handle:
        handle.write("note three\n")
    path.write_text(path.read_text().replace("beta two", "beta two edited"))
    result = store.remove("memory", "beta two edited")
    assert result["success"] and "kept" in result["message"]
    [copy] = list(tmp_path.glob("MEMORY.md.bak.*"))
    assert "note three" in copy.read_text()
