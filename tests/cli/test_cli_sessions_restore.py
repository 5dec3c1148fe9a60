"""``hermes-context sessions restore``: the same undo as ``Session.undo_compaction``, run in
its own process on the home's real store, with its refusals and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from undo_driver import Driver, make_host

import hermes_core
from hermes_core.transcript.messages import to_wire

ROOT = str(Path(hermes_core.__file__).resolve().parent.parent)
SMALL = {"model": {"context_length": 16_000}}


def cli(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": ROOT, "HERMES_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "hermes_core", "sessions", "restore", *argv, "--home", str(home)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def compacted(home: Path, config: dict[str, Any], compactions: int = 2) -> Driver:
    """A conversation ``conv`` of user ``u`` with ``compactions`` compactions, closed."""
    host = make_host(home, config)
    driver = Driver(host, "conv")
    for _ in range(8):
        driver.turn()
    for _ in range(compactions):
        driver.compact()
        driver.turn()
    driver.session.close()
    host.close()
    return driver


def reopened(home: Path, config: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    with make_host(home, config) as host, host.session("conv", user_id="u") as session:
        return session.session_id, session.messages


def write_config(home: Path, config: dict[str, Any]) -> dict[str, Any]:
    home.mkdir(parents=True, exist_ok=True)
    lines = [
        f"{section}:" + "".join(f"\n  {k}: {json.dumps(v)}" for k, v in values.items())
        for section, values in config.items()
    ]
    (home / "config.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config


def test_restore_undoes_the_newest_and_lists_the_history(tmp_path: Path) -> None:
    config = write_config(tmp_path, SMALL)
    driver = compacted(tmp_path, config)
    before = driver.befores[2]
    done = cli(tmp_path, "conv", "--user", "u")
    assert done.returncode == 0, done.stderr
    assert "restored the transcript from before compaction 2 of conv" in done.stdout
    assert "(2 added after it follow); undone: 2" in done.stdout
    _, messages = reopened(tmp_path, config)
    assert to_wire(messages) == to_wire([*before.messages, *driver.log[before.log_len :]])
    listed = cli(tmp_path, "conv", "--user", "u", "--list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [r["status"] for r in json.loads(listed.stdout)] == ["can be undone", "undone (by 2)"]
    again = cli(tmp_path, "conv", "--user", "u", "--compaction", "1", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["undone"] == [1]


def test_restore_of_a_child_goes_back_to_the_parent(tmp_path: Path) -> None:
    config = write_config(tmp_path, {**SMALL, "compression": {"in_place": False}})
    driver = compacted(tmp_path, config, compactions=1)
    before = driver.befores[1]
    done = cli(tmp_path, "conv", "--user", "u", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["session_id"] == "conv" and report["left"] != "conv"
    assert report["abandoned"] == [report["left"]]
    sid, messages = reopened(tmp_path, config)
    assert sid == "conv"  # a resume stays in the parent, never in the undone child
    assert to_wire(messages) == to_wire([*before.messages, *driver.log[before.log_len :]])


def test_refusals_and_exit_codes(tmp_path: Path) -> None:
    config = write_config(tmp_path, SMALL)
    compacted(tmp_path, config, compactions=1)
    for argv, code, said in [
        (["missing", "--user", "u"], 1, "no such session: missing"),
        (["conv"], 1, "no such session: conv (anonymous user"),  # another user's: unseen
        (["conv", "--user", "u", "--compaction", "9"], 1, "no compaction 9"),
        (["conv", "--user", "u", "--compaction", "0"], 2, "give a whole number from 1"),
        (["conv", "--user", "u", "--list", "--compaction", "1"], 2, "takes no --compaction"),
    ]:
        done = cli(tmp_path, *argv)
        assert (done.returncode, said in done.stderr) == (code, True), (argv, done.stderr)
    assert cli(tmp_path, "conv", "--user", "u").returncode == 0
    done = cli(tmp_path, "conv", "--user", "u")
    assert done.returncode == 1 and "nothing to undo" in done.stderr


def test_without_a_store_there_is_nothing_to_restore(tmp_path: Path) -> None:
    write_config(tmp_path, {"sessions": {"enabled": False}})
    done = cli(tmp_path, "conv")
    assert done.returncode == 2 and "nothing to restore" in done.stderr


@pytest.mark.parametrize("flag", ["--list", "--json"])
def test_an_empty_history(tmp_path: Path, flag: str) -> None:
    config = write_config(tmp_path, SMALL)
    with make_host(tmp_path, config) as host, host.session("conv", user_id="u") as session:
        session.prepare([{"role": "user", "content": "hello"}])
    done = cli(tmp_path, "conv", "--user", "u", flag)
    if flag == "--list":
        assert done.returncode == 0 and "no compactions recorded for conv" in done.stdout
    else:
        assert done.returncode == 1 and "nothing to undo" in done.stderr
