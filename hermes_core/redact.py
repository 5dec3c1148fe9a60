"""Recognise and redact secrets (API keys, tokens, private keys, passwords) in text.

One list of key shapes (:mod:`hermes_core.secret_shapes`) serves every place a secret must
not pass: config values, text sent to a summariser or a provider, logs.

Full-width forms (``ＡＫＩＡ…``, ``密码：…``) are found too: the patterns run on a copy with
full-width ASCII (U+FF01-FF5E) and the ideographic space mapped to ASCII, one character for
one, so a match's position in the copy is its position in the text.

Each pattern has a gate (literals or a small regex it cannot match without), so text holding
no secret costs a few substring scans and only the patterns whose gates open run at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Final

__all__ = ["SECRET_PATTERNS", "looks_like_secret", "redact"]

from hermes_core.secret_shapes import _SHAPES, _Gate, pattern_at
from hermes_core.secret_vendors import _AWS_CANDIDATE, _AWS_SECRET, AWS_SECRET_ID, _random_looking

if TYPE_CHECKING:  # at run time, from hermes_core.secret_shapes by __getattr__
    from hermes_core.secret_shapes import SECRET_PATTERNS

# Full-width ASCII and the ideographic space, mapped one character for one to ASCII; also the
# four letters that case-blind matching takes for ASCII ones (dotted and dotless i, long s,
# Kelvin sign), so the lower-cased text the gates read cannot miss them.
_FOLDABLE: Final = re.compile("[\uff01-\uff5e\u3000\u0130\u0131\u017f\u212a]")
_TO_ASCII: Final = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {
    0x3000: ord(" "),
    0x0130: ord("I"),
    0x0131: ord("i"),
    0x017F: ord("s"),
    0x212A: ord("K"),
}


def _ascii_folded(text: str) -> str:
    """``text`` with full-width forms as ASCII, same length (the same object when none)."""
    return text.translate(_TO_ASCII) if _FOLDABLE.search(text) else text


#: (id, its compiled pattern, check of a match or None, gate), in SECRET_PATTERNS order; the
#: bare AWS secret last, so an assignment's value (``aws_secret_access_key = ...``) keeps its
#: own id. A pattern is compiled when its gate first opens: most never are in a process.
_Rule = tuple[str, Callable[[], re.Pattern[str]], Callable[[str], bool] | None, _Gate]
_RULES: Final[tuple[_Rule, ...]] = (
    *(
        (pattern_id, partial(pattern_at, i), None, gate)
        for i, (pattern_id, _text, gate) in enumerate(_SHAPES)
    ),
    (AWS_SECRET_ID, lambda: _AWS_SECRET, _random_looking, _Gate(folded=_AWS_CANDIDATE)),
)


def __getattr__(name: str) -> object:
    """``SECRET_PATTERNS`` (see :mod:`hermes_core.secret_shapes`), compiled on first access."""
    if name == "SECRET_PATTERNS":
        from hermes_core import secret_shapes

        return secret_shapes.SECRET_PATTERNS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _gate_index() -> tuple[dict[str, int], tuple[tuple[re.Pattern[str], int], ...]]:
    """Each distinct gate literal and gate pattern with the bit mask of the rules it opens,
    so each is looked for once per text however many rules share it."""
    literals: dict[str, int] = {}
    patterns: dict[tuple[str, int], tuple[re.Pattern[str], int]] = {}
    for i, rule in enumerate(_RULES):
        for literal in rule[3].literals:
            literals[literal] = literals.get(literal, 0) | 1 << i
        for pattern in rule[3].patterns:
            key = (pattern.pattern, pattern.flags)
            found, bits = patterns.get(key, (pattern, 0))
            patterns[key] = (found, bits | 1 << i)
    return literals, tuple(patterns.values())


_LITERAL_BITS, _PATTERN_BITS = _gate_index()
#: The rules with a folded or non-ASCII gate, tested one by one (two of them).
_OTHER_GATES: Final = tuple(
    (i, rule[3])
    for i, rule in enumerate(_RULES)
    if rule[3].folded is not None or rule[3].non_ascii is not None
)


def _open_rules(folded: str) -> list[_Rule]:
    """The rules whose gates ``folded`` opens, in order; [] for most text.

    The same rules as testing each rule's gate in turn (:meth:`_Gate.opens`), found with one
    ``in`` test per distinct literal and one search per distinct gate pattern, skipped once
    every rule it could open is open: about 5x fewer Python steps a text."""
    lowered = folded.lower()
    mask = 0
    for literal, bits in _LITERAL_BITS.items():
        if literal in lowered:
            mask |= bits
    for pattern, bits in _PATTERN_BITS:
        if bits & ~mask and pattern.search(lowered) is not None:
            mask |= bits
    for i, gate in _OTHER_GATES:
        if not mask >> i & 1 and gate.opens(lowered, folded):
            mask |= 1 << i
    rules: list[_Rule] = []
    while mask:
        low = mask & -mask
        rules.append(_RULES[low.bit_length() - 1])
        mask ^= low
    return rules


def _may_hold_secret(text: str) -> bool:
    """Whether any pattern may match ``text`` (no pattern can match when this is False)."""
    return bool(_open_rules(_ascii_folded(text)))


def _target(match: re.Match[str]) -> tuple[int, int]:
    """The span to replace: the ``secret_*`` group that took part, else the whole match."""
    groups = match.re.groupindex
    for name in ("secret_q", "secret_b"):
        if name in groups:
            start, end = match.span(name)
            if start >= 0:
                return start, end
    return match.span()


def _substitute(
    pattern: re.Pattern[str],
    label: str,
    check: Callable[[str], bool] | None,
    text: str,
    folded: str,
) -> tuple[str, str]:
    """Replace the matches found in ``folded`` in both ``text`` and ``folded`` (same length)."""
    same = folded is text
    pieces: list[str] = []
    folded_pieces: list[str] = []
    position = 0
    for match in pattern.finditer(folded):
        if check is not None and not check(match.group()):
            continue
        start, end = _target(match)
        pieces += (text[position:start], label)
        if not same:
            folded_pieces += (folded[position:start], label)
        position = end
    if not pieces:
        return text, folded
    pieces.append(text[position:])
    text = "".join(pieces)
    if same:
        return text, text
    folded_pieces.append(folded[position:])
    return text, "".join(folded_pieces)


def looks_like_secret(text: str) -> str | None:
    """The id of the first key shape found in ``text``, or ``None``."""
    folded = _ascii_folded(text)
    for pattern_id, compiled, check, _gate in _open_rules(folded):
        pattern = compiled()
        if check is None:
            if pattern.search(folded):
                return pattern_id
        elif any(check(match.group()) for match in pattern.finditer(folded)):
            return pattern_id
    return None


#: Short texts already found to hold no secret: a fallback summary redacts the same short texts
#: (names, arguments, first lines) again and again, about 60% repeats. Text that held a secret is
#: not kept (no secret outlives its call here). Bounded; cleared when full.
_CLEAN: set[str] = set()
_CLEAN_MAX_CHARS: Final = 1_000
_CLEAN_MAX_ENTRIES: Final = 4_096


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED:<id>]``.

    For a ``secret_assignment`` (and the other ``name value`` shapes: .netrc, command-line
    passwords, Azure keys) only the value goes (``DB_PASSWORD=[REDACTED:...]``). Redacting
    twice gives the same text.
    """
    short = len(text) <= _CLEAN_MAX_CHARS
    if short and text in _CLEAN:
        return text
    original = text
    folded = _ascii_folded(text)
    for pattern_id, compiled, check, _gate in _open_rules(folded):
        text, folded = _substitute(compiled(), f"[REDACTED:{pattern_id}]", check, text, folded)
    if short and text is original:
        if len(_CLEAN) >= _CLEAN_MAX_ENTRIES:
            _CLEAN.clear()
        _CLEAN.add(text)
    return text
