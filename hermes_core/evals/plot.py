"""A PNG line chart of retention per compaction, written with zlib and struct only.

Why: a picture shows at a glance which kinds fade over repeated compactions, and a plotting
library would be a heavy dependency for one chart. The chart: retention (0-100%) up, the
compaction (1..N) across, one line per kind with a marker per compaction, a legend with each
kind's first and last figure. Lines that coincide stay visible: earlier kinds are drawn
thicker, so a shared stretch shows as nested bands; markers of kinds at the same value sit
side by side, and a kind equal to an earlier one all along says so in the legend.
:func:`check_png` reads a PNG back (signature, chunk CRCs, header, pixel data size) so a
broken file is caught.
"""

from __future__ import annotations

import itertools
import struct
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from hermes_core.evals.font import GLYPH_HEIGHT, GLYPH_WIDTH, glyph

__all__ = ["PNG_SIGNATURE", "Canvas", "check_png", "marker_positions", "retention_png"]

PNG_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"
Color = tuple[int, int, int]
WHITE: Final = (255, 255, 255)
BLACK: Final = (30, 30, 30)
GRID: Final = (225, 225, 225)
#: One colour per kind (colour-blind friendly, Okabe-Ito), in kind order.
COLORS: Final = (
    (0, 114, 178), (230, 159, 0), (0, 158, 115), (204, 121, 167), (213, 94, 0), (86, 180, 233),
)  # fmt: skip
WIDTH: Final = 800
HEIGHT: Final = 480
SCALE: Final = 2  # font pixels per glyph cell


class Canvas:
    """An RGB raster with the few primitives a line chart needs."""

    def __init__(self, width: int, height: int, background: Color = WHITE) -> None:
        self.width, self.height = width, height
        self.pixels = bytearray(bytes(background) * (width * height))

    def dot(self, x: int, y: int, color: Color) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            at = 3 * (y * self.width + x)
            self.pixels[at : at + 3] = bytes(color)

    def rect(self, x0: int, y0: int, x1: int, y1: int, color: Color) -> None:
        """Filled, corners inclusive."""
        xa, xb = max(0, min(x0, x1)), min(self.width - 1, max(x0, x1))
        if xa > xb:
            return
        run = bytes(color) * (xb - xa + 1)
        for y in range(max(0, min(y0, y1)), min(self.height, max(y0, y1) + 1)):
            at = 3 * (y * self.width + xa)
            self.pixels[at : at + len(run)] = run

    def line(
        self, start: tuple[int, int], end: tuple[int, int], color: Color, thickness: int = 1
    ) -> None:
        """Bresenham, each point a square of ``thickness``."""
        (x0, y0), (x1, y1) = start, end
        half = thickness // 2
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err = dx + dy
        while True:
            self.rect(
                x0 - half, y0 - half, x0 - half + thickness - 1, y0 - half + thickness - 1, color
            )
            if x0 == x1 and y0 == y1:
                return
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def text(self, x: int, y: int, text: str, color: Color = BLACK, scale: int = SCALE) -> int:
        """Draw ``text`` with its top left at (x, y); returns the x after it."""
        for char in text:
            rows = glyph(char)
            for r, row in enumerate(rows or ()):
                for c, cell in enumerate(row):
                    if cell == "#":
                        self.rect(
                            x + c * scale, y + r * scale, x + (c + 1) * scale - 1,
                            y + (r + 1) * scale - 1, color,
                        )  # fmt: skip
            x += (GLYPH_WIDTH + 1) * scale
        return x

    def png(self) -> bytes:
        """The raster as a PNG: 8-bit RGB, no filter, one zlib stream."""
        stride = 3 * self.width
        raw = b"".join(
            b"\x00" + bytes(self.pixels[y * stride : (y + 1) * stride]) for y in range(self.height)
        )
        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (
            PNG_SIGNATURE
            + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(raw, 9))
            + _chunk(b"IEND", b"")
        )


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def text_width(text: str, scale: int = SCALE) -> int:
    return len(text) * (GLYPH_WIDTH + 1) * scale


#: half a marker's width; markers of kinds at one point sit 2 * MARKER + 2 pixels apart
MARKER: Final = 4


def marker_positions(
    series: Mapping[str, Sequence[float | None]],
    x_of: Callable[[int], int],
    y_of: Callable[[float], int],
) -> dict[str, list[tuple[int, int]]]:
    """Each kind's marker centres. Kinds that land on one pixel at a compaction are spread
    side by side around it, in kind order, so no series hides another that has the same
    value (an earlier kind's marker would otherwise be painted over)."""
    at: dict[tuple[int, int], list[str]] = {}
    for kind, values in series.items():
        for i, v in enumerate(values):
            if v is not None:
                at.setdefault((x_of(i), y_of(v)), []).append(kind)
    found: dict[str, list[tuple[int, int]]] = {kind: [] for kind in series}
    step = 2 * MARKER + 2
    for (x, y), sharing in at.items():
        for rank, kind in enumerate(sharing):
            found[kind].append((x + round((rank - (len(sharing) - 1) / 2) * step), y))
    for points in found.values():
        points.sort()
    return found


