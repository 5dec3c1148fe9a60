"""The command line imports only the module of the command it runs (issue 27 item 12).

Every command module pulls in what its command needs (sessions, memory review, evals), so
loading all ten on each run made ``compress`` pay for nine it never uses. ``--help`` still
lists every command with its own help text: the listing is pinned here as it was before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.cli import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tests" / "data" / "transcripts" / "coding-50turns.json"

#: ``hermes-context --help`` at 80 columns, recorded before the dispatch became lazy
HELP = """usage: hermes-context [-h] [--home DIR] [--config FILE] [-v] [--version]
                      COMMAND ...

Context compression and lasting memory for LLM-agent hosts.

positional arguments:
  COMMAND
    compress     compress a transcript under its token budget
    tokens       count a transcript's tokens by role, tool and images
    validate     check a transcript for tool-pair, role and content problems
    memory       show, edit or review file memory
    sessions     list, show, search or export stored sessions
    skills       list or show skills, review staged skill writes
    export       write one user's sessions, memory and skills to a bundle
    import       restore a bundle written by export into this home
    forget       delete one user's sessions, memory and provider data
    eval         measure what compaction keeps of a transcript (offline)
    plugins      list plugins with their hooks and status
    config       show or check the configuration
    hermes-agent
                 use hermes-context inside hermes-agent

options:
  -h, --help     show this help message and exit
  --home DIR     home directory (default: $HERMES_HOME, else ~/.hermes); read
                 commands refuse one that does not exist or holds no home
  --config FILE  config file
  -v, --verbose  debug logging and tracebacks
  --version      show program's version number and exit
"""

PROBE = """
import json, sys
from hermes_core.cli import main
code = main(sys.argv[1:])
loaded = sorted(m for m in sys.modules if m.startswith("hermes_core.cli."))
print("\\nLOADED " + json.dumps(loaded) + " EXIT " + str(code), flush=True)
"""


def _run(args: list[str], home: Path) -> tuple[list[str], int, str]:
    env = {**os.environ, "HERMES_HOME": str(home), "PYTHONPATH": str(ROOT), "COLUMNS": "80"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        check=False,
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("LOADED "))
    loaded, code = line.removeprefix("LOADED ").rsplit(" EXIT ", 1)
    return json.loads(loaded), int(code), done.stdout


def _modules(loaded: list[str]) -> set[str]:
    return {m.removeprefix("hermes_core.cli.") for m in loaded if m.endswith("_cmd")}


def test_top_level_help_is_unchanged(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"}
    done = subprocess.run(
        [sys.executable, "-m", "hermes_core", "--help"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    )
    assert done.stdout == HELP


@pytest.mark.parametrize("command", ["*", None, *(name for name, _, _ in COMMANDS)])
def test_every_parser_lists_each_command_with_its_own_help(command: str | None) -> None:
    """The bare entries carry the same help as each module's own registration."""
    assert build_parser(command).format_help() == build_parser("*").format_help()


def test_compress_imports_only_its_own_command_module(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    loaded, code, _ = _run(["compress", str(SAMPLE), "--out", str(out)], tmp_path)
    assert code in (0, 3)
    assert json.loads(out.read_text(encoding="utf-8"))  # it did compress
    assert _modules(loaded) == {"compress_cmd"}


def test_a_home_named_like_a_command_is_a_home(tmp_path: Path) -> None:
    """The command is the one argparse finds, not the first word that names one."""
    (tmp_path / "compress").mkdir()
    loaded, code, stdout = _run(["--home", "compress", "tokens", str(SAMPLE)], tmp_path)
    assert code == 0
    assert "tokens" in stdout
    assert _modules(loaded) == {"tokens_cmd"}


def test_help_loads_no_command_module(tmp_path: Path) -> None:
    loaded, code, stdout = _run(["--help"], tmp_path)
    assert code == 0
    assert stdout.startswith(HELP)
    assert _modules(loaded) == set()
