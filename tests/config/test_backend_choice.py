"""Choosing a storage backend: the postgres plugin loads only when asked, its missing extra is
a configuration error, and nothing ever falls back to the SQLite file instead."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Hermes
from hermes_core.cli import main
from hermes_core.errors import ConfigError, SessionError

DSN = "postgresql://hermes@127.0.0.1:1/hermes"  # never reached in these tests


def test_postgres_is_not_loaded_for_the_default_backends(tmp_path: Path) -> None:
    with Hermes.from_config({}, home=tmp_path) as host:
        assert "postgres" not in host.plugins.records


def test_missing_extra_is_a_configuration_error(tmp_path: Path) -> None:
    """Without psycopg (as in a core-only install) the host refuses to start and prints the
    install line; run in a child so the block on psycopg cannot leak into other tests."""
    code = f"""
import sys
for name in [n for n in sys.modules if n.startswith(("psycopg", "hermes_plugins.postgres"))]:
    del sys.modules[name]
sys.modules["psycopg"] = None
from hermes_core import Hermes
from hermes_core.cli import main
from hermes_core.errors import ConfigError
for key in ("sessions", "memory"):
    try:
        Hermes.from_config({{key: {{"backend": "postgres"}}, "sessions": {{"dsn": {DSN!r}}}}}
                           if key == "memory" else
                           {{"sessions": {{"backend": "postgres", "dsn": {DSN!r}}}}},
                           home={str(tmp_path)!r})
    except ConfigError as exc:
        print(key, "REFUSED", exc)
    else:
        print(key, "STARTED")
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 2, done.stdout
    for key, line in zip(("sessions", "memory"), lines, strict=True):
        assert line.startswith(f"{key} REFUSED"), line
        assert f"{key}.backend: postgres" in line
        # the from-source line (issue 27, 4): this checkout's path or the placeholder, as the
        # child imported the package from the checkout or from site-packages
        assert re.search(r"pip install '[^']+\[postgres\]'", line), line


@pytest.mark.parametrize("key", ["sessions", "memory"])
def test_a_disabled_backend_is_a_configuration_error(tmp_path: Path, key: str) -> None:
    config: dict[str, Any] = {"sessions": {"dsn": DSN}, "plugins": {"disabled": ["postgres"]}}
    config.setdefault(key, {})["backend"] = "postgres"
    with pytest.raises(ConfigError, match=rf"{key}\.backend: postgres, but plugins\.disabled"):
        Hermes.from_config(config, home=tmp_path)
    assert not (tmp_path / "state.db").exists()


def test_a_backend_that_cannot_open_is_the_hosts_error(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    config = {"sessions": {"backend": "postgres", "dsn": DSN, "timeout": 1}}
    with (
        Hermes.from_config(config, home=tmp_path) as host,
        pytest.raises(SessionError, match=r"cannot open PostgreSQL at hermes@127\.0\.0\.1:1/"),
    ):
        _ = host.session_store
    assert not (tmp_path / "state.db").exists()


@pytest.mark.parametrize("as_json", [False, True])
def test_config_show_never_prints_the_password_of_a_dsn_from_the_environment(
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    as_json: bool,
) -> None:
    monkeypatch.setenv("HERMES__SESSIONS__DSN", "postgresql://hermes:Hunter2Secret@db:5432/h")
    code = main(["config", "show", *(["--json"] if as_json else [])])
    out = capsys.readouterr().out
    assert code == 0
    assert "Hunter2Secret" not in out
    assert "sessions.dsn" in out and "@db:5432/h" in out


def test_config_show_hides_plugin_secrets_set_from_the_environment(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HERMES__PLUGIN_CONFIG__HONCHO__API_KEY", "Zx9secretvalue1")
    for argv in (["config", "show"], ["config", "show", "--json"]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "Zx9secretvalue1" not in out and "plugin_config" in out


def test_a_switched_off_session_store_needs_no_backend(tmp_path: Path) -> None:
    config = {
        "sessions": {"enabled": False, "backend": "postgres"},
        "plugins": {"disabled": ["postgres"]},
    }
    with Hermes.from_config(config, home=tmp_path) as host:
        assert host.session_store is None
        assert (
            "postgres" not in host.plugins.records
            or host.plugins.records["postgres"].status == "disabled"
        )
