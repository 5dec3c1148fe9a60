"""Stored messages cut into the pages ``session_recall`` answers with (pure).

Why pages of characters: a recalled original is often the very thing that was too big to
keep (a 200 KB file dump), so one answer must stay bounded however large the row. Each
message becomes segments (its content, each text part, each call's arguments); the pages
are consecutive windows of :data:`PAGE_CHARS` characters over those segments, so a reader
who concatenates a segment's slices across pages gets its text back exactly. Redaction and
the threat screen run on a whole segment before it is cut, so a secret or an injection
split by a page boundary is still caught.

An item's metadata is stored text too (a message's ``name``, a call's id and function name,
a result's ``tool_call_id``): it is redacted, cut to :data:`META_CHARS` and read by the
screens with the segment's text; a role the transcript format does not know is "other".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from hermes_core.redact import redact
from hermes_core.transcript.parts import part_type
from hermes_core.transcript.validation import KNOWN_ROLES
from hermes_core.types import Finding, scan_windows

__all__ = [
    "META_CHARS",
    "PAGE_CHARS",
    "Segment",
    "page_count",
    "page_items",
    "redact_text",
    "screened",
    "screened_all",
    "segments",
]

#: characters of recalled text per page (about 2,000 tokens)
PAGE_CHARS: Final = 8_000
#: characters of one stored metadata value shown at most (ids and names are short)
META_CHARS: Final = 256
_IMAGE_TYPES: Final = frozenset({"image_url", "input_image", "image"})
#: metadata keys whose values we write ourselves; every other value is stored text
_OURS: Final = ("ref", "role", "field")

Scanner = Callable[[str], Sequence[Finding]]


@dataclass(frozen=True)
class Segment:
    """One field of one message: where it came from and its text."""

    meta: dict[str, Any]  # ref, role, field, and the call's or result's ids
    text: str


def _image_text(part: dict[str, Any]) -> str:
    """An image part as text: its address, or what a data URL holds (never its bytes)."""
    image = part.get("image_url")
    found = image.get("url") if isinstance(image, dict) else image
    if not isinstance(found, str):
        found = part.get("url")
    url = found if isinstance(found, str) else ""
    if url.startswith("data:"):
        kind = url[5:].split(";", 1)[0].split(",", 1)[0] or "data"
        return f"[image: {kind}, {len(url):,} characters of inline data, not shown as text]"
    return f"[image: {url}]" if url else "[image]"


def _text_of(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def segments(message: Mapping[str, Any], ref: str) -> list[Segment]:
    """``message`` as segments: ``content`` (or ``content[i]`` per part of a list) and
    ``tool_calls[k].arguments``; a message with none of these gives one empty ``content``."""
    role = message.get("role")
    base: dict[str, Any] = {"ref": ref, "role": role if role in KNOWN_ROLES else "other"}
    for key in ("tool_call_id", "name"):
        if isinstance(message.get(key), str):
            base[key] = message[key]
    out: list[Segment] = []
    content = message.get("content")
    if isinstance(content, list):
        for i, part in enumerate(content):
            if isinstance(part, dict) and part_type(part) in _IMAGE_TYPES:
                text = _image_text(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                text = part["text"]
            else:
                text = _text_of(part)
            out.append(Segment({**base, "field": f"content[{i}]"}, text))
    elif content is not None:
        out.append(Segment({**base, "field": "content"}, _text_of(content)))
    calls = message.get("tool_calls")
    for k, call in enumerate(calls if isinstance(calls, list) else []):
        function = call.get("function") if isinstance(call, dict) else None
        function = function if isinstance(function, dict) else {}
        meta = {**base, "field": f"tool_calls[{k}].arguments"}
        if isinstance(call, dict) and isinstance(call.get("id"), str):
            meta["call_id"] = call["id"]
        if isinstance(function.get("name"), str):
            meta["call_name"] = function["name"]
        out.append(Segment(meta, _text_of(function.get("arguments", ""))))
    return out or [Segment({**base, "field": "content"}, "")]


def _encodable(value: str) -> str:
    """A string any host can encode: lone surrogates (from JSON escapes) become "?"."""
    return value if value.isascii() else value.encode("utf-8", "replace").decode("utf-8")


def redact_text(segment: Segment) -> str:
    """The segment's text redacted, as every answer (and the search) sees it."""
    return redact(_encodable(segment.text))


