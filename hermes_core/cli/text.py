"""Wording shared by every command: counted nouns and error lines.

Why one place: "1 problems", "12345 tokens" and "error: error: ..." each crept in where a
command formatted its own text; these helpers make the right form the easy one.
"""

from __future__ import annotations

import re

__all__ = ["count", "plural", "without_error_prefix"]

_ERROR_PREFIX = re.compile(r"^(?:hermes-context:\s*)?error:\s*", re.IGNORECASE)


def plural(number: int, noun: str, many: str | None = None) -> str:
    """The noun for ``number`` of it: ``noun`` for one, else ``many`` (default noun + "s")."""
    return noun if number == 1 else (many if many is not None else noun + "s")


def count(number: int, noun: str, many: str | None = None) -> str:
    """``"1 problem"``, ``"12,345 tokens"``: the figure with thousands separators, then the
    noun in the number it agrees with."""
    return f"{number:,} {plural(number, noun, many)}"


def without_error_prefix(message: str) -> str:
    """``message`` without a leading ``error:`` on any of its lines: the command line adds its
    own ``hermes-context: error:``, and a message (or a plugin status such as ``error: ...``)
    that already starts with one would print it twice."""
    return "\n".join(_strip(line) for line in message.split("\n"))


def _strip(line: str) -> str:
    stripped = line
    while True:  # "error: error: x" loses every copy
        shorter = _ERROR_PREFIX.sub("", stripped, count=1)
        if shorter == stripped:
            return stripped
        stripped = shorter
