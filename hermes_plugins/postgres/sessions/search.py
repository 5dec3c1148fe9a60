"""Search over one user's sessions: ``tsvector`` with ``ts_rank_cd``, ``ILIKE`` for CJK.

Which way a query runs (its terms come from :func:`hermes_core.sessions.query.parse_query`,
and every term reaches the server as a bound parameter, never as SQL):

* no Chinese, Japanese or Korean in the query: each term becomes
  ``phraseto_tsquery('simple', search_words(term))`` (split exactly as the index splits the
  rows, so a term is a phrase of its words and nothing in it is tsquery syntax), the terms
  are ANDed and matched against the GIN-indexed ``search`` column; ranked by ``ts_rank_cd``
  with tool names weighted above content above arguments, and the length normalised (a
  dense short message beats a long one that mentions the word once);
* CJK in the query: every term must occur (``ILIKE``) in a row that holds CJK text, served
  by the partial trigram index when ``pg_trgm`` is there and by a scan of those rows when it
  is not; ranked BM25-like on how often the terms occur, saturated and length-normalised.

Both filter by the caller in SQL: the row's owner token narrows (a lexeme of the tsvector,
so the GIN lookup itself returns the caller's rows without re-reading them; a plain column
test on the CJK rows), then the session's ``user_id`` decides, exactly: equal to the caller's, or
``NULL`` for the anonymous principal ``None``, which never matches a named user. Hits are
grouped by session (the best message, how many matched), ``exclude_sessions`` are dropped,
at most ``limit`` sessions return; archived rows count like active ones. As in the SQLite
store only the newest :data:`MAX_RANKED` of the caller's matching messages are ranked, which
keeps a query for a word in every message fast.

Bounded by id: GIN cannot hand out "the newest matches" without visiting every match (a user
holding 40% of a million messages has ~120,000 for a common word: 250 ms). So the statement
first runs over the newest ids only (``m.id >= floor``, :data:`FIRST_SPAN` windows' worth),
and reports how many of the caller's matches it found there; when that is the whole window,
those are exactly the newest, else the floor widens (by how short it fell) and the statement
runs again, at last with no floor. The answer is the unbounded statement's, row for row.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import psycopg

from hermes_core.sessions.query import has_cjk, like_pattern, parse_query
from hermes_core.sessions.records import BestMatch, context_line, snippet
from hermes_core.sessions.sqlite.rows import owner_token
from hermes_core.sessions.store import SearchHit, SnippetLine
from hermes_plugins.postgres.sessions import schema
from hermes_plugins.postgres.sessions.rows import text_in, text_out
from hermes_plugins.postgres.sessions.schema import MESSAGES, SESSIONS

__all__ = ["MAX_RANKED", "run_search", "search_plan"]

MAX_RANKED = 2_000
#: the first floor lies this many windows of ids below the newest message
FIRST_SPAN = 16
#: ts_rank_cd weights of D (unused), C (tool arguments), B (content), A (tool names)
_WEIGHTS = "'{0.1, 0.25, 0.5, 1.0}'::float4[]"
#: BM25 constants of the CJK ranking, and the row length (characters) taken as typical
_K1, _B, _TYPICAL_CHARS = 1.2, 0.75, 400.0
_TEXT = schema.search_text("m.")
#: the row's text, case folded once for the CJK ranking
_BODY = f"CROSS JOIN LATERAL (SELECT lower({_TEXT}) AS body) AS h"
#: the newest id, and whether the word column has statistics
_NEWEST = f"""SELECT (SELECT max(id) FROM {MESSAGES}),
    EXISTS (SELECT FROM pg_catalog.pg_stats WHERE schemaname = '{schema.SCHEMA}'
        AND tablename = 'messages' AND attname = 'search')"""


def run_search(
    conn: psycopg.Connection[Any],
    query: str,
    *,
    user_id: str | None,
    limit: int,
    exclude_sessions: Collection[str],
) -> list[SearchHit]:
    """The hits for ``query``, inside the caller's transaction."""
    terms = parse_query(query)
    if not terms or limit <= 0:
        return []
    _settings(conn)
    best = [BestMatch(*row) for row in _best(conn, terms, user_id, limit, exclude_sessions)]
    return [_hit(conn, b, terms) for b in best]


