"""Issue 27 item 2: a ``memory.provider`` whose extra is not importable stops
``Hermes.from_config`` with the documented ``MissingExtraError`` (docs/hosts.md), as
``config check`` refuses it, instead of logging a line and running without the provider.

The SDK is made really unimportable in a fresh interpreter (``sys.modules[name] = None``
makes every ``import name`` fail), so the provider's own import is what fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, sys
sys.modules["honcho"] = None  # the honcho-ai SDK, as if the extra were not installed
import hermes_core as hc
try:
    host = hc.Hermes.from_config(sys.argv[1])
except hc.MissingExtraError as exc:
    print(json.dumps({"raised": type(exc).__name__, "message": str(exc),
                      "hint": exc.install_hint}))
else:
    statuses = {n: r.status for n, r in host.plugins.records.items()}
    host.close()
    print(json.dumps({"raised": None, "statuses": statuses}))
"""


def _environ(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES__")}
    env.update(HERMES_HOME=str(home), HONCHO_API_KEY="hc-test-not-a-key", PYTHONPATH=str(ROOT))
    return env


def test_from_config_raises_the_documented_error_for_a_missing_provider_extra(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = home / "config.yaml"
    config.write_text("memory:\n  provider: honcho\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(config)],
        capture_output=True,
        text=True,
        env=_environ(home),
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["raised"] == "MissingExtraError", result
    assert "memory.provider is 'honcho'" in result["message"]
    assert "[honcho]" in result["hint"] and result["hint"] in result["message"]


@pytest.mark.parametrize("command", [["config", "check"]])
def test_config_check_refuses_the_same_provider(tmp_path: Path, command: list[str]) -> None:
    """The command line and the library agree: one check, exit 2 with the install line."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("memory:\n  provider: honcho\n", encoding="utf-8")
    script = (
        "import sys; sys.modules['honcho'] = None\n"
        "from hermes_core.cli import main\n"
        f"sys.exit(main({command!r}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        capture_output=True,
        text=True,
        env=_environ(home),
    )
    assert done.returncode == 2, done.stderr
    assert "needs its extra" in done.stderr and "[honcho]" in done.stderr
