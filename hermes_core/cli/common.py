"""Helpers shared by the command modules: exit codes, bounded numeric options, config
loading, table output."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import logging
import os
from collections.abc import Callable, Sequence

from hermes_core.config.loader import LoadedConfig, load_config
from hermes_core.config.settings import ModelSettings, Settings
from hermes_core.errors import ConfigError, HermesError, PluginLoadError, TokenizerError
from hermes_core.host.hermes import Hermes

EXIT_OK = 0
EXIT_INPUT = 1
EXIT_USAGE = 2
#: ``compress`` wrote its best result, but it is still at or over the threshold
EXIT_OVER_LIMIT = 3


class CommandError(Exception):
    """A user-facing failure with its exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_INPUT) -> None:
        super().__init__(message)
        self.exit_code = exit_code


#: errors that mean the configuration (or the installation) is wrong, not the input: exit 2
CONFIG_ERRORS: tuple[type[HermesError], ...] = (ConfigError, PluginLoadError, TokenizerError)

Handler = Callable[[argparse.Namespace], int]


def config_errors_exit_2(handler: Handler) -> Handler:
    """A handler whose configuration errors keep exit 2 even when a wrapper around it turns
    every other :class:`HermesError` into a :class:`CommandError` with exit 1 (the memory
    and skills commands escape their errors that way)."""

    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except CONFIG_ERRORS as exc:
            raise CommandError(str(exc), EXIT_USAGE) from exc

    return run


def _context_length_maximum() -> int:
    """``model.context_length``'s maximum in the config when it has one, else 100,000,000
    (no model has a window near it; a larger figure is a typo)."""
    meta = {f.name: f.metadata for f in dataclasses.fields(ModelSettings)}["context_length"]
    maximum = meta.get("maximum")
    return int(maximum) if maximum is not None else 100_000_000


#: the largest window (and output reservation) a command accepts, in tokens
MAX_TOKENS_OPTION = _context_length_maximum()


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type``: a whole number from ``low`` to ``high``, else a usage error
    (exit 2) that says the range. Every numeric option of the commands uses one."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {_cut(text)!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"{_cut(text)} is out of range: give a whole number from {low:,} to {high:,}"
            )
        return value

    parse.__name__ = "whole number"  # argparse names the type in its own messages
    return parse


def _cut(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def same_file(first: str, second: str) -> bool:
    """Whether two names reach one file: the same path once links are resolved (a target that
    does not exist yet too), or one file under two names (a hard link, ``/dev/stdout``)."""
    if os.path.realpath(first) == os.path.realpath(second):
        return True
    try:
        return os.path.samefile(first, second)
    except (OSError, ValueError):  # one of them does not exist (yet): not the same file
        return False


def load(args: argparse.Namespace) -> LoadedConfig:
    return load_config(args.config, home=args.home)


def open_host(args: argparse.Namespace) -> Hermes:
    """A host for commands that report plugin status themselves (so load warnings would repeat)."""
    quiet_plugin_warnings(args)
    return Hermes(load(args))


def quiet_plugin_warnings(args: argparse.Namespace) -> None:
    """Commands that report plugin status themselves keep the load warnings out of stderr."""
    if not getattr(args, "verbose", False):
        logging.getLogger("hermes_context.plugins").setLevel(logging.ERROR)


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


def add_user_choice(parser: argparse.ArgumentParser, verb: str) -> None:
    """``--user ID`` or ``--anonymous``, one of them required: a command that acts on one
    person's data names that person explicitly (no id is the anonymous principal of a
    single-user home, never a default)."""
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--user", metavar="ID", help=f"the user whose data to {verb}")
    who.add_argument(
        "--anonymous",
        action="store_true",
        help=f"{verb} the anonymous principal (a single-user home's user, no id)",
    )


def add_summarizer_option(parser: argparse.ArgumentParser) -> None:
    """``--summarizer auto|llm|fallback``, as ``compress`` and ``eval`` take it."""
    parser.add_argument(
        "--summarizer",
        choices=("auto", "llm", "fallback"),
        default="auto",
        help="auto: the configured LLM if any, else the deterministic fallback",
    )


def check_summarizer_choice(settings: Settings, summarizer: str) -> None:
    """``--summarizer llm`` with no summariser LLM configured is a usage error (exit 2)."""
    from hermes_core.compression.hooks import llm_summarize_fn

    if summarizer == "llm" and llm_summarize_fn(settings) is None:
        raise CommandError(
            "--summarizer llm needs a summariser LLM: set auxiliary.compression.base_url "
            "(and model) in the config",
            EXIT_USAGE,
        )


#: commands that only read: they never create or change anything under the home
READ_COMMANDS = {
    ("memory", "show"),
    ("memory", "pending"),
    ("memory", "audit"),
    ("skills", "list"),
    ("skills", "show"),
    ("skills", "audit"),
    ("sessions", "list"),
    ("sessions", "search"),
    ("sessions", "show"),
    ("sessions", "export"),
    ("config", "show"),
    ("config", "check"),
    ("plugins", None),
}
#: commands that must find an existing home: the read commands, and ``forget``, which on a
#: mistyped --home would otherwise report a person gone while the real home keeps them
HOME_REQUIRED = READ_COMMANDS | {("forget", None)}
# ``tokens`` and ``validate`` read a file, not the home: they take any --home and create nothing
#: what a home holds once anything has used it (any one is enough)
HOME_MARKERS = ("config.yaml", "state.db", "memories", "skills", "pending", "audit")


def check_read_home(args: argparse.Namespace) -> None:
    """A read command (or ``forget``) given ``--home`` that does not exist, or holds no home,
    is a usage error (exit 2) before anything runs: a typo must not create a new home, nor
    read an empty one as if it were the user's."""
    home = getattr(args, "home", None)
    key = (getattr(args, "command", None), getattr(args, "action", None))
    if home is None or key not in HOME_REQUIRED:
        return
    path = os.path.expanduser(home)
    if not os.path.isdir(path):
        problem = "does not exist" if not os.path.exists(path) else "is not a directory"
        raise CommandError(
            f"--home {home} {problem}: check the path (nothing was created)", EXIT_USAGE
        )
    if not any(os.path.exists(os.path.join(path, name)) for name in HOME_MARKERS):
        raise CommandError(
            f"--home {home} holds no hermes-context home (none of {', '.join(HOME_MARKERS)}): "
            "check the path (nothing was created)",
            EXIT_USAGE,
        )
