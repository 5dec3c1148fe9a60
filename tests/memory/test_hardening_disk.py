"""Issue 11 §2.6: a full disk. A backup that fails leaves no file behind and is not reported
as made (the copy is written to a temp file and renamed only once complete), so no later
message points to a 0-byte ``.bak``; a reset whose copy fails deletes nothing. The disk fills
deterministically: an injected writer raising ENOSPC mid-write, or RLIMIT_FSIZE in a forked
process (a real short write from the kernel). No test waits for time."""

from __future__ import annotations

import errno
import io
import multiprocessing
import os
import signal
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pytest
from memory_support import toy_scanner

from hermes_core.cli import main
from hermes_core.memory import MemoryStore, files

# trailing blank lines: not what the store writes (drift), and 3 KB, past the rlimit below
DRIFTED = "first entry\n§\nsecond entry, typed by hand " + "x" * 3_000 + "\n\n\n"
FORK = multiprocessing.get_context("fork") if hasattr(os, "fork") else None


class FullDisk:
    """Writes half of what it is given, then fails as a full disk does."""

    def __init__(self) -> None:
        self.failures = 0

    def __call__(self, fd: int, data: bytes) -> None:
        os.write(fd, data[: len(data) // 2])
        self.failures += 1
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> FullDisk:
    writer = FullDisk()
    monkeypatch.setattr(files, "_write_all", writer)
    return writer


def drifted(store: MemoryStore) -> Path:
    path = store.path("memory")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(DRIFTED, encoding="utf-8")
    return path


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if ".bak" in p.name or p.suffix == ".tmp")


def test_a_failed_drift_copy_leaves_nothing_and_is_not_reported(
    store: MemoryStore, full_disk: FullDisk, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = drifted(store)
    for _ in range(2):  # the second refusal must not point to a copy from the first
        result = store.remove("memory", "first entry")
        assert result["reason"] == "drift"
        assert "No copy could be saved (No space left on device)" in result["error"]
        assert ".bak" not in result["error"]
        assert leftovers(path.parent) == []
    assert full_disk.failures == 2
    assert path.read_text(encoding="utf-8") == DRIFTED
    monkeypatch.undo()  # space again: the copy is made, whole
    result = store.remove("memory", "first entry")
    copies = list(path.parent.glob("MEMORY.md.bak.*"))
    assert len(copies) == 1 and copies[0].name in result["error"]
    assert copies[0].read_text(encoding="utf-8") == DRIFTED


def test_a_failed_write_changes_nothing_and_leaves_no_temp(
    store: MemoryStore, full_disk: FullDisk
) -> None:
    path = store.path("memory")
    path.parent.mkdir(parents=True)
    path.write_text("kept", encoding="utf-8")
    result = store.add("memory", "lost?")
    assert result["reason"] == "io" and "No space left on device" in result["error"]
    assert "Nothing was changed" in result["error"]
    assert path.read_text(encoding="utf-8") == "kept" and leftovers(path.parent) == []


def test_a_reset_whose_copy_fails_deletes_nothing(store: MemoryStore, full_disk: FullDisk) -> None:
    assert isinstance(files._write_all, FullDisk)
    path = store.path("user")
    path.parent.mkdir(parents=True)
    path.write_text("likes tea", encoding="utf-8")
    result = store.reset("user")
    assert result["success"] is False and result["reason"] == "io"
    assert "Nothing was deleted" in result["error"]
    assert path.read_text(encoding="utf-8") == "likes tea" and leftovers(path.parent) == []


@pytest.mark.usefixtures("full_disk")
def test_cli_reset_on_a_full_disk_exits_1_and_keeps_the_file(
    capsys: pytest.CaptureFixture[str], isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = isolated_home / "memories" / "MEMORY.md"
    path.parent.mkdir(parents=True)
    path.write_text("to be kept", encoding="utf-8")
    monkeypatch.setattr("sys.stdin", io.StringIO("yes\n"))
    code = main(["memory", "reset"])
    out, err = capsys.readouterr()
    assert (
        code == 1
        and "Nothing was deleted" in err
        and "deleted" not in out.replace("will delete", "")
    )
    assert path.read_text(encoding="utf-8") == "to be kept" and leftovers(path.parent) == []


# --- a real short write: RLIMIT_FSIZE in a forked process --------------------------------------


def _with_small_file_limit(directory: str, action: str, report: Connection) -> None:
    import resource

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (1_000, resource.RLIM_INFINITY))
    store = MemoryStore(directory, scanner=toy_scanner, memory_char_limit=10**6)
    drift = action == "drift"
    result: dict[str, Any] = store.remove("memory", "first") if drift else store.reset("memory")
    report.send(result)


@pytest.mark.skipif(FORK is None or not hasattr(signal, "SIGXFSZ"), reason="needs fork, rlimit")
@pytest.mark.parametrize("action", ["drift", "reset"])
def test_a_short_write_from_the_kernel_leaves_no_partial_copy(
    store: MemoryStore, action: str
) -> None:
    assert FORK is not None
    path = drifted(store)
    receive, send = FORK.Pipe(duplex=False)
    proc = FORK.Process(target=_with_small_file_limit, args=(str(path.parent), action, send))
    proc.start()
    send.close()
    assert receive.poll(60)
    result = receive.recv()
    proc.join(30)
    assert proc.exitcode == 0
    assert result["success"] is False
    if action == "drift":
        assert result["reason"] == "drift" and "No copy could be saved" in result["error"]
    else:
        assert result["reason"] == "io" and "Nothing was deleted" in result["error"]
    assert ".bak." not in result["error"]
    assert leftovers(path.parent) == []
    assert path.read_text(encoding="utf-8") == DRIFTED
