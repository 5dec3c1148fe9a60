"""Encoded payloads: base64 and rot13 runs decoded so the patterns can read them.

An instruction no human reads can still be decoded by the model ("decode this and
follow it", or just a blob it is likely to decode). So plausible encoded runs are decoded
and the decoded text is scanned like the rest; a hit is reported under its own id and
as ``encoded_payload``.

- **base64** (standard or URL-safe, padded or not, wrapped over lines, nested up to
  :data:`MAX_DEPTH` times): a run of at least :data:`MIN_RUN` base64 characters that
  decodes to UTF-8 text that *reads as text*: printable, with letters and spaces in the
  proportions of writing. An image, a hash, a JWT signature or random key material
  decodes to bytes that fail this test and are left alone.
- **rot13**: the whole text, once, when it says "rot13" or when at least two different
  common English words appear in their rot13 spelling ("gur", "naq", "lbh", ...); of a
  text over :data:`MAX_DECODED` characters, only the lines with such words.

The work is bounded: at most :data:`MAX_RUNS` runs, each at most :data:`MAX_RUN` characters,
and at most :data:`MAX_DECODED` decoded characters in all, whatever the input.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
from typing import Final

from hermes_core.threats.obfuscation import tricked_lines

MIN_RUN = 20
MAX_RUN = 8_192
MAX_RUNS = 32
MAX_DECODED = 16_384
MAX_DEPTH = 2

_RUN: Final = re.compile(r"(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_=\r\n-]{20,16384}")
#: Padding followed by more base64 (``key=<base64>``, or two runs glued together).
_INNER_PAD: Final = re.compile(r"={1,4}(?=[A-Za-z0-9+/_-])")
_BASE64_ONLY: Final = re.compile(r"[A-Za-z0-9+/_=\s-]{20,16384}")
#: Common English words in their rot13 spelling ("the", "and", "you", "instructions", ...).
_ROT13_WORDS: Final = re.compile(
    r"\b(?:gur|naq|lbh|lbhe|guvf|jvgu|nyy|abg|ner|sbe|gung|sebz|jvyy|unir|jung|jura|rirel"
    r"|cyrnfr|vafgehpgvbaf|vtaber|cerivbhf|hfre|fraq|frperg|cebzcg|flfgrz|nqzva|nyjnlf|arire)\b"
)


_ROT13_LINE: Final = re.compile(_ROT13_WORDS.pattern, re.IGNORECASE)


def _reads_as_text(text: str) -> bool:
    """Whether decoded bytes are writing rather than binary noise."""
    if len(text) < 8:
        return False
    printable = sum(1 for char in text if char.isprintable() or char in "\n\r\t")
    letters = sum(1 for char in text if char.isalpha())
    spaced = " " in text or not text.isascii()
    return printable >= 0.97 * len(text) and letters >= 0.3 * len(text) and spaced


def _decode_run(run: str) -> str | None:
    """``run`` decoded from base64 (either alphabet), or ``None`` if it is not base64."""
    body = run.rstrip("=")
    if len(body) < MIN_RUN or len(body) % 4 == 1:
        return None
    if body.isalpha() and (body.islower() or body.isupper()):
        return None  # a long word or an identifier, not base64
    padded = body + "=" * (-len(body) % 4)
    altchars = b"-_" if ("-" in body or "_" in body) else None
    try:
        return base64.b64decode(padded, altchars=altchars, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def _candidates(run: str) -> list[str]:
    """The pieces of a run worth decoding: the lines joined (wrapped base64), and failing
    that each line; each split where padding is followed by more characters."""
    lines = [line.strip() for line in run.splitlines() if line.strip()]
    joined = "".join(lines)
    pieces = [joined] if len(lines) > 1 else []
    pieces += lines
    return [part for piece in pieces for part in _INNER_PAD.split(piece) if len(part) >= MIN_RUN]


def base64_payloads(text: str) -> list[str]:
    """The readable texts hidden in ``text``'s base64 runs (nested ones decoded too)."""
    found: list[str] = []
    budget, runs = MAX_DECODED, 0
    pending = [(text, 0)]
    while pending and budget > 0 and runs < MAX_RUNS:
        source, depth = pending.pop()
        for match in _RUN.finditer(source):
            for piece in _candidates(match.group()[:MAX_RUN]):
                runs += 1
                decoded = _decode_run(piece)
                if decoded is None:
                    pass
                elif depth + 1 < MAX_DEPTH and _BASE64_ONLY.fullmatch(decoded):
                    pending.append((decoded, depth + 1))
                    budget -= len(decoded)
                elif _reads_as_text(decoded):
                    decoded = decoded[:budget]
                    budget -= len(decoded)
                    found.append(decoded)
                    if depth + 1 < MAX_DEPTH:
                        pending.append((decoded, depth + 1))
                if runs >= MAX_RUNS or budget <= 0:
                    return found
    return found


def rot13_payload(text: str) -> str | None:
    """``text`` decoded from rot13, if it says so or reads like rot13-encoded English (a long
    text: the lines with rot13 words, at most :data:`MAX_DECODED` characters)."""
    lower = text.lower()
    hinted = "rot13" in lower or "rot-13" in lower or "rot 13" in lower
    if not hinted:
        seen: set[str] = set()
        for match in _ROT13_WORDS.finditer(lower):
            seen.add(match.group())
            if len(seen) >= 2:
                break
        else:
            return None
    if len(text) > MAX_DECODED:
        text = tricked_lines(text, (_ROT13_LINE,), MAX_DECODED)
    return codecs.decode(text, "rot13")
