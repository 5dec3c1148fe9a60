"""The compaction history in the session state: compact, bounded, read defensively."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core.host.undo_history import (
    MAX_RECORDS,
    UNDO_DEPTH,
    CompactionRecord,
    History,
    Undone,
    expand,
    from_runs,
    to_runs,
)


@given(st.lists(st.integers(1, 10_000), max_size=300))
def test_runs_keep_seqs_in_their_order(seqs: list[int]) -> None:
    runs = to_runs(seqs)
    assert list(expand(runs)) == seqs
    assert from_runs(json.loads(json.dumps([list(r) for r in runs]))) == runs


def test_a_long_view_is_a_few_runs() -> None:
    view = [1, 2, *range(300, 2300), 7, 8, 9]
    assert to_runs(view) == ((1, 2), (300, 2299), (7, 9))


@pytest.mark.parametrize(
    "bad", [None, "1-3", [[1]], [[3, 1]], [[0, 2]], [[1, True]], [[1, 2.0]], [[1, 10**7]]]
)
def test_bad_runs_are_refused(bad: object) -> None:
    with pytest.raises(ValueError):
        from_runs(bad)


def record(n: int, **extra: object) -> CompactionRecord:
    fields: dict[str, object] = {
        "n": n,
        "session": "s",
        "into": "s",
        "at": 1.0,
        "before": ((1, 5),),
        "inserted": ((6, 6),),
        "compressor": {"v": 1},
        **extra,
    }
    return CompactionRecord(**fields)  # type: ignore[arg-type]


def test_a_record_round_trips_through_json() -> None:
    undone = Undone(2.0, 3, "s", ((9, 12),), "s.child", ((1, 4),), 3, 1)
    for item in (record(3, undone=undone), record(4, summarizer="llm", tokens_before=9)):
        assert CompactionRecord.from_json(json.loads(json.dumps(item.to_json()))) == item


def test_history_is_bounded_and_only_the_newest_keep_their_state() -> None:
    history = History()
    for _ in range(MAX_RECORDS + 5):
        history.add(record(history.next_number()))
    assert len(history.records) == MAX_RECORDS
    assert history.records[0].n == 6 and history.next_number() == MAX_RECORDS + 6
    kept = [r.n for r in history.records if r.compressor is not None and r.before]
    assert kept == [r.n for r in history.records[-UNDO_DEPTH:]]
    assert all(r.before == r.inserted == () for r in history.records[:-UNDO_DEPTH])


def test_undo_marks_the_ones_it_takes_along_but_not_those_undone_before() -> None:
    history = History([record(1), record(2), record(3, undone=Undone(1.0, 3))])
    history.mark_undone(1, [1, 2], Undone(5.0, 1, "s", ((7, 7),), "s", ((1, 2),), 3, 2))
    assert [r.undone.by if r.undone else None for r in history.records] == [1, 1, 3]
    assert history.undos() == 2 and history.newest_undoable() is None


def test_a_damaged_history_loads_what_it_can() -> None:
    good = record(2).to_json()
    rows = [{"n": 1, "sid": 3}, good, record(1).to_json(), "junk", {**good, "n": 5, "at": "x"}]
    assert History.from_json(rows).records == [record(2)]  # out of order and bad ones left out
    assert History.from_json(None).records == [] and History.from_json({"n": 1}).records == []
