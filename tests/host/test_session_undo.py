"""``Session.undo_compaction``: the exact transcript from before a compaction comes back, in
the session and in the store, across restarts, child sessions, and with every refusal
changing nothing (docs/undo.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from undo_driver import Driver, Recall, make_host, rows_of, run

import hermes_core as hc
from hermes_core.compression.assemble import is_summary_message
from hermes_core.host.undo_history import UNDO_DEPTH
from hermes_core.testing import registered

SMALL = {"model": {"context_length": 16_000}}
CHILDREN = {"model": {"context_length": 16_000}, "compression": {"in_place": False}}

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.integers(1, 4)),
        st.tuples(st.just("compact"), st.just(0)),
        st.tuples(st.just("undo"), st.integers(0, 3)),
        st.tuples(st.just("restart"), st.just(0)),
    ),
    min_size=1,
    max_size=9,
)


@pytest.mark.parametrize("config", [SMALL, CHILDREN], ids=["in_place", "children"])
@settings(
    max_examples=10,  # derandomized: the same ten sequences, up to nine operations each
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=OPS)
def test_any_sequence_of_compactions_is_undone_exactly(
    tmp_path_factory: pytest.TempPathFactory, config: dict[str, Any], ops: list[Any]
) -> None:
    home = tmp_path_factory.mktemp("home")
    with make_host(home, config) as host, registered(host, Recall(), "recall"):
        driver = Driver(host, "conv")
        run(driver, [("turn", 8), ("compact", 0), *ops, ("undo", 0)])
        driver.session.close()


@pytest.mark.parametrize("config", [SMALL, CHILDREN], ids=["in_place", "children"])
def test_an_undo_after_an_undo_does_not_double_the_restored_copies(
    tmp_path: Path, config: dict[str, Any]
) -> None:
    """Undo 2 brings back copies of rows; compaction 3 then archives them; undoing 1 must
    bring back each message once (the copies are the undo's, not the host's)."""
    with make_host(tmp_path, config) as host, registered(host, Recall(), "recall"):
        driver = Driver(host, "conv")
        ops = [("turn", 8), ("compact", 0), ("turn", 2), ("compact", 0), ("turn", 1)]
        run(driver, [*ops, ("undo", 2), ("turn", 2), ("compact", 0), ("turn", 1), ("undo", 1)])
        assert driver.undos == 2
        records = driver.session.state.history.records
        assert [r.undone.by if r.undone else None for r in records] == [1, 2, 1]


def _driven(host: hc.Hermes, turns: int = 8, sid: str = "conv") -> Driver:
    driver = Driver(host, sid)
    for _ in range(turns):
        driver.turn()
    return driver


def test_undo_restores_the_view_and_archives_the_summary(tmp_path: Path) -> None:
    with make_host(tmp_path, SMALL) as host, registered(host, Recall(), "recall"):
        driver = _driven(host)
        driver.compact()
        assert any(is_summary_message(m) for m in driver.session.messages)
        driver.turn()
        out = driver.undo(None)
        assert not any(is_summary_message(m) for m in out)
        store = host.session_store
        assert store is not None
        everything = store.messages("conv", include_archived=True)
        summaries = [r for r in everything if is_summary_message(r.message)]
        assert summaries and not any(r.active for r in summaries)  # archived, not deleted
        assert any(r.api_content for r in store.messages("conv"))  # the API copies came back
        assert driver.session.state.history.records[0].undone is not None


def test_automatic_compaction_does_not_redo_the_undone_one(tmp_path: Path) -> None:
    kinds: list[str] = []
    with make_host(tmp_path, SMALL) as host:
        driver = _driven(host)
        while not driver.session.state.history.records:  # grow until it compacts by itself
            driver.turn()
        driver.undo(None)
        undone_len = len(driver.session.messages)
        driver.session._listener = lambda e: kinds.append(e.kind)
        driver.turn()  # over the threshold, but within the backoff: no compaction
        assert "compaction_committed" not in kinds
        assert len(driver.session.messages) == undone_len + 2
        assert "compression_blocked" in kinds  # said once, with the reason
        driver.session.on_overflow(413, "prompt is too long")
        driver.turn()  # the provider refused it: overflow recovery compacts at once
        assert "compaction_committed" in kinds
        driver.compact()  # and a forced one always may


def test_the_compressor_state_goes_back_with_it(tmp_path: Path) -> None:
    with make_host(tmp_path, SMALL) as host:
        driver = _driven(host)
        driver.compact()
        first = driver.session.compressor.previous_summary
        driver.turn()
        driver.compact()
        assert driver.session.compressor.previous_summary != first
        driver.undo(None)
        assert driver.session.compressor.previous_summary == first  # the chain follows
        assert driver.session.compressor.compactions == 1


def test_undoing_an_older_one_takes_the_later_ones_along(tmp_path: Path) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    with make_host(tmp_path, SMALL) as host:
        driver = _driven(host)
        driver.compact()
        driver.turn()
        driver.compact()
        driver.turn()
        driver.session._listener = lambda e: events.append((e.kind, dict(e.data)))
        driver.undo(1)
        undone = [d for k, d in events if k == "compaction_undone"]
        size = len(driver.session.messages)
        assert undone == [
            {"compaction": 1, "undone": [1, 2], "messages": size, "appended": 4, "abandoned": []}
        ]
        with pytest.raises(hc.SessionError, match="undone already"):
            driver.session.undo_compaction(2)
        with pytest.raises(hc.SessionError, match="nothing to undo"):
            driver.session.undo_compaction()


def test_refusals_change_nothing(tmp_path: Path) -> None:
    with make_host(tmp_path, SMALL) as host:
        driver = _driven(host)
        with pytest.raises(hc.SessionError, match="nothing to undo"):
            driver.session.undo_compaction()
        driver.compact()
        before, rows = driver.session.messages, rows_of(driver.session)
        for bad, error, match in [
            (7, hc.SessionError, "no compaction 7"),
            ("1", hc.InvalidArgument, "must be an integer"),
            (True, hc.InvalidArgument, "must be an integer"),
        ]:
            with pytest.raises(error, match=match):
                driver.session.undo_compaction(bad)
            assert (driver.session.messages, rows_of(driver.session)) == (before, rows)


def test_a_compaction_too_old_to_undo_is_refused(tmp_path: Path) -> None:
    with make_host(tmp_path, SMALL) as host:
        driver = _driven(host)
        records = driver.session.state.history.records
        while len(records) <= UNDO_DEPTH:
            driver.turn()
            driver.compact()
            records = driver.session.state.history.records
        assert records[0].compressor is None and records[1].compressor is not None
        with pytest.raises(hc.SessionError, match="too old to undo"):
            driver.session.undo_compaction(1)
        driver.undo(2)  # the oldest that kept its state


def test_without_a_store_there_is_nothing_to_bring_back(tmp_path: Path) -> None:
    config = {**SMALL, "sessions": {"enabled": False}}
    with make_host(tmp_path, config) as host, host.session("conv") as session:
        session.compact([{"role": "user", "content": "hi"}], force=True)
        with pytest.raises(hc.SessionError, match="needs a session store"):
            session.undo_compaction()


def test_another_process_moved_the_store_on(tmp_path: Path) -> None:
    with make_host(tmp_path, SMALL) as host, make_host(tmp_path, SMALL) as other:
        driver = _driven(host)
        driver.compact()
        with other.session("conv", user_id="u") as theirs:
            theirs.prepare([*theirs.messages, {"role": "user", "content": "from elsewhere"}])
            with pytest.raises(hc.StaleSessionError, match="nothing was undone"):
                driver.session.undo_compaction()
        assert driver.session.messages[-1]["content"].startswith("from elsewhere")  # reloaded
        out = driver.session.undo_compaction()  # and then it may
        assert out[-1]["content"].startswith("from elsewhere")  # added after it: it follows


def test_in_place_false_goes_back_to_the_parent(tmp_path: Path) -> None:
    switched: list[tuple[str, dict[str, Any]]] = []
    with make_host(tmp_path, CHILDREN) as host:
        driver = _driven(host)
        driver.compact()
        child = driver.session.session_id
        assert child != "conv"
        driver.turn()
        driver.session._listener = lambda e: switched.append((e.kind, dict(e.data)))
        driver.undo(None)
        assert driver.session.session_id == "conv"
        assert ("session_switched", {"back_to": "conv"}) in switched
        store = host.session_store
        assert store is not None
        ended = store.get_session(child, user_id="u")
        assert ended is not None and ended.end_reason == "undone"
        parent = store.get_session("conv", user_id="u")
        assert parent is not None and parent.ended_at is None  # open again
        driver.turn()  # the parent takes writes again
        driver.restart()  # and a resume stays in it, never in the undone child
        assert driver.session.session_id == "conv"
        assert driver.session.messages[-1] == driver.log[-1]
        driver.compact()  # a new child, which resume then follows
        newer = driver.session.session_id
        driver.restart()
        assert driver.session.session_id == newer not in (child, "conv")


def test_the_async_twin(tmp_path: Path) -> None:
    with make_host(tmp_path, SMALL) as host:
        driver = _driven(host)
        before = driver.session.messages
        driver.compact()
        assert asyncio.run(driver.session.aundo_compaction()) == before


def test_an_old_state_without_history_loads(tmp_path: Path) -> None:
    with make_host(tmp_path, SMALL) as host:
        driver = _driven(host)
        store = host.session_store
        assert store is not None
        record = store.get_session("conv", user_id="u")
        assert record is not None
        old = {k: v for k, v in record.state.items() if k != "compactions"}
        store.save_state("conv", {**old, "compactions": [{"n": "bad"}, 3]})
        driver.restart()
        assert driver.session.state.history.records == []
        with pytest.raises(hc.SessionError, match="nothing to undo"):
            driver.session.undo_compaction()


class _StoreWithoutUndo:
    """A backend written before undo existed: every SessionStore method, no restore_view."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "restore_view":
            raise AttributeError(name)
        return getattr(self._inner, name)


def test_a_store_without_restore_view_still_loads_but_refuses_undo(tmp_path: Path) -> None:
    from hermes_core.sessions import SessionStore, UndoableSessionStore

    with make_host(tmp_path, SMALL) as host:
        driver = _driven(host)
        driver.compact()
        old = _StoreWithoutUndo(driver.session.store)
        assert isinstance(old, SessionStore) and not isinstance(old, UndoableSessionStore)
        driver.session.store = old  # type: ignore[assignment]
        before, rows = driver.session.messages, rows_of(driver.session)
        with pytest.raises(
            hc.SessionError, match="cannot undo a compaction: it has no restore_view"
        ):
            driver.session.undo_compaction()
        assert (driver.session.messages, rows_of(driver.session)) == (before, rows)
