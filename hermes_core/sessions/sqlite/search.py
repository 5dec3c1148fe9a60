"""Search over one user's sessions: FTS5 with BM25, trigram for CJK, ``LIKE`` as the fallback.

Which engine answers (the terms come from :func:`hermes_core.sessions.query.parse_query`):

* no Chinese, Japanese or Korean in the query: ``messages_fts`` (words, BM25);
* CJK: ``messages_trigram`` for the terms of 3 characters or more (BM25), ``LIKE`` for the
  shorter ones (a trigram index cannot look up fewer than 3 characters); with only short
  terms, ``LIKE`` over the user's rows that hold CJK text (the trigram index lists them);
* no FTS5: ``LIKE`` over all of the user's rows, scored by how often the terms occur (ASCII
  case folded, as ``LIKE`` does).

Every engine filters by the caller's user id: the index query names the user's ``owner``
token (so the index returns that user's rows only) and the statement checks
``sessions.user_id IS ?`` exactly (``None`` matches only the anonymous principal). Hits are
grouped by session (the best message, how many messages matched), ``exclude_sessions`` are
dropped, at most ``limit`` sessions come back; archived rows are searched like active ones.

A query that matches more than :data:`MAX_RANKED` of the user's messages (a word in nearly
every message) ranks the newest :data:`MAX_RANKED` of them, and ``matches`` counts within
those: BM25 costs a lookup per matching row, and this bound keeps every query fast.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from hermes_core.sessions.query import has_cjk, like_pattern, parse_query
from hermes_core.sessions.records import BestMatch, context_line, snippet
from hermes_core.sessions.sqlite.fts import TEXT_COLUMNS
from hermes_core.sessions.sqlite.packing import unpacked
from hermes_core.sessions.sqlite.rows import owner_token
from hermes_core.sessions.store import SearchHit, SnippetLine

__all__ = ["MAX_RANKED", "fts5_query", "run_search"]

MAX_RANKED = 2_000
# BM25 weights of (content, tool_names, tool_args, owner): a tool name is short and telling,
# arguments are long, and the owner token is a filter, not a match
_WEIGHTS = "1.0, 2.0, 0.5, 0.0"
_TEXT = (
    f"(coalesce({unpacked('content', 'm.')}, '') || char(10) || coalesce(m.tool_names, '')"
    f" || char(10) || coalesce({unpacked('tool_args', 'm.')}, ''))"
)


@dataclass(frozen=True)
class _Plan:
    """How one query runs: the index table (or none), what it matches, what is LIKEd."""

    table: str | None
    indexed: tuple[str, ...]
    scanned: tuple[str, ...]


def run_search(
    conn: sqlite3.Connection,
    query: str,
    *,
    user_id: str | None,
    limit: int,
    exclude_sessions: Collection[str],
    fts: bool,
) -> list[SearchHit]:
    """The hits for ``query``; the caller holds a read transaction."""
    terms = parse_query(query)
    if not terms or limit <= 0:
        return []
    plan = _plan(terms, fts)
    params: dict[str, object] = {
        "user": user_id,
        "exclude": json.dumps(sorted({str(s) for s in exclude_sessions})),
        "limit": min(int(limit), 10_000),  # SQLite integers are 64-bit
    }
    likes = _like_clauses(plan.scanned, params)
    if plan.table is None:  # no index: all the user's rows, LIKE
        source = (
            f"SELECT m.id, {_occurrences(plan.scanned)} AS score FROM sessions AS s "
            "JOIN messages AS m ON m.session_id = s.id "
            f"WHERE s.user_id IS :user AND {' AND '.join(likes)}"
        )
        likes = []
    elif plan.indexed:  # the index ranks; short terms (if any) are LIKEd after the join
        table = plan.table
        params["match"] = _owner_match(user_id, plan.indexed)
        params["floor"] = _floor(conn, table, params["match"])
        # computed first: bm25() works only in the statement that runs the MATCH
        source = (
            f"SELECT rowid AS id, -bm25({table}, {_WEIGHTS}) AS score FROM {table} "
            f"WHERE {table} MATCH :match AND rowid >= :floor"
        )
    else:  # short CJK terms only: LIKE over the user's rows the trigram index holds
        table = plan.table
        params["match"] = _owner_match(user_id, ())
        source = (
            f"SELECT m.id, {_occurrences(plan.scanned)} AS score FROM {table} "
            f"CROSS JOIN messages AS m ON m.id = {table}.rowid "
            f"WHERE {table} MATCH :match AND {' AND '.join(likes)}"
        )
        likes = []
    found = conn.execute(_grouped(source, likes), params).fetchall()
    return [_hit(conn, row_id, BestMatch(*best), terms) for row_id, *best in found]


def _plan(terms: tuple[str, ...], fts: bool) -> _Plan:
    if not fts:
        return _Plan(None, (), terms)
    if not any(has_cjk(t) for t in terms):
        return _Plan("messages_fts", terms, ())
    indexed = tuple(t for t in terms if len(t) >= 3)
    scanned = tuple(t for t in terms if len(t) < 3)
    return _Plan("messages_trigram", indexed, scanned)


def fts5_query(terms: Sequence[str]) -> str:
    """Each term as an FTS5 string (a phrase), so nothing in it is syntax; joined by AND."""
    return " ".join('"' + term.replace('"', '""') + '"' for term in terms)


def _owner_match(user_id: str | None, terms: Sequence[str]) -> str:
    """The MATCH text: the user's owner token, and the terms in the text columns."""
    owner = f'owner : "{owner_token(user_id)}"'
    if not terms:
        return owner
    return f"{owner} AND {{{' '.join(TEXT_COLUMNS)}}} : ({fts5_query(terms)})"


