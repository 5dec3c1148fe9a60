"""Issue 16 §3: what a staged write tells the user to run is a command that works.

``write_approval: stage`` used to print ``hermes-context memory approve``, which exits 2
asking for an id. Now the line names the id and carries the ``--home`` / ``--config`` the
user gave, and running it as printed applies the write. The same holds wherever a staged
message names a command (a missing id, ``skills`` as well as ``memory``).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from hermes_core.cli import main

HOME_WITH_SPACE = "a home"


def run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def printed_commands(text: str) -> list[list[str]]:
    return [shlex.split(c) for c in re.findall(r"`(hermes-context [^`]+)`", text)]


@pytest.fixture
def staging_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home that is not $HERMES_HOME (so a command without --home would miss it)."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "elsewhere"))
    home = tmp_path / HOME_WITH_SPACE
    home.mkdir()
    (home / "config.yaml").write_text("memory:\n  write_approval: stage\n", encoding="utf-8")
    return home


def test_the_printed_approve_command_applies_the_write(
    capsys: pytest.CaptureFixture[str], staging_home: Path
) -> None:
    code, out, _ = run(capsys, ["memory", "add", "uses uv", "--home", str(staging_home)])
    assert code == 0 and "staged as" in out
    approve, reject = printed_commands(out)
    assert approve[:3] == ["hermes-context", "memory", "approve"]
    assert re.fullmatch(r"[0-9a-f]{8}", approve[3])
    assert approve[4:] == ["--home", str(staging_home)] and reject[2] == "reject"
    code, out, err = run(capsys, approve[1:])
    assert code == 0, err
    assert f"{approve[3]}: Pending write {approve[3]} applied." in out
    assert "uses uv" in (staging_home / "memories" / "MEMORY.md").read_text(encoding="utf-8")


def test_a_config_given_on_the_command_line_is_carried_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    config = tmp_path / "stage.yaml"
    config.write_text("memory:\n  write_approval: stage\n", encoding="utf-8")
    code, out, _ = run(capsys, ["memory", "add", "a fact", "--config", str(config)])
    assert code == 0
    approve = printed_commands(out)[0]
    assert approve[-2:] == ["--config", str(config)] and "--home" not in approve
    code, out, err = run(capsys, approve[1:])
    assert code == 0 and "applied" in out, err


def test_the_reject_command_works_as_printed(
    capsys: pytest.CaptureFixture[str], staging_home: Path
) -> None:
    _, out, _ = run(capsys, ["memory", "add", "a fact", "--home", str(staging_home)])
    reject = printed_commands(out)[1]
    code, out, _ = run(capsys, reject[1:])
    assert code == 0 and "rejected" in out


@pytest.mark.parametrize("noun", ["memory", "skills"])
def test_a_missing_id_points_at_a_pending_command_for_the_same_home(
    capsys: pytest.CaptureFixture[str], staging_home: Path, noun: str
) -> None:
    code, _, err = run(capsys, [noun, "approve", "0123abcd", "--home", str(staging_home)])
    assert code == 1
    listed = printed_commands(err)
    assert listed == [["hermes-context", noun, "pending", "--home", str(staging_home)]], err
    code, _, _ = run(capsys, listed[0][1:])
    assert code == 0


def test_a_user_s_staged_write_is_approved_by_the_printed_command(
    capsys: pytest.CaptureFixture[str], staging_home: Path
) -> None:
    argv = ["memory", "add", "--target", "user", "--user", "alice", "likes tea"]
    code, out, _ = run(capsys, [*argv, "--home", str(staging_home)])
    assert code == 0
    approve = printed_commands(out)[0]
    code, out, err = run(capsys, approve[1:])  # the record knows its user: no --user needed
    assert code == 0 and "applied" in out, err
    users = staging_home / "memories" / "users"
    assert "likes tea" in next(users.rglob("USER.md")).read_text(encoding="utf-8")
