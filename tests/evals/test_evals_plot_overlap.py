"""Issue 27 item 8: series at the same value are not hidden: their markers sit side by side
in the picture's own pixels, and a kind equal to an earlier one all along is named in the
legend."""

from __future__ import annotations

import struct
import zlib

from hermes_core.evals.plot import (
    COLORS,
    MARKER,
    PNG_SIGNATURE,
    check_png,
    marker_positions,
    retention_png,
)

SERIES: dict[str, list[float | None]] = {
    "paths": [1.0, 1.0, 0.5],
    "commands": [1.0, 1.0, 0.5],  # the same as paths all along
    "errors": [0.0, 1.0, 0.0],  # meets the others at compaction 2
}


def _rgb(data: bytes) -> tuple[int, list[bytes]]:
    width, height = check_png(data)
    at, idat = len(PNG_SIGNATURE), b""
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        if data[at + 4 : at + 8] == b"IDAT":
            idat += data[at + 8 : at + 8 + length]
        at += 12 + length
    raw = zlib.decompress(idat)
    stride = 1 + 3 * width
    return width, [raw[y * stride + 1 : (y + 1) * stride] for y in range(height)]


def test_coincident_markers_are_spread_apart() -> None:
    markers = marker_positions(SERIES, lambda i: 100 + 100 * i, lambda v: 400 - round(300 * v))
    for i in range(3):
        at_i = [markers[k][i] for k in ("paths", "commands")]
        (xa, ya), (xb, yb) = at_i
        assert ya == yb and abs(xa - xb) > 2 * MARKER  # side by side, not overlapping
    second = sorted(pts[1] for pts in markers.values())  # all three at 100% on compaction 2
    assert len({x for x, _ in second}) == 3


def test_every_kind_shows_its_own_colour_at_each_marker() -> None:
    data = retention_png(SERIES)
    width, rows = _rgb(data)
    # the chart's own geometry: what retention_png passes to marker_positions
    left, right, top, bottom = 80, width - 250, 50, 480 - 70
    markers = marker_positions(
        SERIES,
        lambda i: left + (right - left) * i // 2,
        lambda v: bottom - round((bottom - top) * v),
    )
    for k, kind in enumerate(SERIES):
        colour = bytes(COLORS[k])
        for x, y in markers[kind]:
            assert rows[y][3 * x : 3 * x + 3] == colour, (kind, x, y)
