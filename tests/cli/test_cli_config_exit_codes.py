"""Every command exits 2 on a configuration error (README: 2 = usage or configuration error),
the ``memory`` and ``skills`` subcommands too (review 16, 6: they exited 1, because their
errors are escaped for the terminal by a wrapper that made every HermesError exit 1)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from hermes_core.cli import build_parser, main

pytestmark = pytest.mark.usefixtures("isolated_home")

BAD_CONFIGS = {
    "unknown section": "nosuchsection: {a: 1}\n",
    "invalid YAML": "model: [\n",
    "wrong type": "compression:\n  threshold: x\n",
    "unknown provider": "memory:\n  provider: nosuch\n",
    "unknown plugin_config": "plugin_config:\n  typo: {a: 1}\n",
}

SUBCOMMANDS = {
    "memory show": ["memory", "show"],
    "memory add": ["memory", "add", "an entry"],
    "memory replace": ["memory", "replace", "old", "new"],
    "memory remove": ["memory", "remove", "old"],
    "memory pending": ["memory", "pending"],
    "memory approve": ["memory", "approve", "all"],
    "memory reject": ["memory", "reject", "some-id"],
    "memory reset": ["memory", "reset", "--yes"],
    "memory audit": ["memory", "audit"],
    "memory consolidate": ["memory", "consolidate", "--dry-run"],
    "skills list": ["skills", "list"],
    "skills show": ["skills", "show", "a-skill"],
    "skills pending": ["skills", "pending"],
    "skills approve": ["skills", "approve", "all"],
    "skills reject": ["skills", "reject", "some-id"],
    "skills audit": ["skills", "audit"],
    "skills consolidate": ["skills", "consolidate", "--dry-run"],
}


def _choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_memory_and_skills_subcommand_is_covered() -> None:
    commands = _choices(build_parser())
    every = {(name, action) for name in ("memory", "skills") for action in _choices(commands[name])}
    assert {(words[0], words[1]) for words in SUBCOMMANDS.values()} == every


@pytest.mark.parametrize("config", list(BAD_CONFIGS))
@pytest.mark.parametrize("command", list(SUBCOMMANDS))
def test_a_configuration_error_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, config: str, command: str
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(BAD_CONFIGS[config], encoding="utf-8")
    code = main(["--config", str(path), *SUBCOMMANDS[command]])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == ""
    assert err.startswith("hermes-context: error: ") and str(path) in err


@pytest.mark.parametrize("words", [["compress", "x.json"], ["eval", "x.json"], ["plugins"]])
def test_the_other_commands_agree(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, words: list[str]
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(BAD_CONFIGS["unknown provider"], encoding="utf-8")
    (tmp_path / "x.json").write_text('[{"role": "user", "content": "hi"}]')
    argv = [str(tmp_path / w) if w.endswith(".json") else w for w in words]
    assert main(["--config", str(path), *argv]) == 2
    capsys.readouterr()


def test_an_input_error_of_memory_still_exits_1(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    assert main(["memory", "remove", "nothing like this"]) == 1
    assert "hermes-context: " in capsys.readouterr().err
