"""Issue 27 item 7: read commands never create or change anything.

A mistyped ``--home`` is refused and creates nothing; ``sessions`` on a home without its
``state.db`` says there are none and creates none; the session commands read a read-only
``state.db`` (file 0444, folder 0555). Every test runs the real command line against real
files and compares the whole directory tree, bytes and modes, before and after."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.cli import main
from hermes_core.sessions.sqlite import SQLiteSessionStore

ROOT = Path(__file__).resolve().parents[2]

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


def _tree(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every path under ``root`` with its mode, mtime and content digest (folders: no digest)."""
    found: dict[str, tuple[int, int, str]] = {}
    for path in [root, *sorted(root.rglob("*"))]:
        info = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        found[str(path.relative_to(root))] = (stat.S_IMODE(info.st_mode), info.st_mtime_ns, digest)
    return found


def _without_file_privileges() -> None:
    """As root, drop the capabilities that ignore file modes (``CAP_DAC_OVERRIDE``,
    ``CAP_DAC_READ_SEARCH``, ``CAP_FOWNER``) from the child for good: its files' 0444/0555
    then apply to it, as they do to any user. (Switching to ``nobody`` would be simpler, but
    the interpreter may live where ``nobody`` cannot reach it, such as under ``/root``.)"""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2, 3):
        if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP: gone after exec too
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _cli(home: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """The real command line in a child process, bound by file modes even as root."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "hermes_core", "--home", str(home), *command],
        cwd=home.parent,
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=_without_file_privileges if os.geteuid() == 0 else None,
        check=False,
    )


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


def test_the_session_commands_read_a_read_only_state_db(read_only: Path) -> None:
    """Run bound by file modes (as root they would not apply otherwise): a command that
    opened the store for writing, or wrote beside it, fails here."""
    before = _tree(read_only)
    listed = _cli(read_only, "sessions", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert '"s1"' in listed.stdout
    found = _cli(read_only, "sessions", "search", "deploy")
    assert found.returncode == 0, found.stderr
    assert "deploy" in found.stdout
    shown = _cli(read_only, "sessions", "show", "s1")
    assert shown.returncode == 0, shown.stderr
    assert "how does the deploy work?" in shown.stdout
    assert _tree(read_only) == before


_CRASHING_HOST = """
import os, sys
import hermes_core as hc
if sys.argv[2] == "checkpointed":  # an earlier, cleanly closed run: state.db holds crash0
    first = hc.Hermes.from_config(home=sys.argv[1])
    first.session("crash0").prepare([{"role": "user", "content": "kiwi question 0"}])
    first.close()
host = hc.Hermes.from_config(home=sys.argv[1])
for n in range(1, 3):
    session = host.session(f"crash{n}")
    turn = [{"role": "user", "content": f"kiwi question {n}"}]
    session.prepare(turn)
    session.end_turn([*turn, {"role": "assistant", "content": f"kiwi answer {n}"}])
os._exit(0)  # no close, no checkpoint: the sessions are committed in state.db-wal only
"""


@pytest.mark.parametrize("history", ["fresh", "checkpointed"])
@pytest.mark.parametrize("folder_mode", [0o555, 0o755], ids=["read-only folder", "writable"])
def test_sessions_a_crashed_host_committed_are_read_and_nothing_changes(
    tmp_path: Path, folder_mode: int, history: str
) -> None:
    """A host that crashed leaves its commits in ``state.db-wal``: every one is listed, read
    bound by file modes, from a read-only folder too, and no file is created or changed (not even
    ``state.db-shm``)."""
    home = tmp_path / "crashed"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES")}
    env["PYTHONPATH"] = str(ROOT)
    crashed = subprocess.run(
        [sys.executable, "-c", _CRASHING_HOST, str(home), history],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert crashed.returncode == 0, crashed.stderr
    assert (home / "state.db-wal").stat().st_size > 0
    for path in home.rglob("*"):
        path.chmod(0o555 if path.is_dir() else 0o444)
    home.chmod(folder_mode)
    before = _tree(home)
    listed = _cli(home, "sessions", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    for n in range(0 if history == "checkpointed" else 1, 3):
        assert f'"crash{n}"' in listed.stdout
    found = _cli(home, "sessions", "search", "kiwi")
    assert found.returncode == 0, found.stderr
    assert "crash2" in found.stdout
    assert _tree(home) == before


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
