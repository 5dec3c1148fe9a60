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


def _any_gate() -> re.Pattern[str]:
    """One alternation of every gate's literals and patterns, for short text: there, one
    regex search beats a Python-level test per rule (for long text the plain ``in`` tests
    win, see above)."""
    parts = [re.escape(literal) for rule in _RULES for literal in rule[3].literals]
    parts += [pattern.pattern for rule in _RULES for pattern in rule[3].patterns]
    return re.compile("|".join(dict.fromkeys(parts)))


_ANY_GATE: Final = _any_gate()
#: Up to this many characters, :data:`_ANY_GATE` screens the text first.
_SHORT_TEXT: Final = 400
_FOLDED_GATES: Final = tuple(
    rule for rule in _RULES if rule[3].folded is not None or rule[3].non_ascii is not None
)


def _open_rules(folded: str) -> list[_Rule]:
    """The rules whose gates ``folded`` opens, in order; [] for most text."""
    lowered = folded.lower()
    if len(folded) <= _SHORT_TEXT and _ANY_GATE.search(lowered) is None:
        # no literal or pattern gate opens: only the folded and non-ASCII gates may
        return [rule for rule in _FOLDED_GATES if rule[3].opens(lowered, folded)]
    return [rule for rule in _RULES if rule[3].opens(lowered, folded)]


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


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED:<id>]``.

    For a ``secret_assignment`` (and the other ``name value`` shapes: .netrc, command-line
    passwords, Azure keys) only the value goes (``DB_PASSWORD=[REDACTED:...]``). Redacting
    twice gives the same text.
    """
    folded = _ascii_folded(text)
    for pattern_id, compiled, check, _gate in _open_rules(folded):
        text, folded = _substitute(compiled(), f"[REDACTED:{pattern_id}]", check, text, folded)
    return text
