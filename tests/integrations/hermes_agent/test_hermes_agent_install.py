"""``hermes-context hermes-agent install``: the shim hermes-agent's own loaders accept, written
once (a second run reports it and changes no byte), never over a folder that is not ours;
and the entry point hermes-agent's plugin manager loads our engine from."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hermes_agent_support import REQUIRED, make_home

from hermes_core.cli import main
from hermes_plugins.hermes_agent.install import MARKER, SHIM_NAME


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_install_is_idempotent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "hermes"
    assert main(["hermes-agent", "install", "--home", str(home)]) == 0
    first = capsys.readouterr().out
    shim = home / "plugins" / SHIM_NAME
    assert first.startswith(f"installed: {shim}")
    assert "engine: hermes-context" in first and "provider: hermes_context" in first
    ours = home / "hermes-context" / "config.yaml"
    assert f"wrote our config: {ours}" in first
    before = snapshot(shim)
    assert set(before) == {"__init__.py", "plugin.yaml", MARKER}
    config = ours.read_bytes()
    assert main(["hermes-agent", "install", "--home", str(home)]) == 0
    assert capsys.readouterr().out.strip() == f"already installed: {shim}"
    assert snapshot(shim) == before and ours.read_bytes() == config


def test_our_config_is_written_once_and_read_alike_by_the_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The defaults that differ inside hermes-agent are written out, so ``hermes-context
    --home <hermes home>/hermes-context ...`` reads the home as the plugin does; a config the
    user already has is never touched."""
    from hermes_core.config.loader import load_config

    home = tmp_path / "hermes"
    assert main(["hermes-agent", "install", "--home", str(home)]) == 0
    settings = load_config(None, home=home / "hermes-context", environ={}).settings
    assert settings.memory.per_user_memory is True and settings.memory.nudge_interval == 0
    assert settings.skills.creation_nudge_interval == 0
    mine = home / "hermes-context" / "config.yaml"
    mine.write_text("memory:\n  nudge_interval: 4\n", encoding="utf-8")
    (home / "plugins" / SHIM_NAME / "__init__.py").unlink()
    capsys.readouterr()
    assert main(["hermes-agent", "install", "--home", str(home)]) == 0
    assert capsys.readouterr().out.startswith("updated:")
    assert mine.read_text(encoding="utf-8") == "memory:\n  nudge_interval: 4\n"


def test_install_uses_hermes_home_and_updates_an_old_shim_of_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "env-home"
    monkeypatch.setenv("HERMES_HOME", str(home))
    assert main(["hermes-agent", "install"]) == 0
    shim = home / "plugins" / SHIM_NAME
    (shim / "__init__.py").write_text("# an older shim\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["hermes-agent", "install"]) == 0
    assert capsys.readouterr().out.startswith(f"updated: {shim}")
    assert "register_memory" in (shim / "__init__.py").read_text(encoding="utf-8")


def test_install_refuses_a_folder_that_is_not_ours(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shim = tmp_path / "hermes" / "plugins" / SHIM_NAME
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("# someone else's provider\n", encoding="utf-8")
    assert main(["hermes-agent", "install", "--home", str(tmp_path / "hermes")]) == 2
    assert "was not made by hermes-context" in capsys.readouterr().err
    assert (shim / "__init__.py").read_text(encoding="utf-8") == "# someone else's provider\n"
    assert sorted(os.listdir(shim)) == ["__init__.py"]


def test_hermes_agents_own_loaders_take_our_plugins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memory shim through hermes-agent's memory-provider loader, the engine through its
    plugin manager and our entry point (``plugins.enabled`` in its config)."""
    if REQUIRED:
        from plugins.memory import load_memory_provider
    else:
        memory_loader = pytest.importorskip("plugins.memory")
        load_memory_provider = memory_loader.load_memory_provider
    from hermes_cli.plugins import PluginManager

    home = make_home(tmp_path)
    monkeypatch.setenv("HERMES_HOME", str(home))
    provider = load_memory_provider("hermes_context")
    assert provider is not None and provider.name == "hermes_context"
    assert provider.is_available()
    manager = PluginManager()
    manager.discover_and_load()
    engine = manager._context_engine
    assert engine is not None and engine.name == "hermes-context"


def test_an_empty_home_is_refused_not_read_as_the_real_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "env-home"))
    assert main(["hermes-agent", "install", "--home", ""]) == 2
    assert "--home is empty" in capsys.readouterr().err
    assert not (tmp_path / "user").exists() and not (tmp_path / "env-home").exists()
