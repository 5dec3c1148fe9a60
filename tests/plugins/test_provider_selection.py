"""Choosing the external provider from the command line: active, two named, extra missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.cli import main
from hermes_core.plugins.loading import extra_installed, own_install_line

pytestmark = pytest.mark.usefixtures("isolated_home")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.skipif(not extra_installed("mem0"), reason="needs the mem0 extra")
def test_mem0_selected_in_config_is_active(
    capsys: pytest.CaptureFixture[str], isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEM0_API_KEY", "m0-test-not-a-real-key")
    (isolated_home / "config.yaml").write_text("memory:\n  provider: mem0\n")
    code, out, _ = run(capsys, "plugins", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert code == 0 and rows["mem0"]["status"] == "active"
    assert rows["mem0"]["external_provider"] is True


def test_naming_two_providers_exits_2_naming_both(
    capsys: pytest.CaptureFixture[str], isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETAINDB_API_KEY", "rdb-test-not-a-real-key")
    (isolated_home / "config.yaml").write_text(
        "memory:\n  provider: retaindb\nplugins:\n  enabled: [keyword_memory]\n"
    )
    pytest.importorskip("hermes_keyword_memory")
    code, _, err = run(capsys, "plugins")
    assert code == 2
    assert "retaindb" in err and "keyword_memory" in err and "at most one" in err


@pytest.mark.parametrize("name", ["honcho", "mem0", "supermemory"])
def test_a_provider_without_its_extra_prints_the_pip_line(
    capsys: pytest.CaptureFixture[str], isolated_home: Path, name: str
) -> None:
    if extra_installed(name):
        pytest.skip(f"the {name} extra is installed here (the no-extras CI run checks this)")
    (isolated_home / "config.yaml").write_text(f"memory:\n  provider: {name}\n")
    code, out, _ = run(capsys, "plugins")
    assert code == 0
    assert own_install_line(name) in out
