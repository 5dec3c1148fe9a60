"""The PNG chart: a valid file of the stated size, lines where the figures say, and a broken
file caught by the checker."""

from __future__ import annotations

import struct
import zlib

import pytest

from hermes_core.evals.plot import COLORS, HEIGHT, PNG_SIGNATURE, WIDTH, check_png, retention_png

SERIES: dict[str, list[float | None]] = {
    "paths": [1.0, 1.0, 0.5],
    "errors": [0.0, 0.0, 0.0],
    "rules": [None, None, None],
}


def pixels(data: bytes) -> tuple[int, int, bytes]:
    width, height = check_png(data)
    at, idat = len(PNG_SIGNATURE), b""
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        if data[at + 4 : at + 8] == b"IDAT":
            idat += data[at + 8 : at + 8 + length]
        at += 12 + length
    return width, height, zlib.decompress(idat)


def test_signature_header_and_pixel_data() -> None:
    data = retention_png(SERIES)
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (WIDTH, HEIGHT)
    width, height, raw = pixels(data)
    assert (width, height) == (WIDTH, HEIGHT) and len(raw) == HEIGHT * (1 + 3 * WIDTH)
    assert data == retention_png(SERIES)  # deterministic


def test_each_kind_with_facts_is_drawn_in_its_colour() -> None:
    _, _, raw = pixels(retention_png(SERIES))
    stride = 1 + 3 * WIDTH
    present = {
        bytes(raw[y * stride + 1 + 3 * x : y * stride + 4 + 3 * x])
        for y in range(HEIGHT)
        for x in range(WIDTH)
    }
    assert bytes(COLORS[0]) in present and bytes(COLORS[1]) in present
    assert bytes(COLORS[2]) in present  # the legend swatch, even without facts


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: b"\x00" + d[1:], "signature"),
        (lambda d: d[:40] + bytes([d[40] ^ 0xFF]) + d[41:], "CRC"),
        (lambda d: d[:-20], "truncated"),
        (lambda d: d[:-12], "IEND"),
    ],
)
def test_a_broken_png_is_detected(damage: object, message: str) -> None:
    data = retention_png(SERIES)
    with pytest.raises(ValueError, match=message):
        check_png(damage(data))  # type: ignore[operator]


def test_pixel_data_of_the_wrong_size_is_detected() -> None:
    from hermes_core.evals.plot import Canvas, _chunk

    good = Canvas(4, 3).png()
    header = struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0)  # says 4 rows, holds 3
    at = len(PNG_SIGNATURE) + 25
    bad = PNG_SIGNATURE + _chunk(b"IHDR", header) + good[at:]
    assert check_png(good) == (4, 3)
    with pytest.raises(ValueError, match="pixel data holds"):
        check_png(bad)
