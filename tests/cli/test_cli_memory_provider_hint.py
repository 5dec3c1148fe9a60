"""A misspelled ``memory.provider`` lists the memory providers that are installed, not every
plugin name (review 16, 10b): the built-ins (``compressor``, ``file_memory``,
``session_store``, ``threat_scanner``) and the ``postgres`` storage backend cannot be the
provider, and picking one only failed later with "is not installed"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hermes_core.cli import main
from hermes_core.config.loader import PLUGIN_GROUP
from hermes_core.plugins.loading import ENTRY_POINT_GROUP, installed_entry_points

pytestmark = pytest.mark.usefixtures("isolated_home")

NOT_PROVIDERS = ("compressor", "file_memory", "session_store", "threat_scanner", "postgres")


def _check(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    assert main(["config", "check", "--config", str(path)]) == 2
    return capsys.readouterr().err


def _listed(err: str) -> set[str]:
    found = re.search(r"\(memory providers installed: ([^)]*)\)", err)
    assert found, err
    return set(found.group(1).split(", "))


def test_an_unknown_provider_lists_only_memory_providers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    err = _check(capsys, tmp_path, "memory:\n  provider: nosuch\n")
    listed = _listed(err)
    assert not listed & set(NOT_PROVIDERS), err
    installed = {entry.name for entry in installed_entry_points()}
    assert listed == installed - {"postgres"}
    assert "mem0" in listed  # the first-party providers are installed with the package


def test_a_close_built_in_name_is_not_suggested_as_the_provider(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    err = _check(capsys, tmp_path, "memory:\n  provider: file_memry\n")
    assert "did you mean 'file_memory'" not in err
    assert "file_memory" not in _listed(err)


def test_other_keys_still_list_every_plugin(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    err = _check(capsys, tmp_path, "plugin_config:\n  typo: {a: 1}\n")
    assert "known: " in err and "file_memory" in err and "postgres" in err


def test_a_third_party_provider_is_listed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "site"
    info = root / "hint_dist-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hint_dist\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nhint_memory = hint_sdk:P\n")
    monkeypatch.syspath_prepend(str(root))
    err = _check(capsys, tmp_path, "memory:\n  provider: nosuch\n")
    assert "hint_memory" in _listed(err)


def test_the_entry_point_group_is_the_loaders() -> None:
    assert PLUGIN_GROUP == ENTRY_POINT_GROUP
