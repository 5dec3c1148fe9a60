"""Tables, the schema version, forward migrations and the CJK index, in the schema ``hermes``.

Why a schema of its own: the database may be an operator's, with its own ``sessions`` table;
everything this store creates lives under :data:`SCHEMA` (a constant for now).

* ``hermes.sessions_schema`` holds the version (one row). :data:`MIGRATIONS` has one entry per
  version. Opening reads the version first and refuses a newer one (or ``sessions`` /
  ``messages`` tables without a version: another program's) before anything is written;
  missing migrations run under the advisory lock :data:`MIGRATION_LOCK`, as memory's do
  (:mod:`hermes_plugins.postgres.migrations`).
* Version 1 is the layout of spec 40 §1 plus what a lossless round trip and search need (the
  same columns as the SQLite store's version 2): ``extra``, ``pos``, ``tool_names``,
  ``tool_args``, ``owner``, and ``search``: a ``tsvector`` generated from content (weight B),
  tool names (A) and tool arguments (C), always in sync, with a GIN index. It also holds the
  row's owner token as the only weight-D lexeme, so one index lookup finds one user's
  matching rows (a word in content can never pass for it). Words are split by
  :data:`WORDS_FUNCTION` (diacritics folded, every punctuation mark a separator) under the
  ``simple`` configuration (no stemming, no stop words: language neutral), the same function
  splitting the query terms, so ``src/app.py:12`` finds what it was written as.
* The trigram index (``pg_trgm``) serves Chinese, Japanese and Korean, written without
  spaces: a partial GIN index over the rows holding such text. It is derived data, outside the
  version: created when the extension can be, else search still answers with ``ILIKE`` over
  those rows, and a log line says so.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg
from psycopg import sql

from hermes_core.errors import SessionError
from hermes_core.redact import redact
from hermes_core.sessions.query import CJK_RANGES
from hermes_plugins.postgres import migrations
from hermes_plugins.postgres.migrations import SCHEMA, Step, existing

__all__ = [
    "MESSAGES",
    "META",
    "MIGRATIONS",
    "MIGRATION_LOCK",
    "SCHEMA",
    "SCHEMA_VERSION",
    "SESSIONS",
    "TRIGRAM_EXTENSION",
    "TRIGRAM_INDEX",
    "VERSION_TABLE",
    "WORDS_FUNCTION",
    "check_server",
    "ensure_trigram",
    "has_cjk",
    "migrate",
    "read_version",
    "search_text",
    "trigram_ready",
    "words",
]

log = logging.getLogger("hermes_context.sessions")

SESSIONS = f"{SCHEMA}.sessions"
MESSAGES = f"{SCHEMA}.messages"
_VERSION = "sessions_schema"
VERSION_TABLE = f"{SCHEMA}.{_VERSION}"
META = f"{SCHEMA}.sessions_meta"
WORDS_FUNCTION = f"{SCHEMA}.search_words"
TRIGRAM_INDEX = "messages_trigram"
#: the extension behind the CJK index (a name, so a test can make it unavailable)
TRIGRAM_EXTENSION = "pg_trgm"
#: ``pg_advisory_xact_lock`` key of schema changes: "hermes" and 1
MIGRATION_LOCK = 0x6865726D65730001
#: ``normalize()`` (folding diacritics in a generated column) arrived in PostgreSQL 13
MIN_SERVER = 130000
#: the characters of each column the word index reads: a tsvector must stay under 1 MB (60,000
#: characters of distinct one-character words, the worst case, take ~400 kB), and positions
#: past 16,383 cannot be told apart anyway; CJK search (ILIKE) reads the whole text
INDEXED_CHARS = 60_000


def _are(ranges: str) -> str:
    """A character class body in PostgreSQL regex escapes (the DDL stays ASCII)."""
    return "".join(
        ch if ch == "-" else (f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
        for ch in ranges
    )


#: ASCII controls and punctuation, Latin-1 symbols (not its letters and digits: ª ² ³ µ ¹ º ¼
#: ½ ¾), general, supplemental, CJK and full-width punctuation
_SEPARATORS = (
    "\\u0001-\\u002f\\u003a-\\u0040\\u005b-\\u0060\\u007b-\\u00a9\\u00ab-\\u00b1\\u00b4"
    "\\u00b6-\\u00b8\\u00bb\\u00bf\\u00d7\\u00f7\\u2000-\\u206f\\u2e00-\\u2e2e\\u2e30-\\u2e7f"
    "\\u3000-\\u3003\\u3008-\\u3020\\u3030\\u303d"
    "\\ufe30-\\ufe4f\\ufeff\\uff01-\\uff0f\\uff1a-\\uff20\\uff3b-\\uff40\\uff5b-\\uff65"
)
_CJK_CLASS = _are(CJK_RANGES)


def words(expression: str) -> str:
    """SQL: the words of ``expression`` as the index splits them."""
    return f"{WORDS_FUNCTION}({expression})"


def search_text(prefix: str = "") -> str:
    """SQL: a row's searchable text (content, tool names, tool arguments), as ``ILIKE`` and
    the trigram index see it; ``prefix`` qualifies the columns (``"m."``)."""
    return (
        f"(coalesce({prefix}content, '') || E'\\n' || coalesce({prefix}tool_names, '') "
        f"|| E'\\n' || coalesce({prefix}tool_args, ''))"
    )


def has_cjk(prefix: str = "") -> str:
    """SQL: the row holds Chinese, Japanese or Korean (the trigram index's predicate)."""
    return f"({search_text(prefix)} ~ '[{_CJK_CLASS}]')"


def _weighted(column: str, weight: str, chars: int = INDEXED_CHARS) -> str:
    text = words(f"left(coalesce({column}, ''), {chars})")
    return f"setweight(to_tsvector('pg_catalog.simple', {text}), '{weight}')"


_V1: tuple[Step, ...] = (
    f"""CREATE FUNCTION {WORDS_FUNCTION}(text) RETURNS text
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
        SELECT regexp_replace(
            regexp_replace(normalize($1, NFD), '[\\u0300-\\u036f]+', '', 'g'),
            '[{_SEPARATORS}]+', ' ', 'g') $$""",
    f"""CREATE TABLE {SESSIONS} (
        id text PRIMARY KEY,
        parent_session_id text,
        user_id text,
        title text,
        model text,
        started_at double precision NOT NULL,
        ended_at double precision,
        end_reason text,
        counters jsonb NOT NULL DEFAULT '{{}}'::jsonb,
        state text NOT NULL DEFAULT '{{}}',
        ordinal bigint GENERATED ALWAYS AS IDENTITY
    )""",
    f"CREATE INDEX sessions_user ON {SESSIONS} (user_id, started_at, ordinal)",
    f"CREATE INDEX sessions_parent ON {SESSIONS} (parent_session_id)",
    f"""CREATE TABLE {MESSAGES} (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id text NOT NULL REFERENCES {SESSIONS} (id),
        seq integer NOT NULL,
        pos integer,
        role text,
        content text,
        tool_calls text,
        tool_call_id text,
        name text,
        extra text,
        tool_names text,
        tool_args text,
        owner text NOT NULL CHECK (owner ~ '^[a-z0-9]+$'),
        "timestamp" double precision NOT NULL,
        token_count bigint,
        active boolean NOT NULL DEFAULT true,
        compacted boolean NOT NULL DEFAULT false,
        api_content text,
        search tsvector GENERATED ALWAYS AS (
            {_weighted("content", "B")}
            || {_weighted("tool_names", "A", 10_000)}
            || {_weighted("tool_args", "C")}
            || setweight((owner || ':1')::tsvector, 'D')
        ) STORED,
        UNIQUE (session_id, seq)
    )""",
    f"CREATE INDEX messages_active_view ON {MESSAGES} (session_id, pos) WHERE active",
    f"CREATE INDEX messages_search ON {MESSAGES} USING gin (search)",
)

#: version 2: retention (``archived_at``; ``sessions_meta`` holds when it last ran)
_V2: tuple[Step, ...] = (
    f"ALTER TABLE {SESSIONS} ADD COLUMN archived_at double precision",
    f"CREATE TABLE {META} (key text PRIMARY KEY, value text NOT NULL)",
)

#: MIGRATIONS[n - 1] takes the store from version n - 1 to version n
MIGRATIONS: tuple[tuple[Step, ...], ...] = (_V1, _V2)
SCHEMA_VERSION = len(MIGRATIONS)


def _why(exc: BaseException) -> str:
    return redact(" ".join(str(exc).split()) or type(exc).__name__)[:300]


def check_server(conn: psycopg.Connection[Any], where: str) -> None:
    """Refuse a server or database this store cannot keep messages in (reads only)."""
    version, encoding = conn.execute(
        "SELECT current_setting('server_version_num')::int, current_setting('server_encoding')"
    ).fetchone() or (0, "")
    if version < MIN_SERVER:
        raise SessionError(
            f"session store {where}: PostgreSQL {version // 10000} is too old; the session "
            "store needs PostgreSQL 13 or newer (nothing was changed)"
        )
    if encoding.upper() not in ("UTF8", "UTF-8"):
        raise SessionError(
            f"session store {where}: the database's encoding is {encoding}, which cannot hold "
            "every message; use a database created with ENCODING 'UTF8' (nothing was changed)"
        )


def read_version(conn: psycopg.Connection[Any], where: str) -> int:
    """The store's schema version (0: none yet), after refusing what this code must not
    touch: a newer version, or ``sessions`` / ``messages`` tables without one. Reads only."""
    return migrations.read_version(
        conn,
        table=_VERSION,
        tables=("sessions", "messages"),
        known=SCHEMA_VERSION,
        label=f"session store {where}",
        what="sessions or messages tables",
        error=SessionError,
    )


def migrate(conn: psycopg.Connection[Any], where: str) -> int | None:
    """Run the missing migrations inside the caller's transaction, holding the migration
    lock; returns the version found (``None`` when another host had done it already)."""
    return migrations.migrate(
        conn,
        lock=MIGRATION_LOCK,
        current=lambda c: read_version(c, where),
        table=_VERSION,
        migrations=MIGRATIONS,
    )


def _trigram_index_exists(conn: psycopg.Connection[Any]) -> bool:
    return bool(existing(conn, TRIGRAM_INDEX))


def _trigram_opclass_schema(conn: psycopg.Connection[Any]) -> str | None:
    row = conn.execute(
        "SELECT n.nspname FROM pg_catalog.pg_opclass AS o "
        "JOIN pg_catalog.pg_namespace AS n ON n.oid = o.opcnamespace "
        "JOIN pg_catalog.pg_am AS a ON a.oid = o.opcmethod "
        "WHERE o.opcname = 'gin_trgm_ops' AND a.amname = 'gin' LIMIT 1"
    ).fetchone()
    return str(row[0]) if row else None


def trigram_ready(conn: psycopg.Connection[Any]) -> bool:
    """True when the CJK trigram index exists (reads only)."""
    return _trigram_index_exists(conn)


def ensure_trigram(conn: psycopg.Connection[Any], where: str) -> bool:
    """Create ``pg_trgm`` (in :data:`SCHEMA` when it is not installed yet) and the trigram
    index, inside the caller's transaction; ``False`` (and a log line) when the extension
    cannot be created here: CJK search then scans those rows with ``ILIKE``."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
    if _trigram_index_exists(conn):
        return True
    schema = _trigram_opclass_schema(conn)
    if schema is None:
        try:
            with conn.transaction():
                conn.execute(
                    sql.SQL("CREATE EXTENSION IF NOT EXISTS {} SCHEMA {}").format(
                        sql.Identifier(TRIGRAM_EXTENSION), sql.Identifier(SCHEMA)
                    )
                )
        except psycopg.Error as exc:
            log.warning(
                "session store %s: the %s extension cannot be created (%s); Chinese, Japanese "
                "and Korean search falls back to ILIKE without an index (ask the database "
                "owner to run CREATE EXTENSION %s)",
                where,
                TRIGRAM_EXTENSION,
                _why(exc),
                TRIGRAM_EXTENSION,
            )
            return False
        schema = _trigram_opclass_schema(conn)
        if schema is None:  # an extension by that name without the operator class
            log.warning(
                "session store %s: %s has no gin_trgm_ops; CJK search uses ILIKE without an index",
                where,
                TRIGRAM_EXTENSION,
            )
            return False
    try:
        with conn.transaction():
            conn.execute(
                sql.SQL("CREATE INDEX {} ON {} USING gin ({} {}.gin_trgm_ops) WHERE {}").format(
                    sql.Identifier(TRIGRAM_INDEX),
                    sql.SQL(MESSAGES),
                    sql.SQL(search_text()),
                    sql.Identifier(schema),
                    sql.SQL(has_cjk()),
                )
            )
    except psycopg.Error as exc:
        log.warning(
            "session store %s: the CJK trigram index cannot be created (%s); CJK search uses "
            "ILIKE without an index",
            where,
            _why(exc),
        )
        return False
    return True
