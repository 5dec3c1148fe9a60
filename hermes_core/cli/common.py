"""Helpers shared by the command modules: exit codes, config loading, table output."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence

from hermes_core.config.loader import LoadedConfig, load_config
from hermes_core.host.hermes import Hermes

EXIT_OK = 0
EXIT_INPUT = 1
EXIT_USAGE = 2


class CommandError(Exception):
    """A user-facing failure with its exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_INPUT) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def load(args: argparse.Namespace) -> LoadedConfig:
    return load_config(args.config, home=args.home)


def open_host(args: argparse.Namespace) -> Hermes:
    """A host for commands that report plugin status themselves (so load warnings would repeat)."""
    if not getattr(args, "verbose", False):
        logging.getLogger("hermes_context.plugins").setLevel(logging.ERROR)
    return Hermes(load(args))


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Left-aligned text columns; numbers right-aligned with thousands separators."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    numeric = [
        all(isinstance(row[i], (int, float)) for row in rows) and bool(rows)
        for i in range(len(headers))
    ]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    return "\n".join([line(list(headers)), *(line(r) for r in cells)])


def _cell(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}"
    return str(value)
