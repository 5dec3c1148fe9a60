"""The quickstart's config file passes ``hermes-context config check`` as printed.

The block under "## A config file" in docs/quickstart.md is copied into a fresh home and
checked through the real command line: with ``MEM0_API_KEY`` exported it is accepted, and
without it the error names the variable. Nothing is mocked: the config loader resolves
``api_key: {$env: MEM0_API_KEY}`` and the Mem0 provider takes the key from it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hermes_core.cli import main
from hermes_core.plugins.loading import extra_installed, own_install_line

QUICKSTART = Path(__file__).resolve().parents[2] / "docs" / "quickstart.md"
KEY = "m0-quickstart-test-not-a-real-key"

pytestmark = pytest.mark.usefixtures("isolated_home")


def quickstart_config() -> str:
    """The first ```yaml block in the "## A config file" section of the quickstart."""
    text = QUICKSTART.read_text(encoding="utf-8")
    section = re.search(r"^## A config file\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert section, "docs/quickstart.md has no '## A config file' section"
    block = re.search(r"^```yaml\n(.*?)^```", section.group(1), re.MULTILINE | re.DOTALL)
    assert block, "the '## A config file' section has no ```yaml block"
    return block.group(1)


@pytest.fixture
def home(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The quickstart's file as ``$HERMES_HOME/config.yaml``; Mem0 kept out of ``~/.mem0``."""
    monkeypatch.setenv("MEM0_TELEMETRY", "False")
    monkeypatch.setenv("MEM0_DIR", str(tmp_path / "mem0-dir"))
    (isolated_home / "config.yaml").write_text(quickstart_config(), encoding="utf-8")
    return isolated_home


def check(capsys: pytest.CaptureFixture[str], home: Path) -> tuple[int, str, str]:
    code = main(["--home", str(home), "config", "check"])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_block_is_the_one_with_the_mem0_key_reference() -> None:
    config = quickstart_config()
    assert "provider: mem0" in config and "api_key: {$env: MEM0_API_KEY}" in config


def test_quickstart_config_checks_with_the_key_exported(
    capsys: pytest.CaptureFixture[str], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEM0_API_KEY", KEY)
    code, out, err = check(capsys, home)
    assert KEY not in out + err
    if not extra_installed("mem0"):
        # the no-extras run: the config itself is fine, the provider's SDK is what is missing
        assert code == 2, out + err
        assert own_install_line("mem0") in err
        return
    assert code == 0, err
    assert out.startswith(f"config OK: {home / 'config.yaml'}")
    assert "mem0" in out.splitlines()[-1]


@pytest.mark.skipif(
    not extra_installed("mem0"),
    reason="needs the mem0 extra: without it the provider (and its key) is never loaded",
)
def test_quickstart_config_without_the_key_names_the_variable(
    capsys: pytest.CaptureFixture[str], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEM0_API_KEY", raising=False)
    code, _out, err = check(capsys, home)
    assert code == 2
    assert "MEM0_API_KEY" in err and "plugin_config.mem0.api_key" in err
    assert "Traceback" not in err
