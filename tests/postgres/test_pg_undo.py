"""The undo property of tests/host/test_session_undo.py on a real PostgreSQL store: after any
sequence of turns, compactions, undos and restarts, an undo brings back the exact transcript
(and rows) from before the compaction, in place and with child sessions."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from undo_driver import Driver, Recall, make_host, run

import hermes_core as hc
from hermes_core.testing import registered

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.integers(1, 3)),
        st.tuples(st.just("compact"), st.just(0)),
        st.tuples(st.just("undo"), st.integers(0, 3)),
        st.tuples(st.just("restart"), st.just(0)),
    ),
    min_size=1,
    max_size=7,
)
NAMES = itertools.count()


@pytest.mark.parametrize("in_place", [True, False], ids=["in_place", "children"])
@settings(
    max_examples=5,  # the SQLite twin in tests/host/test_session_undo.py runs ten per mode
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=OPS)
def test_any_sequence_of_compactions_is_undone_exactly_on_postgres(
    pg_dsn: str, tmp_path_factory: pytest.TempPathFactory, in_place: bool, ops: list[Any]
) -> None:
    config = {
        "model": {"context_length": 16_000},
        "compression": {"in_place": in_place},
        "sessions": {"backend": "postgres", "dsn": pg_dsn},
    }
    home = tmp_path_factory.mktemp("home")
    with make_host(home, config) as host, registered(host, Recall(), "recall"):
        driver = Driver(host, f"conv-{next(NAMES)}")  # one database for every example
        run(driver, [("turn", 8), ("compact", 0), *ops, ("undo", 0)])
        driver.session.close()


def test_an_undo_after_an_undo_on_postgres(pg_dsn: str, tmp_path: Any) -> None:
    config = {
        "model": {"context_length": 16_000},
        "compression": {"in_place": False},
        "sessions": {"backend": "postgres", "dsn": pg_dsn},
    }
    with make_host(tmp_path, config) as host, registered(host, Recall(), "recall"):
        driver = Driver(host, "conv")
        ops = [("turn", 8), ("compact", 0), ("turn", 2), ("compact", 0), ("turn", 1)]
        run(driver, [*ops, ("undo", 2), ("turn", 2), ("compact", 0), ("turn", 1), ("undo", 1)])
        assert driver.undos == 2


def test_two_hosts_one_undoes_the_other_goes_back_on_postgres(pg_dsn: str, tmp_path: Any) -> None:
    """Host A holds the child; host B undoes the compaction: A's next write is stale in the
    store, A follows the conversation back to the parent and its turn lands there; A's own
    out-of-date undo is then refused (docs/undo.md)."""
    config = {
        "model": {"context_length": 16_000},
        "compression": {"in_place": False},
        "sessions": {"backend": "postgres", "dsn": pg_dsn},
    }
    with make_host(tmp_path, config) as host, make_host(tmp_path, config) as other:
        a = Driver(host, "conv")
        run(a, [("turn", 8), ("compact", 0)])
        child = a.session.session_id
        stale = a.session.state.history  # what A knew before B's undo
        with other.session("conv", user_id="u") as b:
            b.undo_compaction()
        store = host.session_store
        assert store is not None
        rows = store.last_seq(child)
        a.turn()
        assert store.last_seq(child) == rows  # nothing went into the abandoned child
        assert a.session.session_id == "conv"
        assert store.messages("conv")[-1].message == a.log[-1]
        a.session.state.history = stale
        with pytest.raises(hc.StaleSessionError):
            a.session.undo_compaction()
        assert store.messages("conv")[-1].message == a.log[-1]
