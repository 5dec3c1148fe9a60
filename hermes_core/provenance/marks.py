"""Distinctive tokens ("marks") of a text: addresses, accounts, numbers, handles, paths.

Why: an attacker's payload can be paraphrased, but the thing it wants stored (the IBAN to pay,
the help-desk URL, IP address or phone, the e-mail to write to) has to survive word for word
to be of use. A write that carries such a token which came from untrusted text, and not from
the user, is tainted however the sentence around it was reworded. Dates and short versions
are not marks. Every pattern is linear (no nested repetition); the caller bounds the text.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["marks_of", "normalise"]

_URL: Final = re.compile(r"[a-z][a-z0-9+.-]{1,15}://[^\s<>\"'`]+")
_EMAIL: Final = re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}")
_HOST: Final = re.compile(r"(?<![\w@.-])(?:[a-z0-9-]{1,63}\.){1,8}[a-z]{2,24}(?![\w-])")
_IBAN: Final = re.compile(
    r"(?<![a-z0-9])[a-z]{2}\d{2}(?:[a-z0-9]{11,30}|(?: [a-z0-9]{4}){2,7}(?: [a-z0-9]{1,3})?)"
    r"(?![a-z0-9])"
)
_NUMBER: Final = re.compile(r"(?<![\w])\+?\d(?:[ ().-]{0,2}\d){5,24}(?!\w)")
_HANDLE: Final = re.compile(r"(?<![\w.@])@[a-z0-9_]{2,30}(?![\w@])")
_PATH: Final = re.compile(r"(?<![\w/])~?(?:/[\w.-]{1,64}){2,16}/?")
#: endings that make ``name.ext`` a file name rather than a host
_FILE_ENDINGS: Final = frozenset(
    [
        "py",
        "md",
        "js",
        "ts",
        "tsx",
        "jsx",
        "json",
        "txt",
        "yaml",
        "yml",
        "toml",
        "cfg",
        "ini",
        "sh",
        "bash",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "rs",
        "go",
        "java",
        "rb",
        "html",
        "htm",
        "css",
        "lock",
        "log",
        "csv",
        "xml",
        "pyc",
        "so",
        "dll",
        "exe",
        "zip",
        "gz",
        "tar",
        "sql",
        "db",
        "php",
        "pl",
        "kt",
        "swift",
    ]
)
_TRAIL: Final = ".,;:!?)]}'\""
#: a date or a version: digits, but nothing an attacker needs copied word for word
_NOT_A_NUMBER: Final = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,4}(?:\.\d{1,4}){1,2}")
_IP: Final = re.compile(r"(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?![\d.])")


def normalise(text: str) -> str:
    """``text`` for comparison: NFKC, invisible format characters removed, case folded."""
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return text.casefold()


def marks_of(text: str) -> set[str]:
    """The marks of ``text`` (normalised first), each prefixed by its kind."""
    text = normalise(text)
    found: set[str] = set()
    for match in _URL.finditer(text):
        url = match.group().rstrip(_TRAIL)
        found.add("url:" + url)
        host = url.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1].split(":", 1)[0]
        if "." in host:
            found.add("host:" + host.removeprefix("www."))
    found.update("email:" + m.group().rstrip(_TRAIL) for m in _EMAIL.finditer(text))
    for match in _HOST.finditer(text):
        host = match.group()
        if host.rsplit(".", 1)[1] not in _FILE_ENDINGS:
            found.add("host:" + host.removeprefix("www."))
    for match in _IBAN.finditer(text):
        compact = match.group().replace(" ", "")
        if any(c.isdigit() for c in compact[4:]) and 15 <= len(compact) <= 34:
            found.add("iban:" + compact)
    for match in _NUMBER.finditer(text):
        if _NOT_A_NUMBER.fullmatch(match.group()):
            continue
        digits = "".join(c for c in match.group() if c.isdigit())
        if len(digits) >= 6:
            found.add("number:" + digits)
    found.update("ip:" + m.group() for m in _IP.finditer(text))
    found.update("handle:" + m.group() for m in _HANDLE.finditer(text))
    found.update("path:" + m.group().rstrip("/") for m in _PATH.finditer(text))
    return found
