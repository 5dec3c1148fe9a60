"""``hermes-context validate FILE``: will a provider accept this transcript?"""

from __future__ import annotations

import argparse
import sys

from hermes_core.cli.common import EXIT_INPUT, EXIT_OK


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = sub.add_parser(
        "validate",
        parents=[common],
        help="check a transcript for tool-pair, role and content problems",
        description="Exit 1 and list one problem a line (with the message index) when the "
        "transcript would be rejected by a chat-completions provider.",
    )
    parser.add_argument(
        "file", metavar="FILE", help='JSON list, {"messages": [...]}, JSON Lines, or -'
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from hermes_core.transcript.files import read_transcript
    from hermes_core.transcript.messages import validate_messages

    messages = read_transcript(args.file)
    problems = validate_messages(messages)
    for problem in problems:
        print(problem)
    if problems:
        noun = "problem" if len(problems) == 1 else "problems"
        print(
            f"hermes-context: {args.file}: {len(problems)} {noun} in {len(messages)} messages",
            file=sys.stderr,
        )
        return EXIT_INPUT
    print(f"{args.file}: {len(messages)} messages, no problems", file=sys.stderr)
    return EXIT_OK
