"""Printing for commands that show text a file, a model or a tool wrote (memory entries,
skills, stored sessions).

Why: such text can hold control characters and bidirectional overrides (refused on memory
writes, but a file can be edited by hand, and a session stores whatever a tool printed);
printed raw, an escape sequence could clear the screen, hide text from the person reviewing
it, or write their clipboard (OSC 52). Everything here prints them as visible escapes
(``\\x1b``, ``\\u202e``); JSON keeps the exact data, with every such character as a
``\\u`` escape.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from collections.abc import Callable
from typing import Any, Final, TextIO

from hermes_core.cli.common import CommandError
from hermes_core.errors import HermesError
from hermes_core.memory.entries import escape_controls
from hermes_core.memory.matching import preview

__all__ = [
    "Handler",
    "err",
    "escaped_errors",
    "json_text",
    "one_line",
    "say",
    "short",
    "visible",
]

Handler = Callable[[argparse.Namespace], int]

#: Printed escaped beyond what memory refuses on write: the bidi marks (they reorder text
#: too) and the Unicode line and paragraph separators.
_MORE: Final = re.compile("[\u061c\u200e\u200f\u2028\u2029]")
#: What ``json.dumps(..., ensure_ascii=False)`` leaves raw that a terminal may act on: DEL,
#: the C1 controls (``\\x9b`` is a one-byte CSI) and the bidi overrides, isolates and marks.
_JSON_RAW: Final = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069]")


def _code(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def visible(text: object) -> str:
    """``text`` safe for a terminal: every control character but newline and tab (ESC, so
    CSI and OSC sequences too; C1; DEL), every bidi override and mark, as a visible escape."""
    return _MORE.sub(_code, escape_controls(str(text)))


def one_line(text: object, limit: int = 0) -> str:
    """:func:`visible` on one line (runs of whitespace, newlines and tabs, become a space),
    cut to ``limit`` characters when ``limit`` is set; escaped before it is flattened or cut,
    so neither can leave half of a sequence live."""
    flat = " ".join(visible(text).split())
    return preview(flat, limit) if limit else flat


def json_text(value: object, *, indent: int | None = 2) -> str:
    """``value`` as JSON (non-ASCII kept readable) with no character a terminal acts on:
    JSON escapes C0 itself; DEL, C1 and bidi characters become ``\\u`` escapes here. Those
    can only occur inside strings, so the document decodes to exactly the same data."""
    return _JSON_RAW.sub(_code, json.dumps(value, indent=indent, ensure_ascii=False))


def say(text: object, file: TextIO | None = None, **kwargs: Any) -> None:
    """Print with every control character escaped (the only way these commands print)."""
    print(visible(text), file=file or sys.stdout, **kwargs)


def err(text: object, **kwargs: Any) -> None:
    say(text, sys.stderr, **kwargs)


def short(text: object, limit: int) -> str:
    """A one-line preview, escaped before it is cut (so the cut can never split a control
    sequence and leave half of it live)."""
    return preview(visible(text), limit)


def escaped_errors(handler: Handler) -> Handler:
    """Errors raised by a handler reach the terminal escaped too."""

    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except CommandError as exc:
            raise CommandError(escape_controls(str(exc)), exc.exit_code) from None
        except HermesError as exc:
            raise CommandError(escape_controls(str(exc))) from None

    return run
