"""``hermes-context validate FILE``: will a provider accept this transcript?

Message indexes are 0-based (the first message is message 0), as in the Python list the
file holds; the text output and the JSON say so, since an editor counts lines from 1.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from hermes_core.cli.common import EXIT_INPUT, EXIT_OK
from hermes_core.cli.escaped import json_text, say
from hermes_core.cli.formats_option import (
    FILE_HELP,
    add_format_option,
    foreign_parts,
    openai_messages,
    read_formatted,
)
from hermes_core.cli.text import count

#: a problem line names its message (``message 3: ...``) or Responses item (``input[3]: ...``)
_INDEXED = re.compile(r"^(?:message (\d+)|input\[(\d+)\]): (.*)$", re.DOTALL)


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = sub.add_parser(
        "validate",
        parents=[common],
        help="check a transcript for tool-pair, role and content problems",
        description="Exit 1 and list one problem a line (with the message index, 0-based: "
        "the first message is message 0) when the transcript would be rejected by a "
        "provider speaking its format (--format; told from the content when unambiguous).",
    )
    parser.add_argument("file", metavar="FILE", help=FILE_HELP)
    add_format_option(parser)
    parser.add_argument(
        "--json",
        action="store_true",
        help='print {"file", "messages", "valid", "indexes": "0-based", "problems": '
        '[{"index", "problem"}]} to stdout',
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from hermes_core.formats import payload_problems
    from hermes_core.transcript.messages import validate_messages

    transcript = read_formatted(args.file, args.format)
    if transcript.format == "openai":
        messages = openai_messages(args.file, transcript.payload)
        problems = validate_messages(messages)
        if not transcript.detected:  # said to be OpenAI: parts of another format are wrong
            problems += foreign_parts(messages)
    else:  # the format's own checks, with indexes into its messages or items
        messages = _items(transcript.payload)
        problems = payload_problems(transcript.payload, transcript.format)
    noun = "item" if transcript.format == "responses" else "message"
    if args.json:
        document = _document(args.file, len(messages), problems)
        say(json_text({**document, "format": transcript.format}))
        return EXIT_INPUT if problems else EXIT_OK
    for problem in problems:
        say(problem)
    if problems:
        say(
            f"hermes-context: {args.file}: {count(len(problems), 'problem')} in "
            f"{count(len(messages), noun)} ({_as(transcript.format)}{noun} indexes are 0-based)",
            file=sys.stderr,
        )
        return EXIT_INPUT
    say(
        f"{args.file}: {count(len(messages), noun)}{_read_as(transcript.format)}, no problems",
        file=sys.stderr,
    )
    return EXIT_OK


def _items(payload: Any) -> list[Any]:
    """The messages (Anthropic) or input items (Responses) of a payload, to count them."""
    if isinstance(payload, dict):
        value = payload.get("input", payload.get("messages"))
        if isinstance(value, str):
            return [value]  # a Responses input may be one string
        return value if isinstance(value, list) else []
    return payload if isinstance(payload, list) else []


def _as(fmt: str) -> str:
    return "" if fmt == "openai" else f"{fmt} "


def _read_as(fmt: str) -> str:
    return "" if fmt == "openai" else f" (read as {fmt})"


def _document(file: str, messages: int, problems: list[str]) -> dict[str, Any]:
    return {
        "file": file,
        "messages": messages,
        "valid": not problems,
        "indexes": "0-based",
        "problems": [_problem(line) for line in problems],
    }


def _problem(line: str) -> dict[str, Any]:
    """``{"index": 3, "problem": "..."}`` from the validator's ``message 3: ...`` line (every
    line names its message; ``index`` is None should one ever not)."""
    match = _INDEXED.match(line)
    if match is None:
        return {"index": None, "problem": line}
    return {"index": int(match.group(1) or match.group(2)), "problem": match.group(3)}
