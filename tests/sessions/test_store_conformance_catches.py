"""The conformance kit catches broken backends: each broken variant of the SQLite store below
breaks one promise, and the kit's checks for that promise must fail against it (while the
same checks pass against the unbroken store, so the failure is the breakage's).

The checks are called directly (a fresh store each), not through a nested pytest run.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import sqlite3
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from itertools import count
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from hermes_core.errors import SessionError
from hermes_core.sessions.sqlite import SQLiteSessionStore
from hermes_core.sessions.store import (
    CompactionCommit,
    SearchHit,
    SessionRecord,
    SessionStore,
    StoredMessage,
)
from hermes_core.testing import SessionStoreConformance

KIT = SessionStoreConformance()


class SearchIgnoresUser(SQLiteSessionStore):
    """Searches every user's sessions (the reference implementation's bug)."""

    owners: set[str | None]

    def open_session(self, session_id: str, *, user_id: str | None, **kw: Any) -> SessionRecord:
        self.__dict__.setdefault("owners", set()).add(user_id)
        return super().open_session(session_id, user_id=user_id, **kw)

    def search(self, query: str, *, user_id: str | None, **kw: Any) -> list[SearchHit]:
        owners = self.__dict__.get("owners", {user_id})
        search = super().search
        hits = [h for owner in owners for h in search(query, user_id=owner, **kw)]
        return sorted(hits, key=lambda h: -h.score)


class AppendIgnoresAfterSeq(SQLiteSessionStore):
    def append_messages(self, session_id: str, messages: Any, **kw: Any) -> list[int]:
        kw.pop("after_seq", None)
        return super().append_messages(session_id, messages, **kw)


class AppendDropsState(SQLiteSessionStore):
    def append_messages(self, session_id: str, messages: Any, **kw: Any) -> list[int]:
        kw.pop("state", None)
        return super().append_messages(session_id, messages, **kw)


class CompactionDoublesRows(SQLiteSessionStore):
    """Appends the new view without archiving the old one: a doubled transcript."""

    def commit_compaction(
        self, session_id: str, messages: Any, origins: Any, *, in_place: bool, **kw: Any
    ) -> CompactionCommit:
        if not in_place:
            return super().commit_compaction(session_id, messages, origins, in_place=False, **kw)
        seqs = self.append_messages(session_id, messages, after_seq=kw.get("after_seq"))
        return CompactionCommit(session_id, tuple(seqs), 0)


class CompactionIgnoresAfterSeq(SQLiteSessionStore):
    def commit_compaction(self, session_id: str, *args: Any, **kw: Any) -> CompactionCommit:
        kw.pop("after_seq", None)
        return super().commit_compaction(session_id, *args, **kw)


class RestoreDropsApiCopies(SQLiteSessionStore):
    def restore_view(self, session_id: str, *args: Any, **kw: Any) -> CompactionCommit:
        kw.pop("api_contents", None)
        return super().restore_view(session_id, *args, **kw)


class RestoreKeepsChildrenLive(SQLiteSessionStore):
    """Ignores ``abandon``: the parent stays continued (stale) and resume would leave it."""

    def restore_view(self, session_id: str, *args: Any, **kw: Any) -> CompactionCommit:
        kw["abandon"] = ()
        return super().restore_view(session_id, *args, **kw)


class WritesIntoUndoneSessions(SQLiteSessionStore):
    """Takes rows into a child an undo abandoned: turns no resume would ever show."""

    def append_messages(self, session_id: str, messages: Any, **kw: Any) -> list[int]:
        self._pool.write(
            lambda c: c.execute(
                "UPDATE sessions SET end_reason = 'closed' WHERE id = ? AND end_reason = 'undone'",
                (session_id,),
            )
        )
        return super().append_messages(session_id, messages, **kw)


class RestoreIgnoresAbandonAfterSeq(SQLiteSessionStore):
    """Abandons a child whatever rows it took since the undo read it."""

    def restore_view(self, session_id: str, *args: Any, **kw: Any) -> CompactionCommit:
        kw.pop("abandon_after_seq", None)
        return super().restore_view(session_id, *args, **kw)


class LastSeqSkipsArchived(SQLiteSessionStore):
    def last_seq(self, session_id: str) -> int:
        return max((m.seq for m in self.messages(session_id)), default=0)


class ListsOldestFirst(SQLiteSessionStore):
    def list_sessions(self, *, user_id: str | None, limit: int = 50) -> list[SessionRecord]:
        return list(reversed(super().list_sessions(user_id=user_id, limit=10_000)))[:limit]


class GetsAnyOwnersSession(SQLiteSessionStore):
    """Answers get_session without checking the owner."""

    def get_session(self, session_id: str, *, user_id: str | None) -> SessionRecord | None:
        for owner in (user_id, None, "alice", "bob", "", "Alice", "alice ", "u"):
            found = super().get_session(session_id, user_id=owner)
            if found is not None:
                return found
        return None


class ResumesAnyOwnersSession(GetsAnyOwnersSession):
    def open_session(self, session_id: str, *, user_id: str | None, **kw: Any) -> SessionRecord:
        return self.get_session(session_id, user_id=user_id) or super().open_session(
            session_id, user_id=user_id, **kw
        )


def _rewrite(
    rows: list[StoredMessage], change: Callable[[Mapping[str, Any]], Any]
) -> list[StoredMessage]:
    return [replace(row, message=change(row.message)) for row in rows]


def _without_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, list):
        return [_without_nul(v) for v in value]
    if isinstance(value, dict):
        return {_without_nul(k): _without_nul(v) for k, v in value.items()}
    return value


class LosesNulCharacters(SQLiteSessionStore):
    def messages(self, session_id: str, **kw: Any) -> list[StoredMessage]:
        rows = super().messages(session_id, **kw)
        return _rewrite(rows, _without_nul)


class NumbersBecomeFloats(SQLiteSessionStore):
    """Keeps JSON numbers as floats (``1`` comes back ``1.0``): equal under ``==``."""

    def messages(self, session_id: str, **kw: Any) -> list[StoredMessage]:
        rows = super().messages(session_id, **kw)
        return _rewrite(rows, lambda m: json.loads(json.dumps(m), parse_int=float))


class DropsNoneValues(SQLiteSessionStore):
    def messages(self, session_id: str, **kw: Any) -> list[StoredMessage]:
        rows = super().messages(session_id, **kw)
        return _rewrite(rows, lambda m: {k: v for k, v in m.items() if v is not None})


class SaveStateMerges(SQLiteSessionStore):
    def save_state(self, session_id: str, state: Mapping[str, Any]) -> None:
        found = self.get_session(session_id, user_id=None)  # the kit's checks use None here
        super().save_state(session_id, {**(found.state if found else {}), **state})


class CountersAreReplaced(SQLiteSessionStore):
    """Sets each counter to the delta instead of adding it."""

    def add_counters(self, session_id: str, deltas: Mapping[str, int]) -> None:
        found = self.get_session(session_id, user_id=None)
        current = dict(found.counters) if found else {}
        super().add_counters(session_id, {k: v - current.get(k, 0) for k, v in deltas.items()})


class SearchRaisesOnSyntax(SQLiteSessionStore):
    """Hands the query to the index unsanitised (simulated: what FTS5 says to a stray quote)."""

    def search(self, query: str, **kw: Any) -> list[SearchHit]:
        if any(ch in query for ch in "\"'*:()^"):
            raise sqlite3.OperationalError(f"fts5: syntax error near {query[:10]!r}")
        return super().search(query, **kw)


class SearchIgnoresExcludeAndLimit(SQLiteSessionStore):
    def search(self, query: str, *, user_id: str | None, **kw: Any) -> list[SearchHit]:
        return super().search(query, user_id=user_id, limit=50)


class SearchWorstFirst(SQLiteSessionStore):
    def search(self, query: str, *, limit: int = 3, **kw: Any) -> list[SearchHit]:
        return list(reversed(super().search(query, limit=50, **kw)))[:limit]


class SnippetsUnmarked(SQLiteSessionStore):
    def search(self, query: str, **kw: Any) -> list[SearchHit]:
        hits = super().search(query, **kw)
        return [replace(h, snippet=h.snippet.replace(">>", "").replace("<<", "")) for h in hits]


class SearchSkipsArchived(SQLiteSessionStore):
    def search(
        self, query: str, *, exclude_sessions: Collection[str] = (), **kw: Any
    ) -> list[SearchHit]:
        hits = super().search(query, exclude_sessions=exclude_sessions, **kw)
        active = {(h.session_id, m.seq) for h in hits for m in self.messages(h.session_id)}
        return [h for h in hits if (h.session_id, h.seq) in active]


class CloseTwiceRaises(SQLiteSessionStore):
    def close(self) -> None:
        if self.__dict__.get("closed"):
            raise RuntimeError("already closed")
        self.__dict__["closed"] = True
        super().close()


class Case(NamedTuple):
    """A broken variant, a kit check that must fail against it, and how it must fail."""

    kind: type[SQLiteSessionStore]
    check: str
    reason: str  # a regex the failure's message matches: the check fails for the breakage
    params: Mapping[str, Any] = {}


CAUGHT = [
    Case(SearchIgnoresUser, "search_is_filtered_by_user_in_every_direction", "their own"),
    Case(SearchIgnoresUser, "search_of_archived_rows_is_filtered_by_user", "bob found alice"),
    Case(SearchIgnoresUser, "hostile_queries_never_raise", "another user", {"query": "secret"}),
    Case(AppendIgnoresAfterSeq, "a_stale_append_is_refused_and_changes_nothing", "DID NOT RAISE"),
    Case(AppendDropsState, "state_is_written_in_the_same_append", "must replace the session"),
    Case(CompactionDoublesRows, "compaction_in_place_archives_keeps_and_reorders", r"seqs\[i\]"),
    Case(CompactionDoublesRows, "successive_compactions_keep_every_original_row", "new summary"),
    Case(
        CompactionIgnoresAfterSeq,
        "a_stale_compaction_is_refused_and_changes_nothing",
        "DID NOT RAISE StaleSessionError",
    ),
    Case(LastSeqSkipsArchived, "last_seq_counts_archived_rows", "archived rows still count"),
    Case(
        RestoreDropsApiCopies,
        "restore_brings_archived_rows_back_with_their_api_copies",
        "the API copy that was sent",
    ),
    Case(
        RestoreKeepsChildrenLive,
        "restore_abandons_children_and_opens_the_parent_again",
        "must end the abandoned children first",
    ),
    Case(
        WritesIntoUndoneSessions,
        "a_session_an_undo_abandoned_takes_no_more_writes",
        "DID NOT RAISE StaleSessionError",
    ),
    Case(
        RestoreIgnoresAbandonAfterSeq,
        "a_restore_checks_every_session_it_ends",
        "DID NOT RAISE StaleSessionError",
    ),
    Case(ListsOldestFirst, "list_sessions_is_newest_first_per_user_with_a_limit", "newest first"),
    Case(
        GetsAnyOwnersSession,
        "get_and_list_sessions_only_for_their_owner",
        "'bob' read the session of user 'alice'",
        {"owner": "alice", "intruder": "bob"},
    ),
    Case(
        ResumesAnyOwnersSession,
        "another_users_session_is_never_resumed",
        "DID NOT RAISE SessionError",
        {"owner": None, "intruder": "alice"},
    ),
    Case(LosesNulCharacters, "every_message_shape_round_trips_losslessly", "message 4 came back"),
    Case(NumbersBecomeFloats, "every_message_shape_round_trips_losslessly", "came back changed"),
    Case(DropsNoneValues, "every_message_shape_round_trips_losslessly", "message 7 came back"),
    Case(SaveStateMerges, "save_state_replaces_the_whole_state", "replace, not merge"),
    Case(CountersAreReplaced, "add_counters_adds_and_creates_at_zero", "must add each delta"),
    Case(
        SearchRaisesOnSyntax,
        "hostile_queries_never_raise",
        "syntax error",
        {"query": '"unbalanced'},
    ),
    Case(SearchRaisesOnSyntax, "hostile_queries_never_raise", "syntax error", {"query": "a:b"}),
    Case(SearchIgnoresExcludeAndLimit, "search_limit_and_exclude_sessions", "default limit"),
    Case(SearchWorstFirst, "search_puts_the_obviously_better_match_first", "best first"),
    Case(SnippetsUnmarked, "search_hit_fields_snippet_and_neighbours", ">>like this<<"),
    Case(SearchSkipsArchived, "archived_rows_are_searchable_with_their_neighbours", "one hit"),
    Case(CloseTwiceRaises, "close_twice_is_safe", "already closed"),
]
#: how a failing check ends: an assertion, a pytest.raises that saw nothing, or the store's
#: own error escaping it
FAILURES = (AssertionError, pytest.fail.Exception, sqlite3.Error, RuntimeError)


def run_check(name: str, open_store: Callable[[], SessionStore], params: Mapping[str, Any]) -> None:
    """Call one kit check as pytest would: ``store`` and/or ``open_store``, and its params."""
    check = getattr(KIT, f"test_{name}")
    wanted = inspect.signature(check).parameters
    kwargs = dict(params)
    opened: list[SessionStore] = []

    def opener() -> SessionStore:
        opened.append(open_store())
        return opened[-1]

    if "open_store" in wanted:
        kwargs["open_store"] = opener
    if "store" in wanted:
        kwargs["store"] = opener()
    try:
        check(**kwargs)
    finally:
        for store in opened:
            with contextlib.suppress(RuntimeError):  # CloseTwiceRaises, closed by the check
                store.close()


def factory(kind: type[SQLiteSessionStore], path: Path) -> Callable[[], SessionStore]:
    return lambda: kind(path)


def case_id(case: Case) -> str:
    return "-".join([case.kind.__name__, case.check, *map(repr, case.params.values())])


@pytest.mark.parametrize("case", CAUGHT, ids=[case_id(c) for c in CAUGHT])
def test_the_kit_catches_the_broken_backend(tmp_path: Path, case: Case) -> None:
    run_check(case.check, factory(SQLiteSessionStore, tmp_path / "good.db"), case.params)
    with pytest.raises(FAILURES, match=case.reason):
        run_check(case.check, factory(case.kind, tmp_path / "broken.db"), case.params)


@pytest.mark.parametrize(
    "check",
    [
        "everything_survives_close_and_reopen",
        "every_message_shape_round_trips_losslessly",
        "a_stale_append_is_refused_and_changes_nothing",
    ],
)
def test_a_factory_whose_stores_share_nothing_is_caught(tmp_path: Path, check: str) -> None:
    """Each store the factory opens has data of its own (an in-memory backend): durability
    and every cross-instance check fail."""
    fresh = count()

    def forgetful() -> SessionStore:
        return SQLiteSessionStore(tmp_path / f"instance-{next(fresh)}.db")

    with pytest.raises((*FAILURES, SessionError)):
        run_check(check, forgetful, {})


def test_each_broken_variant_still_passes_what_it_does_not_break(tmp_path: Path) -> None:
    """So the checks above fail because of the breakage, not because a variant is unusable."""
    kinds = sorted({case.kind for case in CAUGHT}, key=lambda kind: kind.__name__)
    for n, kind in enumerate(kinds):
        for check in (
            "open_session_resumes_an_existing_session_unchanged",
            "api_contents_token_counts_and_set_api_content",
        ):
            run_check(check, factory(kind, tmp_path / f"{n}-{check[:6]}.db"), {})
