"""``hermes-context sessions ...`` and ``config check`` against the PostgreSQL backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.cli import main
from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.sessions import PostgresSessionStore


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def home(isolated_home: Path, pg_dsn: str) -> Path:
    (isolated_home / "config.yaml").write_text(
        f"sessions:\n  backend: postgres\n  dsn: {pg_dsn}\nmemory:\n  backend: postgres\n"
    )
    store = PostgresSessionStore(Database(pg_dsn, pool_size=1, timeout=10))
    store.open_session("alice-1", user_id="alice", title="the flaky backup")
    store.append_messages(
        "alice-1",
        [
            {"role": "user", "content": "the nightly backup cron job fails"},
            {"role": "assistant", "content": "the script is not executable"},
        ],
    )
    store.open_session("bob-1", user_id="bob", title="bob's backup")
    store.append_messages("bob-1", [{"role": "user", "content": "my backup secret plan"}])
    store.commit_compaction(
        "alice-1",
        [{"role": "user", "content": "[summary] backup script not executable"}],
        [None],
        in_place=True,
    )
    store.close()
    return isolated_home


def test_list_show_search_export_read_postgres(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "sessions", "list", "--user", "alice", "--json")
    assert code == 0
    assert [s["id"] for s in json.loads(out)] == ["alice-1"]

    code, out, _ = run(capsys, "sessions", "show", "alice-1", "--user", "alice", "--all")
    assert code == 0
    assert "nightly backup cron job" in out and "[summary]" in out

    code, out, _ = run(capsys, "sessions", "search", "backup", "--user", "alice", "--json")
    assert code == 0
    found = json.loads(out)
    assert found and {hit["session_id"] for hit in found} == {"alice-1"}
    assert "secret plan" not in out

    code, out, _ = run(capsys, "sessions", "show", "bob-1", "--user", "alice")
    assert code != 0  # another user's session is not shown

    out_file = home / "alice.json"
    code, _, _ = run(
        capsys, "sessions", "export", "alice-1", "--user", "alice", "--out", str(out_file)
    )
    assert code == 0
    assert "not executable" in out_file.read_text()


def test_config_check_reports_the_database(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "config", "check")
    assert code == 0, err
    assert "database: PostgreSQL" in out and "answers" in out


def test_config_check_reports_an_unreachable_database(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (isolated_home / "config.yaml").write_text(
        "sessions:\n  backend: postgres\n  dsn: postgresql://hermes@127.0.0.1:1/hermes\n"
        "  timeout: 1\n"
    )
    code, out, err = run(capsys, "config", "check")
    assert code == 2
    assert "sessions.backend" in err and "cannot open PostgreSQL at hermes@127.0.0.1:1" in err
    assert "Traceback" not in err and "config OK" not in out


def test_config_check_refuses_a_database_with_a_newer_schema(
    home: Path, pg_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import psycopg

    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("UPDATE hermes.sessions_schema SET version = version + 5")
    code, out, err = run(capsys, "config", "check")
    assert code == 2 and "config OK" not in out
    assert "sessions.backend" in err and "upgrade hermes-context" in err
