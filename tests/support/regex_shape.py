"""Whether a parsed regular expression repeats without bound anywhere: the shape the redaction
and threat tests forbid, since a failed attempt of a bounded pattern costs at most its window
whatever the input (no clock needed to check it)."""

from __future__ import annotations

from re import _constants as sre_constants  # type: ignore[attr-defined]
from typing import Any

_REPEATS = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT)


def unbounded_repetition(items: list[Any]) -> bool:
    """True when a ``*``, ``+`` or ``{n,}`` appears at any depth of ``sre_parse`` output."""
    for op, arg in items:
        if op in _REPEATS:
            _, most, body = arg
            if most == sre_constants.MAXREPEAT or unbounded_repetition(body):
                return True
        elif op == sre_constants.SUBPATTERN:
            if unbounded_repetition(arg[-1]):
                return True
        elif op == sre_constants.BRANCH:
            if any(unbounded_repetition(branch) for branch in arg[1]):
                return True
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            if unbounded_repetition(arg[1]):
                return True
        elif op == sre_constants.ATOMIC_GROUP and unbounded_repetition(arg):
            return True
    return False
