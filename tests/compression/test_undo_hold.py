"""An undo's "no immediate redo" (``Compressor.hold_after_undo``): automatic compaction waits
as after "nothing to compress", but never past the window's edge, where a request would be
refused as too long (docs/undo.md); it survives a restart like the rest of the state."""

from __future__ import annotations

import json

from hermes_core.compression.engine import Compressor

WINDOW = 32_000  # threshold 24,000, edge 30,400


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make() -> Compressor:
    clock = Clock()
    return Compressor(None, context_length=WINDOW, clock=clock, wall_clock=clock)


def test_the_hold_ends_at_the_window_edge() -> None:
    compressor = make()
    edge = compressor.window_edge()
    assert edge == int(WINDOW * 0.95)
    compressor.hold_after_undo(25_000)  # the restored transcript, over the threshold
    assert compressor.should_compress(25_000)[0] is False
    assert compressor.should_compress(edge - 1)[0] is False  # held: under a quarter more
    assert compressor.should_compress(edge) == (True, None)
    assert compressor.should_compress(25_000)[0] is True  # the hold is over, not re-armed


def test_nothing_to_compress_keeps_its_backoff_at_the_edge() -> None:
    """Only the undo's hold ends there: a real "nothing to compress" would find nothing
    again, until the transcript grows by a quarter."""
    compressor = make()
    compressor.hold_after_undo(25_000)
    compressor.nothing_to_compress(25_000)
    assert compressor.should_compress(compressor.window_edge())[0] is False


def test_the_hold_survives_a_restart() -> None:
    compressor = make()
    compressor.hold_after_undo(25_000)
    state = json.loads(json.dumps(compressor.export_state()))
    again = make()
    again.restore_state(state)
    assert again.should_compress(26_000)[0] is False
    assert again.should_compress(again.window_edge())[0] is True
