"""The prompt blocks, rescanning at load, and isolation between user ids."""

from __future__ import annotations

from pathlib import Path

import pytest
from memory_support import toy_scanner

from hermes_core.memory import MemoryStore
from hermes_core.memory.layout import safe_user_id, target_path
from hermes_core.memory.snapshot import BLOCK_RULE

RULE = "═" * 46


def test_block_format(store: MemoryStore) -> None:
    assert store.snapshot() == ""  # an empty store renders nothing
    store.add("memory", "entry one")
    store.add("memory", "entry two")
    store.add("user", "likes brevity")
    assert BLOCK_RULE == RULE
    assert store.snapshot() == (
        f"{RULE}\nMEMORY (your personal notes) [0% — 21/2,200 chars]\n{RULE}\n"
        "entry one\n§\nentry two\n\n"
        f"{RULE}\nUSER PROFILE (who the user is) [0% — 13/1,375 chars]\n{RULE}\n"
        "likes brevity"
    )


def test_a_planted_entry_is_blocked_in_the_prompt_but_kept_on_disk(store: MemoryStore) -> None:
    store.add("memory", "a fine note")
    path = store.path("memory")
    path.write_text(path.read_text(encoding="utf-8") + "\n§\nplanted EVIL entry", "utf-8")
    snapshot = store.snapshot()
    assert "EVIL" not in snapshot and "a fine note" in snapshot
    assert (
        "[BLOCKED: MEMORY.md entry matched threat pattern(s): toy_evil. Removed from the "
        "system prompt; use memory remove to delete the original.]"
    ) in snapshot
    assert "planted EVIL entry" in store.raw("memory")
    assert "planted EVIL entry" in store.entries("memory")


@pytest.mark.parametrize(
    ("user_id", "plain"),
    [
        ("alice", True),
        ("user-42@example.test", True),
        ("Alice", False),  # case-insensitive file systems would merge Alice and alice
        ("../../etc", False),
        ("a/b", False),
        ("..", False),
        (".hidden", False),
        ("x" * 65, False),
        ("名前", False),
        ("a\x00b", False),
    ],
)
def test_user_ids_map_to_one_safe_directory_each(user_id: str, plain: bool, tmp_path: Path) -> None:
    name = safe_user_id(user_id)
    assert (name == user_id) is plain
    assert "/" not in name and "\\" not in name and name not in (".", "..")
    path = target_path(tmp_path, "user", user_id)
    assert path.resolve().is_relative_to((tmp_path / "users").resolve())
    assert safe_user_id(user_id) == name  # stable


def test_hashed_and_plain_names_never_collide() -> None:
    hashed = safe_user_id("Alice")
    assert hashed.startswith("_") and safe_user_id(hashed) != hashed


def test_empty_user_id_is_refused() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        safe_user_id("")


def test_two_users_never_see_each_other(memdir: Path) -> None:
    alice = MemoryStore(memdir, scanner=toy_scanner, user_id="alice")
    bob = MemoryStore(memdir, scanner=toy_scanner, user_id="bob")
    nobody = MemoryStore(memdir, scanner=toy_scanner)
    assert alice.add("user", "Alice is vegetarian")["success"]
    assert bob.add("user", "Bob writes Rust")["success"]
    assert alice.add("memory", "shared: the repo uses uv")["success"]
    assert "Bob" not in alice.snapshot() and "Alice" in alice.snapshot()
    assert "Alice" not in bob.snapshot() and "Bob" in bob.snapshot()
    assert "shared: the repo uses uv" in bob.snapshot()  # MEMORY.md is shared by default
    assert "Alice" not in nobody.snapshot() and "Bob" not in nobody.snapshot()
    assert bob.remove("user", "vegetarian")["reason"] == "no_match"  # cannot reach Alice's
    assert alice.path("user") == memdir / "users" / "alice" / "USER.md"
    assert nobody.path("user") == memdir / "USER.md"  # the seed's layout without a user id


def test_per_user_memory_splits_memory_md_too(memdir: Path) -> None:
    alice = MemoryStore(memdir, scanner=toy_scanner, user_id="alice", per_user_memory=True)
    bob = MemoryStore(memdir, scanner=toy_scanner, user_id="bob", per_user_memory=True)
    alice.add("memory", "alice's project is in Go")
    assert "Go" not in bob.snapshot()
    assert alice.path("memory") == memdir / "users" / "alice" / "MEMORY.md"


def test_a_bad_user_id_fails_when_the_store_is_made(memdir: Path) -> None:
    with pytest.raises(ValueError, match="non-empty"):
        MemoryStore(memdir, scanner=toy_scanner, user_id="")
