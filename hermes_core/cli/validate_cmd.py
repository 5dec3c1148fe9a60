"""``hermes-context validate FILE``: will a provider accept this transcript?

Message indexes are 0-based (the first message is message 0), as in the Python list the
file holds; the text output and the JSON say so, since an editor counts lines from 1.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from hermes_core.cli.common import EXIT_INPUT, EXIT_OK
from hermes_core.cli.text import count

_INDEXED = re.compile(r"^message (\d+): (.*)$", re.DOTALL)


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = sub.add_parser(
        "validate",
        parents=[common],
        help="check a transcript for tool-pair, role and content problems",
        description="Exit 1 and list one problem a line (with the message index, 0-based: "
        "the first message is message 0) when the transcript would be rejected by a "
        "chat-completions provider.",
    )
    parser.add_argument(
        "file", metavar="FILE", help='JSON list, {"messages": [...]}, JSON Lines, or -'
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help='print {"file", "messages", "valid", "indexes": "0-based", "problems": '
        '[{"index", "problem"}]} to stdout',
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from hermes_core.transcript.files import read_transcript
    from hermes_core.transcript.messages import validate_messages

    messages = read_transcript(args.file)
    problems = validate_messages(messages)
    if args.json:
        print(json.dumps(_document(args.file, len(messages), problems), indent=2))
        return EXIT_INPUT if problems else EXIT_OK
    for problem in problems:
        print(problem)
    if problems:
        print(
            f"hermes-context: {args.file}: {count(len(problems), 'problem')} in "
            f"{count(len(messages), 'message')} (message indexes are 0-based)",
            file=sys.stderr,
        )
        return EXIT_INPUT
    print(f"{args.file}: {count(len(messages), 'message')}, no problems", file=sys.stderr)
    return EXIT_OK


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
    return {"index": int(match.group(1)), "problem": match.group(2)}