def retention_png(series: Mapping[str, Sequence[float | None]], *, title: str = "") -> bytes:
    """The chart of ``series`` (kind -> retention after compaction 1..N, ``None`` for a kind
    without facts: left out of the lines, "no facts" in the legend)."""
    canvas = Canvas(WIDTH, HEIGHT)
    left, right, top, bottom = 80, WIDTH - 250, 50, HEIGHT - 70
    rounds = max((len(v) for v in series.values()), default=1)
    canvas.text(left, 16, title or "retention per compaction")
    for pct in range(0, 101, 20):  # y grid, ticks and labels
        y = bottom - (bottom - top) * pct // 100
        canvas.line((left, y), (right, y), GRID)
        label = f"{pct}%"
        canvas.text(left - 12 - text_width(label), y - GLYPH_HEIGHT * SCALE // 2, label)

    def x_of(i: int) -> int:
        return (
            left + (right - left) * i // max(1, rounds - 1) if rounds > 1 else (left + right) // 2
        )

    for i in range(rounds):  # x ticks and labels
        x = x_of(i)
        canvas.line((x, bottom), (x, bottom + 6), BLACK, 2)
        label = str(i + 1)
        canvas.text(x - text_width(label) // 2, bottom + 12, label)
    canvas.line((left, top - 10), (left, bottom), BLACK, 2)  # axes
    canvas.line((left, bottom), (right + 10, bottom), BLACK, 2)
    axis = "compaction"
    canvas.text((left + right - text_width(axis)) // 2, bottom + 38, axis)
    kinds = list(series)
    markers = marker_positions(series, x_of, lambda v: bottom - round((bottom - top) * v))
    for k, kind in enumerate(kinds):
        color = COLORS[k % len(COLORS)]
        thickness = 3 + 2 * (len(kinds) - 1 - k)
        points = [
            (x_of(i), bottom - round((bottom - top) * v))
            for i, v in enumerate(series[kind])
            if v is not None
        ]
        for (x0, y0), (x1, y1) in itertools.pairwise(points):
            canvas.line((x0, y0), (x1, y1), color, thickness)
    for k, kind in enumerate(kinds):  # markers last, side by side where values coincide
        color = COLORS[k % len(COLORS)]
        for x, y in markers[kind]:
            canvas.rect(x - MARKER, y - MARKER, x + MARKER, y + MARKER, color)
        values = [v for v in series[kind] if v is not None]
        figure = f"{values[0]:.0%} -> {values[-1]:.0%}" if values else "no facts"
        same = [
            other for other in kinds[:k] if values and list(series[other]) == list(series[kind])
        ]
        if same:
            figure += f" (= {same[0]})"
        ly = top + k * 30
        canvas.rect(right + 30, ly + 2, right + 50, ly + 12, color)
        canvas.text(right + 58, ly, kind)
        canvas.text(right + 58, ly + 16, figure, scale=1)
    return canvas.png()


def check_png(data: bytes) -> tuple[int, int]:
    """``(width, height)`` of an 8-bit RGB PNG this module could have written; raises
    ``ValueError`` saying what is wrong otherwise (bad signature, a chunk's CRC, a missing
    header or end, pixel data that does not decode to the header's size)."""
    if not data.startswith(PNG_SIGNATURE):
        raise ValueError("not a PNG: the signature is missing")
    at, chunks = len(PNG_SIGNATURE), []
    while at < len(data):
        if at + 12 > len(data):
            raise ValueError(f"truncated chunk at byte {at}")
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        if len(body) != length or at + 12 + length > len(data):
            raise ValueError(f"truncated {kind!r} chunk at byte {at}")
        (crc,) = struct.unpack(">I", data[at + 8 + length : at + 12 + length])
        if crc != zlib.crc32(kind + body) & 0xFFFFFFFF:
            raise ValueError(f"bad CRC in the {kind.decode('latin-1')} chunk at byte {at}")
        chunks.append((kind, body))
        at += 12 + length
    if not chunks or chunks[0][0] != b"IHDR" or len(chunks[0][1]) != 13:
        raise ValueError("the first chunk is not a 13-byte IHDR")
    if chunks[-1][0] != b"IEND":
        raise ValueError("the PNG does not end with IEND")
    width, height, depth, color, *_ = struct.unpack(">IIBBBBB", chunks[0][1])
    if (depth, color) != (8, 2) or not width or not height:
        raise ValueError(f"unexpected header: {width}x{height}, depth {depth}, colour {color}")
    try:
        raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    except zlib.error as exc:
        raise ValueError(f"the pixel data does not decode: {exc}") from None
    if len(raw) != height * (1 + 3 * width):
        raise ValueError(
            f"the pixel data holds {len(raw):,} bytes, not {height * (1 + 3 * width):,}"
        )
    return width, height
