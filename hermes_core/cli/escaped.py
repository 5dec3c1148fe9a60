"""Printing for commands that show text a file or a model wrote (memory entries, skills).

Why: such text can hold control characters and bidirectional overrides (refused on write, but
a file can be edited by hand); printed raw, an escape sequence could hide text from the person
reviewing or approving it. Everything here prints them as visible escapes (``\\x1b``).
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from typing import Any, TextIO

from hermes_core.cli.common import CommandError
from hermes_core.errors import HermesError
from hermes_core.memory.entries import escape_controls
from hermes_core.memory.matching import preview

__all__ = ["Handler", "err", "escaped_errors", "say", "short"]

Handler = Callable[[argparse.Namespace], int]


def say(text: object, file: TextIO | None = None, **kwargs: Any) -> None:
    """Print with every control character escaped (the only way these commands print)."""
    print(escape_controls(str(text)), file=file or sys.stdout, **kwargs)


def err(text: object, **kwargs: Any) -> None:
    say(text, sys.stderr, **kwargs)


def short(text: object, limit: int) -> str:
    """A one-line preview, escaped before it is cut (so the cut can never split a control
    sequence and leave half of it live)."""
    return preview(escape_controls(str(text)), limit)


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
