"""Issue 11 §2.4: symbolic links. Nothing is read or written through a link that leaves the
memory home (a clear error, nothing changed), no directory is made outside it, a link that
stays inside is followed, and the lock is the real file's, so two paths to one file share one
lock. Real links, and real processes writing through them."""

from __future__ import annotations

import multiprocessing
import os
import stat
from pathlib import Path

import pytest
from memory_support import toy_scanner

from hermes_core.errors import MemoryStoreError
from hermes_core.memory import MemoryStore
from hermes_core.memory.entries import parse_entries
from hermes_core.types import Finding

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
FORK = multiprocessing.get_context("fork") if hasattr(os, "fork") else None
needs_fork = pytest.mark.skipif(FORK is None, reason="needs fork")
BIG = 10**7
WORKERS, WRITES = 4, 60  # 240 writes, as in the report


def no_threats(text: str) -> list[Finding]:
    return []


def opened(directory: Path, **kwargs: object) -> MemoryStore:
    return MemoryStore(
        directory,
        memory_char_limit=BIG,
        user_char_limit=BIG,
        scanner=no_threats,
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside every memory home, with a file that must never change."""
    directory = tmp_path / "elsewhere"
    directory.mkdir()
    secret = directory / "secret"
    secret.write_text("API_TOKEN=do-not-show-me", encoding="utf-8")
    secret.chmod(0o640)
    return directory


def untouched(path: Path, before: os.stat_result, text: str) -> None:
    after = path.stat()
    assert path.read_text(encoding="utf-8") == text
    assert (after.st_ino, after.st_mode, after.st_uid, after.st_mtime_ns) == (
        before.st_ino,
        before.st_mode,
        before.st_uid,
        before.st_mtime_ns,
    )


def test_a_link_out_of_the_home_never_reaches_the_prompt(store: MemoryStore, outside: Path) -> None:
    store.directory.mkdir(parents=True)
    store.path("user").symlink_to(outside / "secret")
    store.add("memory", "a fine note")
    snapshot = store.snapshot()
    assert "do-not-show-me" not in snapshot and "a fine note" in snapshot
    with pytest.raises(MemoryStoreError, match="outside the memory home"):
        store.raw("user")
    with pytest.raises(MemoryStoreError, match="replace the link with a regular file"):
        store.entries("user")


def test_a_write_through_a_link_out_of_the_home_is_refused(
    store: MemoryStore, outside: Path
) -> None:
    rc = outside / "bashrc"
    rc.write_text("export PATH=$HOME/bin:$PATH\n", encoding="utf-8")
    rc.chmod(0o644)
    before = rc.stat()
    store.directory.mkdir(parents=True)
    store.path("memory").symlink_to(rc)
    for result in (
        store.add("memory", "appended"),
        store.replace("memory", "PATH", "x"),
        store.remove("memory", "PATH"),
        store.batch("memory", [{"action": "add", "content": "y"}]),
    ):
        assert result["success"] is False and result["reason"] == "unsafe_path"
        assert "outside the memory home" in result["error"]
        assert "Nothing was read or changed" in result["error"]
    untouched(rc, before, "export PATH=$HOME/bin:$PATH\n")
    assert store.path("memory").is_symlink()
    assert not list(outside.glob("*.lock")) and not list(outside.glob(".*tmp"))


def test_dangling_links_make_no_directory_outside_the_home(memdir: Path, outside: Path) -> None:
    store = opened(memdir, user_id="alice")
    memdir.mkdir(parents=True)
    store.path("memory").symlink_to(outside / "new" / "deeper" / "MEMORY.md")
    (memdir / "users").mkdir()
    (memdir / "users" / "alice").symlink_to(outside / "alice-home")
    assert store.add("memory", "x")["reason"] == "unsafe_path"
    assert store.add("user", "y")["reason"] == "unsafe_path"
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]


def test_a_memory_home_that_is_a_dangling_link_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "memories"
    home.symlink_to(tmp_path / "gone")
    store = opened(home)
    result = store.add("memory", "x")
    assert result["reason"] == "unsafe_path" and "not a directory" in result["error"]
    assert not (tmp_path / "gone").exists()


def test_a_home_that_is_a_link_to_a_directory_is_used(tmp_path: Path) -> None:
    (tmp_path / "real-memories").mkdir()
    (tmp_path / "memories").symlink_to(tmp_path / "real-memories")
    store = opened(tmp_path / "memories")
    assert store.add("memory", "x")["success"]
    assert (tmp_path / "real-memories" / "MEMORY.md").read_text(encoding="utf-8") == "x\n"


def test_a_link_inside_the_home_is_followed_and_locks_the_real_file(memdir: Path) -> None:
    shared = opened(memdir)
    alice = opened(memdir, user_id="alice", per_user_memory=True)
    assert shared.add("memory", "shared fact")["success"]
    alice.path("memory").parent.mkdir(parents=True)
    alice.path("memory").symlink_to(Path("..", "..", "MEMORY.md"))
    assert alice.real_path("memory") == shared.real_path("memory")
    assert alice.add("memory", "alice's fact")["success"]
    assert shared.entries("memory") == ["shared fact", "alice's fact"]
    assert alice.path("memory").is_symlink()
    locks = sorted(p.relative_to(memdir).as_posix() for p in memdir.rglob("*.lock"))
    assert locks == ["MEMORY.md.lock"]  # one lock, the real file's


def test_a_planted_lock_link_is_refused_and_its_target_kept(
    store: MemoryStore, outside: Path
) -> None:
    before = (outside / "secret").stat()
    store.directory.mkdir(parents=True)
    Path(str(store.path("memory")) + ".lock").symlink_to(outside / "secret")
    result = store.add("memory", "x")
    assert result["success"] is False and ".lock is a symbolic link" in result["error"]
    untouched(outside / "secret", before, "API_TOKEN=do-not-show-me")


def test_a_fifo_in_place_of_the_file_does_not_hang(store: MemoryStore) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("needs mkfifo")
    store.directory.mkdir(parents=True)
    os.mkfifo(store.path("memory"))
    result = store.add("memory", "x")
    assert result["reason"] == "unreadable" and "not a regular file" in result["error"]
    assert stat.S_ISFIFO(store.path("memory").stat().st_mode)


def test_a_write_keeps_the_mode_of_the_file(store: MemoryStore) -> None:
    store.add("memory", "x")
    store.path("memory").chmod(0o640)
    store.add("memory", "y")
    assert stat.S_IMODE(store.path("memory").stat().st_mode) == 0o640


# --- real processes through links ------------------------------------------------------------


def _write_many(
    directory: str, worker: int, user_id: str | None, per_user: bool, out: object
) -> None:
    store = opened(Path(directory), user_id=user_id, per_user_memory=per_user)
    landed = []
    reasons = set()
    for n in range(WRITES):
        entry = f"worker {worker} entry {n}"
        result = store.add("memory", entry)
        if result["success"]:
            landed.append(entry)
        else:
            reasons.add(result["reason"])
    out.put((worker, landed, sorted(reasons)))  # type: ignore[attr-defined]  # a Queue


def _run(jobs: list[tuple[Path, str | None, bool]]) -> dict[int, tuple[list[str], list[str]]]:
    assert FORK is not None
    out = FORK.Queue()
    procs = [
        FORK.Process(target=_write_many, args=(str(d), w, user, per_user, out))
        for w, (d, user, per_user) in enumerate(jobs)
    ]
    for proc in procs:
        proc.start()
    results = {}
    for _ in procs:
        worker, landed, reasons = out.get(timeout=120)
        results[worker] = (landed, reasons)
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    return results


@needs_fork
def test_two_homes_linking_one_target_outside_are_refused_never_lost(
    tmp_path: Path, outside: Path
) -> None:
    target = outside / "MEMORY.md"
    target.write_text("kept", encoding="utf-8")
    homes = [tmp_path / "home1" / "memories", tmp_path / "home2" / "memories"]
    for home in homes:
        home.mkdir(parents=True)
        (home / "MEMORY.md").symlink_to(target)
    results = _run([(homes[w % 2], None, False) for w in range(WORKERS)])
    assert all(landed == [] and reasons == ["unsafe_path"] for landed, reasons in results.values())
    assert target.read_text(encoding="utf-8") == "kept"


@needs_fork
def test_a_home_linking_into_another_home_is_refused_and_the_other_loses_nothing(
    tmp_path: Path,
) -> None:
    first, second = tmp_path / "home1" / "memories", tmp_path / "home2" / "memories"
    first.mkdir(parents=True)
    second.mkdir(parents=True)
    (first / "MEMORY.md").write_text("kept", encoding="utf-8")
    (second / "MEMORY.md").symlink_to(first / "MEMORY.md")
    results = _run([(first if w % 2 == 0 else second, None, False) for w in range(WORKERS)])
    reported = {e for landed, _ in results.values() for e in landed}
    assert all(not results[w][0] for w in range(1, WORKERS, 2))  # the linking home: refused
    assert len(reported) == WORKERS // 2 * WRITES
    entries = parse_entries((first / "MEMORY.md").read_text(encoding="utf-8"))
    assert set(entries) == reported | {"kept"}


@needs_fork
def test_two_paths_to_one_file_share_one_lock_and_every_write_lands(memdir: Path) -> None:
    alice_memory = memdir / "users" / "alice" / "MEMORY.md"
    alice_memory.parent.mkdir(parents=True)
    (memdir / "MEMORY.md").write_text("kept", encoding="utf-8")
    alice_memory.symlink_to(Path("..", "..", "MEMORY.md"))
    jobs = [(memdir, None, False), (memdir, "alice", True)] * (WORKERS // 2)
    results = _run(jobs)
    reported = {e for landed, _ in results.values() for e in landed}
    entries = parse_entries((memdir / "MEMORY.md").read_text(encoding="utf-8"))
    assert reported - set(entries) == set()  # no reported write is lost
    assert len(reported) == WORKERS * WRITES  # and all 240 were reported
    assert set(entries) == reported | {"kept"}
    assert alice_memory.is_symlink()


def test_toy_scanner_still_blocks_through_an_inside_link(memdir: Path) -> None:
    store = MemoryStore(memdir, scanner=toy_scanner)
    (memdir / "real").mkdir(parents=True)
    (memdir / "real" / "MEMORY.md").write_text("a\n§\nEVIL b", encoding="utf-8")
    store.path("memory").symlink_to(Path("real", "MEMORY.md"))
    assert "EVIL" not in store.snapshot() and "[BLOCKED" in store.snapshot()


def test_a_pending_record_that_is_a_link_is_not_read(tmp_path: Path, outside: Path) -> None:
    from hermes_core.memory.approval import PendingWrites

    record = outside / "record.json"
    record.write_text(
        '{"id": "0000beef", "action": "add", "target": "memory", "origin": "cli", '
        '"created": 1.0, "content": "planted from outside"}',
        encoding="utf-8",
    )
    pending = PendingWrites(tmp_path / "pending")
    pending.directory.mkdir()
    (pending.directory / "0000beef.json").symlink_to(record)
    with pytest.raises(KeyError, match="symbolic link"):
        pending.get("0000beef")
    assert pending.all() == ([], ["0000beef"])
