"""Issue 27 item 7: read commands never create or change anything.

A mistyped ``--home`` is refused and creates nothing; ``sessions`` on a home without its
``state.db`` says there are none and creates none; the session commands read a read-only
``state.db`` (file 0444, folder 0555). Every test runs the real command line against real
files and compares the whole directory tree, bytes and modes, before and after."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.cli import main
from hermes_core.sessions.sqlite import SQLiteSessionStore

READS = [
    ["memory", "show"],
    ["memory", "pending"],
    ["memory", "audit"],
    ["skills", "list"],
    ["sessions", "list"],
    ["sessions", "search", "deploy"],
    ["sessions", "show", "s1"],
    ["config", "show"],
    ["config", "check"],
    ["plugins"],
]


def _tree(root: Path) -> dict[str, tuple[int, str]]:
    """Every path under ``root`` with its mode and content digest (folders: mode only)."""
    found: dict[str, tuple[int, str]] = {".": (stat.S_IMODE(root.stat().st_mode), "")}
    for path in sorted(root.rglob("*")):
        mode = stat.S_IMODE(path.lstat().st_mode)
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        found[str(path.relative_to(root))] = (mode, digest)
    return found


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home that has been used: a memory entry (through the command line) and a session."""
    for name in list(os.environ):
        if name.startswith("HERMES__"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "elsewhere"))  # only --home picks it
    assert main(["--home", str(home), "memory", "add", "the deploy runs on Fridays"]) == 0
    store = SQLiteSessionStore(home / "state.db")
    store.open_session("s1", user_id=None)
    store.append_messages("s1", [{"role": "user", "content": "how does the deploy work?"}])
    store.close()
    return home


@pytest.fixture
def read_only(home: Path) -> Iterator[Path]:
    """``home`` with ``state.db`` 0444 and the folder 0555 (restored for the cleanup)."""
    db = home / "state.db"
    db.chmod(0o444)
    home.chmod(0o555)
    yield home
    home.chmod(0o755)
    db.chmod(0o644)


@pytest.mark.parametrize("command", READS, ids=" ".join)
def test_a_read_command_changes_nothing(home: Path, command: list[str]) -> None:
    before = _tree(home)
    assert main(["--home", str(home), *command]) == 0
    assert _tree(home) == before


@pytest.mark.parametrize("command", READS, ids=" ".join)
@pytest.mark.parametrize("typo", ["missing", "empty"])
def test_a_mistyped_home_is_refused_and_nothing_is_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], typo: str
) -> None:
    parent = tmp_path / "parent"
    parent.mkdir()
    target = parent / "hoem"
    if typo == "empty":
        target.mkdir()
    before = _tree(parent)
    assert main(["--home", str(target), *command]) == 2
    assert "--home" in capsys.readouterr().err
    assert _tree(parent) == before


@pytest.mark.parametrize("command", [["tokens"], ["validate"]])
def test_the_file_commands_create_no_home(tmp_path: Path, command: list[str]) -> None:
    """``tokens`` and ``validate`` read a file, not the home: a missing --home stays missing."""
    example = Path(__file__).resolve().parents[2] / "examples" / "coding-session.json"
    before = _tree(tmp_path)
    assert main(["--home", str(tmp_path / "hoem"), *command, str(example)]) == 0
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("action", [["list"], ["search", "deploy"]])
def test_sessions_on_a_home_without_state_db_creates_none(
    home: Path, capsys: pytest.CaptureFixture[str], action: list[str]
) -> None:
    (home / "state.db").unlink()
    before = _tree(home)
    assert main(["--home", str(home), "sessions", *action]) == 0
    assert _tree(home) == before
    assert not (home / "state.db").exists()
    assert main(["--home", str(home), "sessions", "show", "s1"]) == 1
    assert "no such session" in capsys.readouterr().err
    assert _tree(home) == before


def test_the_session_commands_read_a_read_only_state_db(
    read_only: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _tree(read_only)
    assert main(["--home", str(read_only), "sessions", "list", "--json"]) == 0
    assert '"s1"' in capsys.readouterr().out
    assert main(["--home", str(read_only), "sessions", "search", "deploy"]) == 0
    assert "deploy" in capsys.readouterr().out
    assert main(["--home", str(read_only), "sessions", "show", "s1"]) == 0
    assert "how does the deploy work?" in capsys.readouterr().out
    assert _tree(read_only) == before


def test_the_read_only_store_cannot_write_and_leaves_no_side_files(home: Path) -> None:
    """What the session commands open: SQLite in ``mode=ro``/``immutable`` (root ignores
    chmod, so this shows the read-only open itself, wherever the suite runs)."""
    from hermes_core.errors import SessionError

    before = _tree(home)
    store = SQLiteSessionStore(home / "state.db", read_only=True)
    try:
        assert [r.id for r in store.list_sessions(user_id=None)] == ["s1"]
        with pytest.raises(SessionError, match=r"(?i)read.?only"):
            store.open_session("s2", user_id=None)
    finally:
        store.close()
    assert _tree(home) == before
    with pytest.raises(SessionError, match="nothing was created"):
        SQLiteSessionStore(home / "absent.db", read_only=True)
    assert not (home / "absent.db").exists()