def _best(
    conn: psycopg.Connection[Any],
    terms: Sequence[str],
    user_id: str | None,
    limit: int,
    exclude_sessions: Collection[str],
) -> list[tuple[Any, ...]]:
    """The best row of each session: the statement over the newest ids first, the floor
    widened until the caller's newest :data:`MAX_RANKED` matches all lie above it."""
    top, known = conn.execute(_NEWEST).fetchone() or (None, True)
    top = int(top or 0)
    # without statistics the planner takes the word index alone (it guesses a few matches)
    # and visits every match; the first, narrow, step then walks the primary key instead
    walk = not known
    span = MAX_RANKED * FIRST_SPAN
    while True:
        floor = top - span + 1 if top > span else 0
        sql, params = _prepared(terms, user_id, limit, exclude_sessions, floor=floor, walk=walk)
        found = conn.execute(sql, params).fetchall()
        walk = False
        ranked = int(found[0][-1]) if found else 0
        if floor == 0 or ranked >= MAX_RANKED:
            return [tuple(r[:-1]) for r in found]
        # as many more ids as the matches found so far say the window needs, twice over
        span *= max(4, 2 * MAX_RANKED // max(ranked, 1))


def search_plan(
    conn: psycopg.Connection[Any], query: str, *, user_id: str | None, floor: int = 0
) -> str:
    """``EXPLAIN`` of a statement :func:`run_search` runs (tests, and looking at plans):
    the last, unbounded one, or the one bounded by ``floor``."""
    sql, params = _prepared(parse_query(query), user_id, 3, (), floor=floor)
    _settings(conn)
    return "\n".join(str(row[0]) for row in conn.execute(f"EXPLAIN {sql}", params))


def _settings(conn: psycopg.Connection[Any]) -> None:
    conn.execute("SET LOCAL jit = off")  # compiling costs more than these queries take
    # the index, always: with statistics the planner may prefer reading every row and
    # testing it (~10x slower for a user holding many rows); without, it guesses
    conn.execute("SET LOCAL enable_seqscan = off")


def _prepared(
    terms: Sequence[str],
    user_id: str | None,
    limit: int,
    exclude_sessions: Collection[str],
    *,
    floor: int = 0,
    walk: bool = False,
) -> tuple[str, dict[str, Any]]:
    """The statement and its parameters; ``floor`` > 0 bounds the matches by id, and
    ``walk`` has them read through the primary key's range only (a word query)."""
    params: dict[str, Any] = {
        "floor": floor,
        "owner": owner_token(user_id),
        "user": text_in(user_id),
        "exclude": [text_in(str(s)) for s in exclude_sessions],
        "limit": min(int(limit), 10_000),
        "window": MAX_RANKED,
    }
    for i, term in enumerate(terms):
        params[f"term{i}"] = term
        params[f"like{i}"] = like_pattern(term)
    # exact (text equality, or the anonymous principal's NULL), and either way indexed
    user_test = "s.user_id IS NULL" if user_id is None else "s.user_id = %(user)s"
    if any(has_cjk(t) for t in terms):
        match = f"m.owner = %(owner)s AND {_scanned_match(len(terms))}"
        match = _bounded(match, floor)
        return _statement(match, _scanned_score(len(terms)), user_test, _BODY), params
    query = _tsquery(len(terms))
    # the owner token as a plain lexeme: GIN answers "word AND owner" exactly, with no
    # recheck of each row's tsvector (a weight or a phrase would need one); a content word
    # that spells a token only widens the candidates, the user test decides; a query whose
    # terms hold no word the index knows (``ª``) matches nothing, not all
    owner = "(%(owner)s::text)::tsquery"
    word = f"m.search @@ ({query} && {owner})"
    # ``IS TRUE`` (the same test) is one the word index cannot serve: the range must
    word = f"({word}) IS TRUE" if walk and floor > 0 else word
    match = _bounded(f"numnode({query}) > 0 AND {word}", floor)
    return _statement(match, f"ts_rank_cd({_WEIGHTS}, m.search, {query}, 1)", user_test), params


def _bounded(match: str, floor: int) -> str:
    """With a floor, only ids from it up: the planner can then read the primary key's range
    (or AND its bitmap with the word index's) instead of visiting every match."""
    return f"m.id >= %(floor)s AND {match}" if floor > 0 else match


def _tsquery(count: int) -> str:
    """Each term a phrase of its words (split as the index splits), all of them required;
    written out where it is used (not joined from a CTE) so that the planner folds it into
    a constant and the GIN index can serve it."""
    terms = " && ".join(
        f"phraseto_tsquery('pg_catalog.simple', {schema.words(f'%(term{i})s::text')})"
        for i in range(count)
    )
    return f"({terms})"


def _scanned_match(count: int) -> str:
    """A query with CJK: every term occurs (``ILIKE``) in a row that holds CJK text (the
    trigram index's predicate, so the planner can use it)."""
    likes = " AND ".join(f"{_TEXT} ILIKE %(like{i})s" for i in range(count))
    return f"{schema.has_cjk('m.')} AND {likes}"


def _scanned_score(count: int) -> str:
    return " + ".join(_bm25(i) for i in range(count))


def _bm25(i: int) -> str:
    """One term's BM25-like weight: occurrences (case folded), saturated, length-normalised."""
    term = f"lower(%(term{i})s::text)"
    tf = (
        f"((length(h.body) - length(replace(h.body, {term}, '')))::float8"
        f" / greatest(length({term}), 1))"
    )
    norm = f"(1 - {_B} + {_B} * length(h.body) / {_TYPICAL_CHARS})"
    return f"({tf} * {_K1 + 1} / ({tf} + {_K1} * {norm}))"


def _statement(match: str, score: str, user_test: str, lateral: str = "") -> str:
    """The best row of each session among the caller's matching rows, best sessions first.

    Written so that the plan does not depend on statistics (a fresh or never-analysed table
    has none): ``matched`` reads one table with one index condition and is materialised (left
    to itself, the planner may serve "the newest 2,000" by walking the primary key backwards,
    testing every row); ``owned`` checks the user exactly, against the set of the caller's
    sessions (one hashed subplan: ``IS TRUE`` keeps the planner from making the test a join,
    which a low estimate of the matches turns into a loop over the sessions for each match),
    before the newest are taken; every lookup of a row or a
    session by its key is a subquery per row. ``OFFSET 0`` keeps the planner from turning
    those subqueries into joins whose method an estimate would pick. The last column,
    ``ranked``, counts the caller's newest matches taken (the floor widens while it is short).
    """
    return f"""
        WITH matched AS MATERIALIZED (
            SELECT m.id, m.session_id FROM {MESSAGES} AS m WHERE {match}),
        owned AS (
            SELECT matched.id FROM matched WHERE (matched.session_id IN (
                SELECT s.id FROM {SESSIONS} AS s WHERE {user_test} OFFSET 0)) IS TRUE),
        newest AS (SELECT id FROM owned ORDER BY id DESC LIMIT %(window)s),
        scored AS (
            SELECT m.id, m.session_id, m.seq, m.role, ({score})::float8 AS score
            FROM newest CROSS JOIN LATERAL (
                SELECT * FROM {MESSAGES} AS m WHERE m.id = newest.id OFFSET 0) AS m
            {lateral}
            WHERE NOT (m.session_id = ANY(%(exclude)s::text[]))),
        ranked AS (
            SELECT scored.*,
                count(*) OVER (PARTITION BY scored.session_id) AS matches,
                row_number() OVER (
                    PARTITION BY scored.session_id ORDER BY scored.score DESC, scored.seq
                ) AS place
            FROM scored)
        SELECT r.session_id, s.user_id, s.title, s.started_at, r.seq, r.role, r.score,
            r.matches, (SELECT count(*) FROM newest) AS ranked
        FROM ranked AS r CROSS JOIN LATERAL (
            SELECT user_id, title, started_at FROM {SESSIONS} WHERE id = r.session_id OFFSET 0
        ) AS s
        WHERE r.place = 1
        ORDER BY r.score DESC, s.started_at DESC, r.session_id COLLATE "C"
        LIMIT %(limit)s"""


def _hit(conn: psycopg.Connection[Any], best: BestMatch, terms: Sequence[str]) -> SearchHit:
    """The hit: an excerpt of the matching row, and its neighbours just before and after it by
    seq (archived rows included)."""
    rows = conn.execute(
        f"""SELECT seq, role, content, tool_names, tool_args FROM {MESSAGES}
        WHERE session_id = %(sid)s AND seq IN (
            (SELECT max(seq) FROM {MESSAGES} WHERE session_id = %(sid)s AND seq < %(seq)s),
            %(seq)s,
            (SELECT min(seq) FROM {MESSAGES} WHERE session_id = %(sid)s AND seq > %(seq)s))
        ORDER BY seq""",
        {"sid": best.session_id, "seq": best.seq},
    ).fetchall()
    context: list[SnippetLine] = []
    marked = ""
    for seq, role, *texts in rows:
        content, tools, args = (text_out(t) for t in texts)
        if seq == best.seq:
            marked = snippet([content, tools, args], terms)
            context.append(SnippetLine(seq, text_out(role) or "", marked))
        else:
            context.append(context_line(seq, text_out(role), content, tools))
    return best.hit(marked, context, text_out)
