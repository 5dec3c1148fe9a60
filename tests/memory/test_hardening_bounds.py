"""Issue 11 §2.3: bounded on load. A hand-edited MEMORY.md of 25,000 short entries (1.2 MB)
used to go whole into every system prompt, and the tool's over-limit answer listed every
entry. The snapshot shows the oldest entries that fit in the limit and a line saying how many
were left out and what to do; every tool answer lists at most MAX_LISTED entries, with the
count. Sizes are asserted in characters, never in time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from memory_support import toy_scanner

from hermes_core.memory import MemoryStore
from hermes_core.memory.approval import MemoryWriter, PendingWrites
from hermes_core.memory.entries import ENTRY_DELIMITER
from hermes_core.memory.tool import MemoryTool

COUNT = 25_000
MAX_LISTED = 100  # hermes_core.memory.plan.MAX_LISTED (checked below)
MAX_PLACEHOLDERS = 8  # hermes_core.memory.snapshot.MAX_PLACEHOLDERS (checked below)
LIMIT = 2_200
# what the block adds around its entries: rules, title, and the left-out line
FRAME = 1_000


def big_file(memdir: Path, count: int = COUNT, name: str = "MEMORY.md") -> list[str]:
    entries = [f"note {n:05d}: the build server rotates its logs every night" for n in range(count)]
    path = memdir / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(ENTRY_DELIMITER.join(entries), encoding="utf-8")
    return entries


def call(tool: MemoryTool, arguments: dict[str, Any]) -> tuple[dict[str, Any], int]:
    answer = tool.handle(arguments)
    result: dict[str, Any] = json.loads(answer)
    return result, len(answer)


@pytest.fixture
def tool(store: MemoryStore, tmp_path: Path) -> MemoryTool:
    return MemoryTool(MemoryWriter(store, PendingWrites(tmp_path / "pending")))


def test_the_file_of_the_report_is_big(memdir: Path) -> None:
    entries = big_file(memdir)
    assert len((memdir / "MEMORY.md").read_text(encoding="utf-8")) > 1_000_000
    assert len(entries) == COUNT


def test_the_prompt_is_bounded_and_says_what_was_left_out(store: MemoryStore, memdir: Path) -> None:
    entries = big_file(memdir)
    snapshot = store.snapshot()
    assert len(snapshot) <= LIMIT + FRAME  # was 1,180,703 characters
    body, note = snapshot.split("\n", 3)[3].rsplit("\n", 1)
    shown = body.split(ENTRY_DELIMITER)
    assert shown == entries[: len(shown)]  # oldest first, in file order
    assert len(shown) > 30  # the limit's worth, not a token amount
    left_out = COUNT - len(shown)
    assert note.startswith(f"[{left_out:,} more MEMORY.md entries (")
    assert "hermes-context memory show --raw" in note and "remove" in note
    on_disk = len(ENTRY_DELIMITER.join(entries))
    assert f"{on_disk:,}/2,200 chars" in snapshot  # the header still counts the whole file


def test_every_tool_answer_is_bounded(store: MemoryStore, memdir: Path, tool: MemoryTool) -> None:
    entries = big_file(memdir)
    full, size = call(tool, {"action": "add", "target": "memory", "content": "one more"})
    assert full["reason"] == "over_limit" and size <= 2 * LIMIT + FRAME
    assert len(full["entries"]) <= MAX_LISTED and full["entries_total"] == COUNT
    assert full["entries"] == entries[: len(full["entries"])]
    assert f"of {COUNT:,} entries are listed" in full["error"]
    tool.new_turn()
    many, size = call(tool, {"action": "remove", "target": "memory", "old_text": "build server"})
    assert many["reason"] == "multiple" and size <= MAX_LISTED * 100 + FRAME  # short previews
    assert len(many["matches"]) == MAX_LISTED and many["matches_total"] == COUNT
    none, size = call(tool, {"action": "remove", "target": "memory", "old_text": "no such note"})
    assert none["reason"] == "no_match" and size <= 2 * LIMIT + FRAME
    assert none["entries_total"] == COUNT


def test_the_file_can_still_be_cleaned_up(store: MemoryStore, memdir: Path) -> None:
    big_file(memdir)
    result = store.remove("memory", "note 24999:")
    assert result["success"] and len(str(result)) < LIMIT
    assert len(store.entries("memory")) == COUNT - 1


def test_a_single_huge_entry_is_never_echoed_whole(store: MemoryStore, memdir: Path) -> None:
    memdir.mkdir(parents=True)
    huge = ("a hand-pasted log line " * 40_000).strip()  # 920,000 characters in one entry
    (memdir / "MEMORY.md").write_text(f"first note\n§\n{huge}\n§\nlast note", encoding="utf-8")
    snapshot = store.snapshot()
    assert len(snapshot) <= LIMIT + FRAME and "first note" in snapshot
    assert "[2 more MEMORY.md entries" in snapshot
    result = store.replace("memory", "a hand-pasted log line a hand", "a short summary")
    assert result["success"] and len(result["replaced"]) <= LIMIT + 100
    assert result["replaced"].endswith(f"({len(huge):,} chars in all)")


def test_many_blocked_entries_do_not_blow_up_the_prompt(store: MemoryStore, memdir: Path) -> None:
    memdir.mkdir(parents=True)
    planted = [f"EVIL {n}" for n in range(2_000)]
    (memdir / "USER.md").write_text(ENTRY_DELIMITER.join(planted), encoding="utf-8")
    snapshot = store.snapshot()
    assert snapshot.count("[BLOCKED: USER.md entry") == MAX_PLACEHOLDERS
    assert len(snapshot) <= 1_375 + MAX_PLACEHOLDERS * 200 + FRAME
    assert "EVIL" not in snapshot


def test_a_file_within_its_limit_is_shown_whole(store: MemoryStore) -> None:
    for n in range(40):
        assert store.add("memory", f"fact number {n} about the deploy")["success"]
    store.path("memory").write_text(
        store.raw("memory") + "\n§\nplanted EVIL entry", encoding="utf-8"
    )  # a placeholder longer than the entry it replaces must not push entries out
    snapshot = store.snapshot()
    assert all(f"fact number {n} about" in snapshot for n in range(40))
    assert "more MEMORY.md" not in snapshot and "[BLOCKED: MEMORY.md entry matched" in snapshot


def test_a_lowered_limit_shows_the_oldest_entries(memdir: Path) -> None:
    store = MemoryStore(memdir, scanner=toy_scanner)
    for n in range(10):
        assert store.add("memory", f"fact {n}")["success"]
    lowered = MemoryStore(memdir, memory_char_limit=30, scanner=toy_scanner)
    snapshot = lowered.snapshot()
    assert "fact 0\n§\nfact 1\n§\nfact 2" in snapshot and "fact 9" not in snapshot
    assert "[7 more MEMORY.md entries (" in snapshot


def test_the_bounds_used_here_are_the_stores() -> None:
    from hermes_core.memory import plan, snapshot

    assert (plan.MAX_LISTED, snapshot.MAX_PLACEHOLDERS) == (MAX_LISTED, MAX_PLACEHOLDERS)
