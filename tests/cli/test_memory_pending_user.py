"""Issue 27 item 8: ``memory pending --user`` is accepted like ``show``/``add``, and lists only
that user's staged writes; ``--help`` names the ``--home`` default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.cli import main


def test_pending_takes_user_like_show_and_add(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (isolated_home / "config.yaml").write_text("memory:\n  write_approval: stage\n")
    for user, text in (("alice", "alice likes tea"), ("bob", "bob likes coffee")):
        main(["memory", "add", "--user", user, "--target", "user", text])
    capsys.readouterr()
    assert main(["memory", "pending", "--json"]) == 0
    everyone = json.loads(capsys.readouterr().out)["pending"]
    assert {r["user_id"] for r in everyone} == {"alice", "bob"}
    assert main(["memory", "pending", "--user", "alice", "--json"]) == 0
    mine = json.loads(capsys.readouterr().out)["pending"]
    assert [r["user_id"] for r in mine] == ["alice"]


def test_help_gives_the_home_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "default: $HERMES_HOME, else ~/.hermes" in out