def _meta_text(value: str) -> str:
    """A stored metadata value redacted (before it is cut: a cut key may pass) and cut."""
    text = redact(_encodable(value))
    return text if len(text) <= META_CHARS else text[: META_CHARS - 1] + "…"


def screened(segment: Segment, scan: Scanner) -> tuple[Segment, bool]:
    """The segment (metadata and text) redacted, or withheld when the threat scanner flags
    what the model would read of it; and whether it was."""
    meta = {
        key: value if key in _OURS or not isinstance(value, str) else _meta_text(value)
        for key, value in segment.meta.items()
    }
    clean = Segment(meta, redact_text(segment))
    reading = _read(clean)
    findings = _flags(scan, reading) if reading else []
    if findings:
        return _withheld(clean, findings), True
    return clean, False


def _read(segment: Segment) -> str:
    """What the model reads of a segment: its stored metadata values, then its text."""
    stored = [v for k, v in segment.meta.items() if k not in _OURS and isinstance(v, str)]
    return "\n".join([*stored, segment.text]) if stored else segment.text


def _reading(segments: Sequence[Segment]) -> str:
    """Segments as the model reads them in a row (the answer's items follow one another)."""
    return "\n".join(_read(segment) for segment in segments)


def _flags(scan: Scanner, text: str) -> list[Finding]:
    return [hit for piece in scan_windows(text) for hit in scan(piece)]


def _withheld(segment: Segment, findings: Sequence[Finding]) -> Segment:
    """The notice in the segment's place; of its metadata only what we wrote is kept."""
    ids = ", ".join(sorted({f.pattern_id for f in findings}))
    meta = {key: value for key, value in segment.meta.items() if key in _OURS}
    return Segment(meta, f"[withheld: it matched the threat scanner ({ids})]")


def screened_all(found: Sequence[Segment], scan: Scanner) -> tuple[list[Segment], int]:
    """Every segment screened as the model reads the answer: each alone, then each with its
    neighbour, then all that is left in a row; and how many were withheld.

    Why joined: an override split over two messages passes a one-by-one screen but comes
    back whole in one answer (issue 26, item 8). A joined match withholds every segment it
    spans; a match only in the whole answer withholds the whole answer."""
    out: list[Segment] = []
    shown: list[bool] = []
    for segment in found:
        clean, blocked = screened(segment, scan)
        out.append(clean)
        shown.append(not blocked)
    for i in range(len(out) - 1):
        if shown[i] and shown[i + 1] and (hits := _flags(scan, _reading(out[i : i + 2]))):
            out[i], out[i + 1] = _withheld(out[i], hits), _withheld(out[i + 1], hits)
            shown[i] = shown[i + 1] = False
    visible = [s for s, ok in zip(out, shown, strict=True) if ok]
    if len(visible) > 1 and (hits := _flags(scan, _reading(visible))):
        out = [_withheld(s, hits) if ok else s for s, ok in zip(out, shown, strict=True)]
        shown = [False] * len(out)
    return out, sum(not ok for ok in shown)


def page_count(segments: Sequence[Segment], size: int = PAGE_CHARS) -> int:
    total = sum(len(s.text) for s in segments)
    return max(1, -(-total // size))


def page_items(
    segments: Sequence[Segment], page: int, size: int = PAGE_CHARS
) -> list[dict[str, Any]]:
    """The items of 1-based ``page``: each segment's slice that falls in the page's window of
    characters. A cut segment carries ``offset`` (where the slice starts) and ``total``."""
    last = page_count(segments, size) - 1
    low, high = (page - 1) * size, page * size
    items: list[dict[str, Any]] = []
    pos = 0
    for segment in segments:
        length = len(segment.text)
        start, end = max(pos, low), min(pos + length, high)
        empty_here = length == 0 and min(pos // size, last) == page - 1
        if start < end or empty_here:
            item = {**segment.meta, "text": segment.text[start - pos : end - pos]}
            if length and (start > pos or end < pos + length):
                item["offset"], item["total"] = start - pos, length
            items.append(item)
        pos += length
    return items
