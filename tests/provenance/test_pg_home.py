"""The policy in a PostgreSQL home (memory rows, staged rows): the same as with files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("psycopg")

from pg import pg_dsn
from prov_support import IBAN, OBEYED, PAGE, fetched, fresh_prompt, make_hermes, memory

from hermes_core.cli import main

__all__ = ["pg_dsn"]


def test_a_fetched_page_is_staged_in_a_postgres_home(
    tmp_path: Path, pg_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config = {"memory": {"backend": "postgres"}, "sessions": {"dsn": pg_dsn}}
    with make_hermes(tmp_path, config) as host:
        session = host.session("s1", user_id="alice")
        session.prepare([{"role": "user", "content": "Read the page."}, *fetched(PAGE)])
        assert memory(session, OBEYED)["staged"] is True
        session.close()
        assert IBAN not in fresh_prompt(host, user_id="alice")
    (tmp_path / "config.yaml").write_text(
        f"memory:\n  backend: postgres\nsessions:\n  dsn: {pg_dsn}\n", encoding="utf-8"
    )
    capsys.readouterr()
    assert main(["--home", str(tmp_path), "memory", "pending", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)["pending"][0]
    assert record["provenance"]["sources"][0]["tool"] == "web_fetch"
