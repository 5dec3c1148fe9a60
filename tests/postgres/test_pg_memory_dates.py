"""Issue 28 on PostgreSQL: the dates of each block's entries live in ``memory_blocks.meta``
(memory schema version 3), stored by the same ``UPDATE`` as the text; an operator's
``UPDATE`` appending to the text is the file store's ``echo >> MEMORY.md``: the appended
text is kept as an entry of its own, a copy goes to ``memory_history``, and it is reported."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pg import sql

pytest.importorskip("psycopg")

from hermes_core.cli import main
from hermes_core.memory import MemoryStore
from hermes_core.memory.dated import read_block_dates, write_block_dates
from hermes_core.memory.dates import entry_key
from hermes_core.types import Finding
from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.memory import PostgresMemoryDocuments


def no_threats(text: str) -> list[Finding]:
    return []


@pytest.fixture
def documents(pg_dsn: str) -> Iterator[PostgresMemoryDocuments]:
    opened = PostgresMemoryDocuments(Database(pg_dsn))
    yield opened
    opened.close()


def test_writes_keep_the_meta_column_in_step(
    documents: PostgresMemoryDocuments, pg_dsn: str
) -> None:
    store = MemoryStore(documents, scanner=no_threats, user_id="alice")
    for entry in ("tea", "coffee"):
        assert store.add("user", entry)["success"]
    assert store.replace("user", "coffee", "espresso")["success"]
    assert store.add("user", "tea")["success"]  # a duplicate: used
    [(meta,)] = sql(pg_dsn, "SELECT meta FROM hermes.memory_blocks WHERE scope = 'alice'")
    assert isinstance(meta, dict)
    assert [r["sha256"] for r in meta["entries"]] == [entry_key("tea"), entry_key("espresso")]
    tea, espresso = meta["entries"]
    assert tea["last_used"] is not None and espresso["created"] <= espresso["updated"]
    dated = dict(store.dated("user"))
    assert all(d is not None for d in dated.values())


def test_an_operator_appending_text_is_kept_as_an_entry_with_a_copy(
    documents: PostgresMemoryDocuments, pg_dsn: str
) -> None:
    store = MemoryStore(documents, scanner=no_threats)
    for entry in ("first", "last entry"):
        assert store.add("memory", entry)["success"]
    sql(pg_dsn, "UPDATE hermes.memory_blocks SET text = text || E'\\nnote' WHERE scope = ''")
    assert store.entries("memory") == ["first", "last entry", "note"]
    removed = store.remove("memory", "last entry")
    assert removed["success"] and removed["appended"] == ["note"], removed
    assert "hermes.memory_history" in removed["message"]
    assert store.raw("memory") == "first\n§\nnote"
    assert sql(pg_dsn, "SELECT text, reason FROM hermes.memory_history") == [
        ("first\n§\nlast entry\nnote", "drift")
    ]


def test_the_public_pair_moves_dates_from_files_to_postgres(
    documents: PostgresMemoryDocuments, tmp_path: Path
) -> None:
    files = MemoryStore(tmp_path / "m", scanner=no_threats)
    assert files.add("memory", "shared fact")["success"]
    rows = MemoryStore(documents, scanner=no_threats)
    assert rows.add("memory", "shared fact")["success"]
    dates = read_block_dates(files.documents, "memory", None)
    assert write_block_dates(documents, "memory", None, dates) == 1
    assert dict(rows.dated("memory")) == dict(files.dated("memory"))


def test_an_approval_that_finds_its_entry_already_there_lands_once_and_marks_it_used(
    capsys: pytest.CaptureFixture[str],
    isolated_home: Path,
    pg_dsn: str,
    documents: PostgresMemoryDocuments,
) -> None:
    """The approval stores only dates (the text is unchanged) and consumes its record in
    the same transaction, checked against the version it read."""
    (isolated_home / "config.yaml").write_text(
        f"memory:\n  backend: postgres\n  write_approval: stage\nsessions:\n  dsn: {pg_dsn}\n",
        encoding="utf-8",
    )
    assert main(["memory", "add", "a staged fact"]) == 0
    staged = capsys.readouterr().out.split("staged as ")[1][:8]
    store = MemoryStore(documents, scanner=no_threats)
    assert store.add("memory", "a staged fact")["success"]  # lands meanwhile, by other means
    assert dict(store.dated("memory"))["a staged fact"].last_used is None  # type: ignore[union-attr]
    assert main(["memory", "approve", staged]) == 0, capsys.readouterr()
    assert store.entries("memory") == ["a staged fact"]
    assert dict(store.dated("memory"))["a staged fact"].last_used is not None  # type: ignore[union-attr]
    assert sql(pg_dsn, "SELECT count(*) FROM hermes.memory_pending") == [(0,)]
