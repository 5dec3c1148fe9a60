"""Issue 16 §3: a ``MEMORY.md`` the user made read-only (``chmod 444``) is not rewritten.

A write is a rename, which the file's own permission does not stop, and these tests run as
root, where permission bits stop nothing: so the file backend checks the mode bits itself,
and the test checks that nothing changed (bytes and mode) whoever runs it.
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pytest

from hermes_core.cli import main
from hermes_core.memory import MemoryStore

pytestmark = pytest.mark.usefixtures("isolated_home")


def read_only_file(path: Path, text: str) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.chmod(path, 0o444)
    return path.read_bytes()


def unchanged(path: Path, before: bytes) -> bool:
    return path.read_bytes() == before and stat.S_IMODE(path.stat().st_mode) == 0o444


def test_memory_add_refuses_a_read_only_file_and_changes_nothing(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    path = isolated_home / "memories" / "MEMORY.md"
    before = read_only_file(path, "kept as it is")
    code = main(["memory", "add", "a new fact"])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert f"{path} is read-only (mode 0444)" in err and f"chmod u+w {path}" in err
    assert unchanged(path, before)
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []  # no temp


@pytest.mark.parametrize(
    "argv",
    [
        ["memory", "replace", "kept", "changed"],
        ["memory", "remove", "kept"],
        ["memory", "reset", "--target", "memory", "--yes"],
    ],
)
def test_every_write_and_the_reset_respect_it(
    capsys: pytest.CaptureFixture[str], isolated_home: Path, argv: list[str]
) -> None:
    path = isolated_home / "memories" / "MEMORY.md"
    before = read_only_file(path, "kept as it is")
    assert main(argv) == 1
    assert "is read-only" in capsys.readouterr().err
    assert unchanged(path, before)
    assert list(path.parent.glob("MEMORY.md.bak.*")) == []


def test_the_store_refuses_with_its_own_reason_and_a_user_file_too(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memories")
    path = tmp_path / "memories" / "USER.md"
    before = read_only_file(path, "Name: Sam")
    result = store.add("user", "likes tea")
    assert result["success"] is False and result["reason"] == "read_only_file"
    assert "Nothing was changed" in result["error"]
    assert unchanged(path, before)
    os.chmod(path, 0o644)  # made writable again: writes go through
    assert store.add("user", "likes tea")["success"] is True


def test_a_staged_write_is_not_approved_into_a_read_only_file(
    capsys: pytest.CaptureFixture[str], isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (isolated_home / "config.yaml").write_text("memory:\n  write_approval: stage\n")
    assert main(["memory", "add", "a staged fact"]) == 0
    path = isolated_home / "memories" / "MEMORY.md"
    before = read_only_file(path, "kept as it is")
    capsys.readouterr()
    monkeypatch.setattr("sys.stdin", io.StringIO("yes\n"))  # the person read it and agrees
    assert main(["memory", "approve", "all"]) == 1
    assert "is read-only" in capsys.readouterr().err
    assert unchanged(path, before)
    assert len(list((isolated_home / "pending" / "memory").glob("*.json"))) == 1  # still staged
