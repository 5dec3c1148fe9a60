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

__all__ = ["marks_of", "normalise", "unescape_json"]

_URL: Final = re.compile(r"[a-z][a-z0-9+.-]{1,15}://[^\s<>\"'`]+")
_EMAIL: Final = re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}")
#: a bare host: not part of a longer dotted name, not a call (``logging.getLogger(``)
_HOST: Final = re.compile(r"(?<![\w@.-])(?:[a-z0-9-]{1,63}\.){1,8}[a-z]{2,24}(?![\w(-]|\.\w)")
_IBAN: Final = re.compile(
    r"(?<![a-z0-9])[a-z]{2}\d{2}(?:[a-z0-9]{11,30}|(?: [a-z0-9]{4}){2,7}(?: [a-z0-9]{1,3})?)"
    r"(?![a-z0-9])"
)
_NUMBER: Final = re.compile(r"(?<![\w])\+?\d(?:[ ()./-]{0,2}\d){5,24}(?!\w)")
_HANDLE: Final = re.compile(r"(?<![\w.@])@[a-z0-9_]{2,30}(?![\w@])")
_PATH: Final = re.compile(r"(?<![\w/])~?(?:/[\w.-]{1,64}){2,16}/?")
#: endings that make ``name.ext`` a file name rather than a host
_FILE_ENDINGS: Final = frozenset(
    re.split(
        " ",
        "py md js ts tsx jsx json txt yaml yml toml cfg ini sh bash c h cc cpp hpp rs go java rb "
        "html htm css lock log csv xml pyc so dll exe zip gz tar sql db php pl kt swift",
    )
)
#: last labels that make a bare dotted name read from untrusted text a host (and every
#: two-letter one, a country); names in code (``memory.backend``, ``threading.rlock``) end in
#: none of them. Hosts in URLs and e-mail addresses need no such test.
_TLDS: Final = frozenset(
    re.split(
        " ",
        "com net org info biz edu gov mil int arpa io ai xyz online pay bank money finance "
        "example invalid onion",
    )
)
_TRAIL: Final = ".,;:!?)]}'\""
#: a date or a version: digits, but nothing an attacker needs copied word for word
_NOT_A_NUMBER: Final = re.compile(
    r"\d{4}[-/.]\d{2}[-/.]\d{2}|\d{1,2}[./]\d{1,2}[./]\d{2,4}|\d{1,4}(?:\.\d{1,4}){1,2}"
)
_IP: Final = re.compile(r"(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?![\d.])")
#: the shortest tail of a long number that still names it (a phone without its country code)
_NUMBER_TAIL: Final = 7
#: defanged addresses (``evil[.]example``, ``billing[at]evil.example``, ``hxxps://``)
_DEFANGED: Final = re.compile(r"\s?[\[(](?:\.|dot)[\])]\s?|\s?[\[(]at[\])]\s?|\bhxxp")
_UNDEFANG: Final = {"hxxp": "http"}
#: invisible characters Unicode says to ignore that are not format (Cf) characters:
#: combining grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian and other
#: variation selectors
_IGNORABLE: Final = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]"
)
#: Cyrillic and Greek letters that look like Latin ones, compared as the Latin letter
_LOOKALIKES: Final = str.maketrans(
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u0501\u051b\u051d"
    "\u04bb\u04cf\u03bf\u03b1\u03bd\u03c1\u03b9\u03ba",
    "aeopcyxijsdqwhloavpik",
)
_ESCAPE: Final = re.compile(r"\\(?:u[0-9a-fA-F]{4}(?:\\u[0-9a-fA-F]{4})?|[\\\"/bfnrt])")
_SIMPLE: Final = {
    "\\": "\\",
    '"': '"',
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}


def normalise(text: str) -> str:
    """``text`` for comparison: NFKC, invisible characters removed, case folded, look-alike
    letters read as the Latin letter they imitate."""
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return _IGNORABLE.sub("", text).casefold().translate(_LOOKALIKES)


def unescape_json(text: str) -> str:
    """``text`` with JSON string escapes decoded (``\\n``, ``\\u00fc``, surrogate pairs),
    whatever the rest of it is: a JSON document, or a piece of one."""

    def one(match: re.Match[str]) -> str:
        escape = match.group()
        if escape[1] != "u":
            return _SIMPLE[escape[1]]
        try:
            return (
                escape.encode("ascii")
                .decode("unicode_escape")
                .encode("utf-16", "surrogatepass")
                .decode("utf-16")
            )
        except UnicodeError:
            return escape.encode("ascii").decode("unicode_escape", "replace")

    return _ESCAPE.sub(one, text)


def _is_decorator(text: str, start: int, end: int) -> bool:
    """``@name`` first on its line and then the line's end, a call or a dotted name: a
    decorator in code (``@dataclass``, ``@pytest.fixture(...)``)."""
    line_start = text.rfind("\n", 0, start) + 1
    follows = text[end : end + 1]
    return not text[line_start:start].strip() and follows in ("", "\n", "\r", "(", ".")


def _domains(host: str, expand: bool) -> list[str]:
    """``host`` and, for an index (``expand``), each parent domain down to two labels."""
    host = host.removeprefix("www.")
    labels = host.split(".")
    if not expand:
        return [host]
    return [".".join(labels[i:]) for i in range(len(labels) - 1)]


def _number(digits: str, expand: bool) -> list[str]:
    digits = digits.lstrip("0")
    if not expand:
        return [digits]
    return [digits[i:] for i in range(max(len(digits) - _NUMBER_TAIL + 1, 1))]


def marks_of(text: str, *, expand: bool = False) -> set[str]:
    """The marks of ``text`` (normalised first), each prefixed by its kind. ``expand``: also
    the shapes a mark takes when copied (parent domains, a number without its country
    code), for the index a write's marks are looked up in."""
    text = normalise(text)
    text = _DEFANGED.sub(
        lambda m: _UNDEFANG.get(m.group(), "@" if "at" in m.group() else "."), text
    )
    found: set[str] = set()
    for match in _URL.finditer(text):
        url = match.group().rstrip(_TRAIL)
        found.add("url:" + url)
        host = url.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1].split(":", 1)[0]
        if "." in host:
            found.update("host:" + d for d in _domains(host, expand))
    for match in _EMAIL.finditer(text):
        email = match.group().rstrip(_TRAIL)
        found.add("email:" + email)
        if expand:
            found.update("host:" + d for d in _domains(email.rsplit("@", 1)[1], expand))
    for match in _HOST.finditer(text):
        host = match.group()
        last = host.rsplit(".", 1)[1]
        if last not in _FILE_ENDINGS and (not expand or len(last) == 2 or last in _TLDS):
            found.update("host:" + d for d in _domains(host, expand))
    for match in _IBAN.finditer(text):
        compact = match.group().replace(" ", "")
        if any(c.isdigit() for c in compact[4:]) and 15 <= len(compact) <= 34:
            found.add("iban:" + compact)
    for match in _NUMBER.finditer(text):
        if _NOT_A_NUMBER.fullmatch(match.group()):
            continue
        digits = "".join(c for c in match.group() if c.isdigit())
        if len(digits) >= 6:
            found.update("number:" + d for d in _number(digits, expand))
    found.update("ip:" + m.group() for m in _IP.finditer(text))
    for match in _HANDLE.finditer(text):
        if not _is_decorator(text, match.start(), match.end()):
            found.add("handle:" + match.group())
    # a full stop after a path ends the sentence, as after a host ("see /srv/app/logs.")
    found.update("path:" + m.group().rstrip(".").rstrip("/") for m in _PATH.finditer(text))
    return found
