"""Issue 16 §3: a plugin name no plugin answers to is a configuration error everywhere.

``memory.provider``, ``plugins.enabled``, ``plugins.disabled`` and ``plugin_config.<name>``
are checked alike, by ``Hermes.from_config`` and so by ``config check``; the error names the
key, the file and line, and the close match or the known names. A provider that exists but
whose extra is not installed is a different error (the install line), and stays one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.cli import main
from hermes_core.errors import ConfigError, MissingExtraError
from hermes_core.host import Hermes
from hermes_core.plugins.loading import PluginSpec

pytestmark = pytest.mark.usefixtures("isolated_home")


def config_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "key", "line", "hint"),
    [
        ("memory:\n  provider: nosuch\n", "memory.provider", 2, "memory providers installed: "),
        ("memory:\n  provider: mem00\n", "memory.provider", 2, "did you mean 'mem0'?"),
        ("plugin_config:\n  typo: {a: 1}\n", "plugin_config.typo", 2, "known: "),
        ("plugin_config:\n  mem0: {}\n  honcoh: {}\n", "plugin_config.honcoh", 3, "'honcho'"),
        ("plugins:\n  enabled: [supermemroy]\n", "plugins.enabled", 2, "'supermemory'"),
        ("plugins:\n  disabled: [threat_scaner]\n", "plugins.disabled", 2, "'threat_scanner'"),
    ],
)
def test_an_unknown_plugin_name_fails_from_config_naming_key_file_and_match(
    tmp_path: Path, text: str, key: str, line: int, hint: str
) -> None:
    path = config_file(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        Hermes.from_config(path, home=tmp_path)
    message = str(err.value)
    assert f"{path}:{line}: {key}: no plugin is named" in message
    assert hint in message
    if hint == "known: ":
        assert "file_memory" in message and "mem0" in message  # built-ins and entry points
    if hint == "memory providers installed: ":  # only what memory.provider can name
        assert "mem0" in message and "honcho" in message
        assert "file_memory" not in message and "compressor" not in message


def test_config_check_refuses_an_unknown_plugin_config_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = config_file(tmp_path, "plugin_config:\n  typo: {a: 1}\n")
    code = main(["config", "check", "--config", str(path), "--home", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert f"{path}:2: plugin_config.typo: no plugin is named 'typo'" in err


def test_every_unknown_name_is_reported_at_once(tmp_path: Path) -> None:
    path = config_file(
        tmp_path,
        "memory:\n  provider: nosuch\nplugins:\n  enabled: [other]\nplugin_config:\n  x: {}\n",
    )
    with pytest.raises(ConfigError, match=r"invalid configuration \(3 problems\)"):
        Hermes.from_config(path, home=tmp_path)


def test_names_from_the_environment_say_which_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES__MEMORY__PROVIDER", "nosuch")
    with pytest.raises(ConfigError, match=r"HERMES__MEMORY__PROVIDER: memory\.provider: no plugin"):
        Hermes.from_config({}, home=tmp_path)


def test_known_names_pass_built_ins_entry_points_and_registered_specs(tmp_path: Path) -> None:
    def build(_context: object) -> object:
        return object()

    custom = PluginSpec("custom", build, builtin=True)
    settings = {
        "plugin_config": {"custom": {"a": 1}, "mem0": {"top_k": 3}},
        "plugins": {"disabled": ["custom"]},
    }
    with Hermes.from_config(settings, home=tmp_path, builtins=[custom]) as host:
        assert host.plugins.records["custom"].status == "disabled"


def test_a_provider_whose_extra_is_missing_keeps_its_install_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "site"
    info = root / "edges_dist-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: edges_dist\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[hermes_context.plugins]\nedges_needs = edges_needs_sdk:Plugin [fancy]\n"
    )
    (root / "edges_needs_sdk.py").write_text("import an_sdk_that_is_not_installed\n")
    monkeypatch.syspath_prepend(str(root))
    with pytest.raises(MissingExtraError) as raised:  # the provider must load (docs/hosts.md)
        Hermes.from_config({"memory": {"provider": "edges_needs"}}, home=tmp_path)
    assert raised.value.install_hint == "pip install 'edges_dist[fancy]'"
    assert "pip install 'edges_dist[fancy]'" in str(raised.value)
