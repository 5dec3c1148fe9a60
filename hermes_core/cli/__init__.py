"""The ``hermes-context`` command: a thin layer over the public API.

Exit codes: 0 success; 1 the input was rejected (bad transcript, validation failed, threat
found); 2 usage or configuration error; 3 ``compress`` wrote its result but it is still over
the threshold. Errors are one or two plain lines on stderr, each with one ``error:`` prefix
(a message that carries its own loses it), with a traceback only under ``-v``.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import traceback
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_core.cli.common import (
    CONFIG_ERRORS,
    EXIT_INPUT,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    check_read_home,
)
from hermes_core.cli.text import without_error_prefix
from hermes_core.errors import HermesError, InvalidMessages

if TYPE_CHECKING:
    from types import ModuleType

#: each command's name, the module that registers it and its one-line help, in listing
#: order. Only the module of the command that runs is imported (each pulls in what its
#: command needs: sessions, memory, evals...); the others are listed with this help alone,
#: which must stay the module's own (tests/cli/test_cli_lazy_dispatch.py compares them).
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("compress", "compress_cmd", "compress a transcript under its token budget"),
    ("tokens", "tokens_cmd", "count a transcript's tokens by role, tool and images"),
    ("validate", "validate_cmd", "check a transcript for tool-pair, role and content problems"),
    ("memory", "memory_cmd", "show, edit or review file memory"),
    ("sessions", "sessions_cmd", "list, show, search or export stored sessions"),
    ("skills", "skills_cmd", "list or show skills, review staged skill writes"),
    ("export", "export_cmd", "write one user's sessions, memory and skills to a bundle"),
    ("import", "import_cmd", "restore a bundle written by export into this home"),
    ("forget", "forget_cmd", "delete one user's sessions, memory and provider data"),
    ("eval", "eval_cmd", "measure what compaction keeps of a transcript (offline)"),
    ("plugins", "plugins_cmd", "list plugins with their hooks and status"),
    ("config", "config_cmd", "show or check the configuration"),
    ("hermes-agent", "hermes_agent_cmd", "use hermes-context inside hermes-agent"),
)


def command_module(module: str) -> ModuleType:
    return importlib.import_module(f"hermes_core.cli.{module}")


def build_parser(command: str | None = "*") -> argparse.ArgumentParser:
    """The parser with ``command`` fully registered (``"*"``: every command; ``None``:
    none), the other commands as bare entries that carry their help for ``--help``."""
    common = argparse.ArgumentParser(add_help=False)
    _add_global_options(common, suppress=True)
    parser = argparse.ArgumentParser(
        prog="hermes-context",
        description="Context compression and lasting memory for LLM-agent hosts.",
    )
    _add_global_options(parser, suppress=False)
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module, help_text in COMMANDS:
        if command in ("*", name):
            command_module(module).register(sub, common)
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


def _chosen_command(argv: Sequence[str] | None) -> str | None:
    """The command ``argv`` runs, found by argparse itself on a parser of bare entries (so
    ``--home compress`` is a home, not the command); ``--help``, ``--version`` and usage
    errors exit here exactly as the full parser would."""
    args, _ = build_parser(None).parse_known_args(argv)
    command: str | None = args.command
    return command


def _add_global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument(
        "--home",
        metavar="DIR",
        default=default,
        help="home directory (default: $HERMES_HOME, else ~/.hermes); read commands "
        "refuse one that does not exist or holds no home",
    )
    parser.add_argument("--config", metavar="FILE", default=default, help="config file")
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="debug logging and tracebacks",
    )


def _version() -> str:
    from hermes_core import __version__

    return f"hermes-context {__version__}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code instead of raising."""
    try:
        args = build_parser(_chosen_command(argv)).parse_args(argv)
    except SystemExit as exc:  # argparse: --help/--version exit 0, usage errors exit 2
        return int(exc.code or 0)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="hermes-context: %(levelname)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        check_read_home(args)
        code: int = args.handler(args)
        sys.stdout.flush()  # surface output errors here, not at interpreter exit
    except CommandError as exc:
        return _fail(args, exc, exc.exit_code)
    except InvalidMessages as exc:
        return _fail(args, exc, EXIT_INPUT)
    except CONFIG_ERRORS as exc:
        return _fail(args, exc, EXIT_USAGE)
    except HermesError as exc:
        return _fail(args, exc, EXIT_INPUT)
    except KeyboardInterrupt:
        print("hermes-context: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`| head`): not an error
        _discard_stdout()
        return EXIT_OK
    except OSError as exc:  # e.g. writing to a full disk or an unreadable device
        _discard_stdout()
        where = f" {exc.filename}" if exc.filename else ""
        print(f"hermes-context: error: I/O failed{where}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    return code


def _discard_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # stdout is not a real file (tests capture it): nothing will be flushed


def _fail(args: argparse.Namespace, exc: BaseException, code: int) -> int:
    """One plain line (a traceback too under ``-v``), secrets redacted from both."""
    from hermes_core.cli.escaped import visible
    from hermes_core.redact import redact

    if args.verbose:
        trace = redact("".join(traceback.format_exception(exc)))
        print(visible(trace), end="", file=sys.stderr)
    message = visible(without_error_prefix(redact(str(exc))))
    print(f"hermes-context: error: {message}", file=sys.stderr)
    return code
