"""``hermes-context forget``: confirmation, ``--yes``, ``--json``, ``--anonymous``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from forget_plant import home_bytes, plant, where

from hermes_core.cli import main
from hermes_core.host import Hermes


@pytest.fixture
def home(isolated_home: Path) -> Path:
    (isolated_home / "config.yaml").write_text("memory:\n  per_user_memory: true\n")
    return isolated_home


def _plant(home: Path, *users: str | None) -> list[dict[str, str]]:
    with Hermes.from_config(home / "config.yaml", home=home) as hermes:
        return [plant(hermes, user) for user in users]


def test_asks_and_a_no_deletes_nothing(home, capsys, monkeypatch) -> None:
    (alice,) = _plant(home, "alice")
    monkeypatch.setattr("sys.stdin", io.StringIO("no\n"))
    assert main(["forget", "--user", "alice"]) == 1
    assert "Type yes to delete" in capsys.readouterr().err
    assert all(where(home_bytes(home), t) for t in alice.values())


def test_yes_and_json(home, capsys) -> None:
    alice, bob = _plant(home, "alice", "bob")
    assert main(["forget", "--user", "alice", "--yes", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["user_id"] == "alice" and report["complete"] is True
    assert report["deleted"]["sessions"] == 1 and report["deleted"]["staged writes"] == 1
    after = home_bytes(home)
    assert not any(where(after, t) for t in alice.values())
    assert all(where(after, t) for t in bob.values())


def test_answered_yes_and_the_anonymous_principal(home, capsys, monkeypatch) -> None:
    alice, anon = _plant(home, "alice", None)
    monkeypatch.setattr("sys.stdin", io.StringIO("yes\n"))
    assert main(["forget", "--anonymous"]) == 0
    out = capsys.readouterr().out
    assert "forgot the anonymous principal" in out and "sessions" in out
    after = home_bytes(home)
    assert not any(where(after, t) for t in anon.values())
    assert all(where(after, t) for t in alice.values())


def test_needs_a_user(home, capsys) -> None:
    assert main(["forget", "--yes"]) == 2
    assert "--user" in capsys.readouterr().err


@pytest.mark.parametrize("exists", [False, True])
def test_a_mistyped_home_is_refused_and_nothing_is_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], exists: bool
) -> None:
    """A typo in --home must not report a person forgotten while the real home keeps them."""
    typo = tmp_path / "typo"
    if exists:
        typo.mkdir()
    code = main(["forget", "--home", str(typo), "--user", "alice", "--yes", "--json"])
    assert code == 2
    assert "holds no hermes-context home" in capsys.readouterr().err or not exists
    assert (list(typo.iterdir()) == []) if exists else not typo.exists()
