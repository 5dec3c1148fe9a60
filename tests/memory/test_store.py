"""MemoryStore operations and every refusal: each changes nothing on disk."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from memory_support import toy_scanner

from hermes_core.memory import MemoryStore
from hermes_core.memory.entries import ENTRY_DELIMITER


def fill(store: MemoryStore, *entries: str, target: str = "memory") -> None:
    for entry in entries:
        assert store.add(target, entry)["success"], entry


def file_bytes(store: MemoryStore, target: str = "memory") -> bytes | None:
    path = store.path(target)
    return path.read_bytes() if path.exists() else None


# --- add ---------------------------------------------------------------------------------


def test_add_writes_the_seed_format_and_answers_briefly(store: MemoryStore) -> None:
    first = store.add("memory", "  Project uses uv, not pip  ")
    second = store.add("memory", "Tests run with `tox -e py3`\nand take 2 minutes")
    assert first == {
        "success": True,
        "done": True,
        "message": "Entry added.",
        "usage": "1% — 24/2,200 chars",
    }
    assert second["success"] and "entries" not in second  # no echo of the whole store
    text = store.path("memory").read_text(encoding="utf-8")
    # the seed's format, ending in a newline (a line a shell appends starts a line of its own)
    assert text == "Project uses uv, not pip\n§\nTests run with `tox -e py3`\nand take 2 minutes\n"
    assert store.entries("memory") == [
        "Project uses uv, not pip",
        text.split(ENTRY_DELIMITER)[1].rstrip("\n"),
    ]


def test_duplicate_add_succeeds_without_writing(store: MemoryStore) -> None:
    fill(store, "a fact")
    before = store.path("memory").stat().st_mtime_ns
    result = store.add("memory", "a fact")
    assert result["success"] and "already exists" in result["message"]
    assert store.path("memory").stat().st_mtime_ns == before


@pytest.mark.parametrize(
    ("content", "reason", "words"),
    [
        ("", "invalid", "empty"),
        ("   \n ", "invalid", "empty"),
        (None, "invalid", "string"),
        (42, "invalid", "string"),
        ("first\n§\nsecond", "invalid", "§"),
        ("EVIL plan", "threat", "toy_evil"),
    ],
)
def test_add_refusals_change_nothing(
    store: MemoryStore, content: Any, reason: str, words: str
) -> None:
    fill(store, "keep me")
    before = file_bytes(store)
    result = store.add("memory", content)
    assert result["success"] is False and result["reason"] == reason
    assert words in result["error"]
    assert file_bytes(store) == before


def test_threat_refusal_uses_the_spec_message(store: MemoryStore) -> None:
    result = store.add("user", "the EVIL one")
    assert result["error"] == (
        "Blocked: content matches threat pattern 'toy_evil'. Memory is injected into the "
        "system prompt and must not carry injection or exfiltration payloads."
    )
    assert result["patterns"] == ["toy_evil"]
    assert not store.path("user").exists()


def test_unknown_target_is_an_error_not_an_exception(store: MemoryStore) -> None:
    for call in (
        lambda: store.add("notes", "x"),
        lambda: store.replace("../etc", "x", "y"),
        lambda: store.remove(None, "x"),  # type: ignore[arg-type]
        lambda: store.batch("MEMORY", [{"action": "add", "content": "x"}]),
    ):
        result = call()
        assert result["reason"] == "invalid" and "'memory' or 'user'" in result["error"]
    assert not store.directory.exists()


def test_windows_line_ends_and_a_bom_in_content_are_normalised(store: MemoryStore) -> None:
    fill(store, "\ufeffline one\r\nline two")
    assert store.entries("memory") == ["line one\nline two"]
    assert store.replace("memory", "line one", "x\r\ny")["success"]
    assert store.raw("memory") == "x\ny\n"


# --- limits ------------------------------------------------------------------------------


def test_over_the_limit_lists_entries_and_asks_to_consolidate(memdir: Path) -> None:
    store = MemoryStore(memdir, memory_char_limit=60, scanner=toy_scanner)
    fill(store, "alpha " * 4, "beta " * 4)
    before = file_bytes(store)
    result = store.add("memory", "gamma " * 6)
    assert result["success"] is False and result["reason"] == "over_limit"
    assert "Make room in this turn" in result["error"] and "replace" in result["error"]
    assert result["entries"] == ["alpha alpha alpha alpha", "beta beta beta beta"]
    assert result["usage"] == "75% — 45/60 chars"
    assert file_bytes(store) == before


def test_limits_count_delimiters_and_are_per_target(memdir: Path) -> None:
    store = MemoryStore(memdir, memory_char_limit=7, user_char_limit=3, scanner=toy_scanner)
    assert store.add("memory", "ab")["success"]
    assert store.add("memory", "cd")["success"]  # "ab\n§\ncd" is exactly 7
    assert store.add("memory", "e")["reason"] == "over_limit"
    assert store.add("user", "abc")["success"]
    assert store.add("user", "abcd")["reason"] == "over_limit"


def test_limits_given_as_strings_are_numbers(memdir: Path) -> None:
    store = MemoryStore(memdir, memory_char_limit="5", scanner=toy_scanner)  # type: ignore[arg-type]
    assert store.add("memory", "123456")["reason"] == "over_limit"


# --- replace / remove ----------------------------------------------------------------------


def test_exact_entry_wins_over_a_longer_one_containing_it(store: MemoryStore) -> None:
    fill(store, "prefers tabs over spaces", "tabs")
    result = store.replace("memory", "tabs", "uses 4 spaces")
    assert result["success"] and result["replaced"] == "tabs"
    assert store.entries("memory") == ["prefers tabs over spaces", "uses 4 spaces"]


def test_unique_substring_selects_and_the_result_returns_the_old_text(store: MemoryStore) -> None:
    fill(store, "deploys on Fridays", "likes short answers")
    result = store.remove("memory", "Fridays")
    assert result == {
        "success": True,
        "done": True,
        "message": "Entry removed.",
        "usage": "0% — 19/2,200 chars",
        "removed": "deploys on Fridays",
    }


def test_multiple_matches_show_previews_and_change_nothing(store: MemoryStore) -> None:
    fill(store, "runs pytest -q " + "x" * 200, "runs pytest with coverage")
    before = file_bytes(store)
    result = store.replace("memory", "pytest", "new")
    assert result["reason"] == "multiple" and "multiple entries matched" in result["error"]
    assert len(result["matches"]) == 2 and all(len(m) <= 80 for m in result["matches"])
    assert file_bytes(store) == before


def test_no_match_lists_current_entries(store: MemoryStore) -> None:
    fill(store, "one", "two")
    result = store.remove("memory", "three")
    assert result["reason"] == "no_match" and result["entries"] == ["one", "two"]
    assert store.remove("memory", "  ")["reason"] == "invalid"  # empty old_text


def test_replace_is_scanned_and_limited(memdir: Path) -> None:
    store = MemoryStore(memdir, memory_char_limit=20, scanner=toy_scanner)
    fill(store, "short")
    before = file_bytes(store)
    assert store.replace("memory", "short", "EVIL")["reason"] == "threat"
    assert store.replace("memory", "short", "y" * 21)["reason"] == "over_limit"
    assert file_bytes(store) == before


def test_replace_into_an_existing_entry_merges_them(store: MemoryStore) -> None:
    fill(store, "a", "b")
    assert store.replace("memory", "a", "b")["success"]
    assert store.entries("memory") == ["b"]


def test_a_blocked_entry_can_be_removed_by_its_placeholder(store: MemoryStore) -> None:
    store.path("memory").parent.mkdir(parents=True)
    store.path("memory").write_text("fine\n§\nan EVIL plan", encoding="utf-8")
    shown = store.remove("memory", "nothing like it")["entries"]
    assert shown[0] == "fine" and shown[1].startswith("[BLOCKED: MEMORY.md entry")
    assert "EVIL" not in repr(shown)  # error results use the sanitised view
    result = store.remove("memory", shown[1])
    assert result["success"] and result["removed"] == shown[1]  # never the payload itself
    assert store.entries("memory") == ["fine"]


# --- batch -------------------------------------------------------------------------------


def test_batch_is_all_or_nothing(store: MemoryStore) -> None:
    fill(store, "old fact", "stale")
    before = file_bytes(store)
    bad = store.batch(
        "memory",
        [
            {"action": "replace", "old_text": "old fact", "content": "new fact"},
            {"action": "remove", "old_text": "missing"},
        ],
    )
    assert bad["success"] is False and bad["error"].startswith("operation 2:")
    assert file_bytes(store) == before
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


def test_batch_scans_every_content_first_and_checks_only_the_final_size(memdir: Path) -> None:
    store = MemoryStore(memdir, memory_char_limit=12, scanner=toy_scanner)
    fill(store, "aaaa", "bbbb")
    scanned = store.batch(
        "memory", [{"action": "remove", "old_text": "aaaa"}, {"action": "add", "content": "EVIL"}]
    )
    assert scanned["reason"] == "threat" and scanned["error"].startswith("operation 2:")
    # adding first would overflow on the way, but the final size fits
    swap = store.batch(
        "memory",
        [{"action": "add", "content": "cccc"}, {"action": "remove", "old_text": "aaaa"}],
    )
    assert swap["success"] and store.entries("memory") == ["bbbb", "cccc"]


@pytest.mark.parametrize(
    "operations",
    [[], "add x", [{"action": "drop"}], [{"action": "add"}], [{"action": "remove"}], [3]],
)
def test_batch_argument_errors(store: MemoryStore, operations: Any) -> None:
    result = store.batch("memory", operations)
    assert result["success"] is False and result["reason"] == "invalid"


# --- unreadable and drifted files ----------------------------------------------------------


def test_invalid_utf8_file_is_never_rewritten(store: MemoryStore) -> None:
    path = store.path("memory")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"caf\xe9 notes\n\xa7\nsecond")
    before = path.read_bytes()
    for result in (
        store.add("memory", "x"),
        store.replace("memory", "second", "y"),
        store.remove("memory", "second"),
        store.batch("memory", [{"action": "add", "content": "z"}]),
    ):
        assert result["reason"] == "unreadable"
        assert "not valid UTF-8" in result["error"] and "Nothing was changed" in result["error"]
    assert path.read_bytes() == before


def test_unreadable_file_is_an_error_not_an_empty_store(store: MemoryStore) -> None:
    path = store.path("user")
    path.mkdir(parents=True)  # a directory where the file should be: readable by nobody
    result = store.add("user", "x")
    assert result["reason"] == "unreadable" and "cannot read" in result["error"]
    assert path.is_dir()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads anything")
def test_file_without_read_permission_is_refused(store: MemoryStore) -> None:
    fill(store, "secret")
    store.path("memory").chmod(0)
    assert store.add("memory", "x")["reason"] == "unreadable"


def test_bom_is_tolerated_and_kept_out_of_entries(store: MemoryStore) -> None:
    path = store.path("memory")
    path.parent.mkdir(parents=True)
    path.write_bytes("\ufeffone\n§\ntwo".encode())
    assert store.entries("memory") == ["one", "two"]
    assert store.remove("memory", "one")["success"]
    assert path.read_bytes() == b"two\n"


def test_drift_refuses_rewrites_keeps_one_backup_a_minute_and_add_still_works(
    store: MemoryStore,
) -> None:
    fill(store, "one", "two")
    path = store.path("memory")
    path.write_text("one\n\n§\ntwo\n\nappended by a shell\n\n", encoding="utf-8")
    drifted = path.read_bytes()  # edited inside (a blank line before a separator)
    for result in (
        store.replace("memory", "one", "uno"),
        store.remove("memory", "two"),
        store.batch("memory", [{"action": "remove", "old_text": "one"}]),
    ):
        assert result["reason"] == "drift" and "edited outside" in result["error"]
        assert "memory show --raw" in result["error"]
    assert path.read_bytes() == drifted
    backups = list(path.parent.glob("MEMORY.md.bak.*"))
    assert len(backups) == 1 and backups[0].read_bytes() == drifted
    added = store.add("memory", "three")
    assert added["success"]
    assert path.read_text(encoding="utf-8") == drifted.decode().rstrip("\n") + "\n§\nthree\n"
    assert "appended by a shell" in path.read_text(encoding="utf-8")  # foreign text kept


# --- gates and layout ----------------------------------------------------------------------


def test_disabled_targets_are_neither_shown_nor_writable(memdir: Path) -> None:
    open_store = MemoryStore(memdir, scanner=toy_scanner)
    fill(open_store, "a note")
    fill(open_store, "a preference", target="user")
    store = MemoryStore(memdir, scanner=toy_scanner, user_enabled=False)
    assert store.add("user", "x")["reason"] == "disabled"
    assert "user_profile_enabled" in store.add("user", "x")["error"]
    assert "a preference" not in store.snapshot() and "a note" in store.snapshot()


def test_the_lock_file_is_private(store: MemoryStore) -> None:
    fill(store, "x")
    lock = Path(str(store.path("memory")) + ".lock")
    assert lock.exists() and lock.stat().st_mode & 0o777 == 0o600
    assert store.path("memory").stat().st_mode & 0o777 == 0o600


def test_no_temp_files_are_left_behind(store: MemoryStore) -> None:
    fill(store, "a", "b")
    store.remove("memory", "a")
    leftovers = [p.name for p in store.directory.iterdir() if p.suffix == ".tmp"]
    assert leftovers == []