def _floor(conn: sqlite3.Connection, table: str, match: object) -> int:
    """The lowest rowid among the newest MAX_RANKED matches (0 when there are fewer)."""
    row = conn.execute(
        f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (match, MAX_RANKED - 1),
    ).fetchone()
    return int(row[0]) if row else 0


def _grouped(source: str, conditions: Sequence[str]) -> str:
    """Group the scored rows of ``source`` (``id``, ``score``) by session, for one user."""
    where = " AND ".join(
        [
            "s.user_id IS :user",
            "m.session_id NOT IN (SELECT value FROM json_each(:exclude))",
            *conditions,
        ]
    )
    return f"""WITH h AS MATERIALIZED ({source})
        SELECT m.id, m.session_id, s.user_id, s.title, s.started_at, m.seq, m.role,
            max(h.score) AS best, count(*) AS matches
        FROM h
        JOIN messages AS m ON m.id = h.id
        JOIN sessions AS s ON s.id = m.session_id
        WHERE {where}
        GROUP BY m.session_id
        ORDER BY best DESC, s.started_at DESC, m.session_id
        LIMIT :limit"""


def _like_clauses(terms: Sequence[str], params: dict[str, object]) -> list[str]:
    clauses = []
    for i, term in enumerate(terms):
        params[f"like{i}"] = like_pattern(term)
        params[f"term{i}"] = term
        clauses.append(f"{_TEXT} LIKE :like{i} ESCAPE '\\'")
    return clauses


def _occurrences(terms: Sequence[str]) -> str:
    """How often the terms occur in the row's text (ASCII case folded, as LIKE does)."""
    return " + ".join(
        f"(length({_TEXT}) - length(replace(lower({_TEXT}), lower(:term{i}), '')))"
        f" * 1.0 / max(length(:term{i}), 1)"
        for i in range(len(terms))
    )


def _hit(conn: sqlite3.Connection, row_id: int, best: BestMatch, terms: Sequence[str]) -> SearchHit:
    """The hit: an excerpt of the matching row and its neighbours just before and after it by
    seq (archived rows included)."""
    texts = conn.execute(
        f"SELECT {unpacked('content')}, tool_names, {unpacked('tool_args')} FROM messages "
        "WHERE id = ?",
        (row_id,),
    ).fetchone()
    marked = snippet(texts, terms)
    around = (
        f"SELECT seq, role, {unpacked('content')}, tool_names FROM messages "
        "WHERE session_id = ? AND "
    )
    before = conn.execute(
        around + "seq < ? ORDER BY seq DESC LIMIT 1", (best.session_id, best.seq)
    ).fetchall()
    after = conn.execute(
        around + "seq > ? ORDER BY seq LIMIT 1", (best.session_id, best.seq)
    ).fetchall()
    return best.hit(
        marked,
        [
            *(context_line(*row) for row in before),
            SnippetLine(best.seq, best.role or "", marked),
            *(context_line(*row) for row in after),
        ],
    )
