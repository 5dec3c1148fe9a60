"""``hermes-context forget --user ID``: delete one person everywhere this home keeps them.

Exit codes: 0 everything was deleted; 1 the answer was not ``yes`` (nothing was deleted), or
something could not be deleted (listed; run again after fixing it); 2 usage.
"""

from __future__ import annotations

import argparse
import sys

from hermes_core.cli.common import EXIT_INPUT, EXIT_OK, add_user_choice, open_host, table
from hermes_core.cli.escaped import err, json_text, say
from hermes_core.cli.staged import escaped_handler


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = sub.add_parser(
        "forget",
        parents=[common],
        help="delete one user's sessions, memory and provider data",
        description="Delete every session, message, memory file and copy, staged write and "
        "audit line of one user, and ask the memory provider to delete theirs "
        "(docs/forget.md). Entries the user wrote in the shared MEMORY.md are listed, "
        "not deleted.",
    )
    add_user_choice(parser, "forget")
    parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--vacuum-full",
        action="store_true",
        help="PostgreSQL: VACUUM FULL the session tables (locks them while it runs)",
    )
    parser.set_defaults(handler=escaped_handler(run))


def run(args: argparse.Namespace) -> int:
    user = None if args.anonymous else args.user
    shown = "the anonymous principal" if user is None else f"user {user!r}"
    if not args.yes:
        err(
            f"will delete everything this home keeps about {shown}: sessions and messages, "
            "memory files and their copies, staged writes, audit lines, and what the memory "
            "provider keeps; this cannot be undone. Type yes to delete: ",
            end="",
            flush=True,
        )
        if sys.stdin.readline().strip() != "yes":
            err("not deleted")
            return EXIT_INPUT
    with open_host(args) as hermes:
        report = hermes.forget_user(user, vacuum_full=args.vacuum_full)
    if args.json:
        say(json_text(report.to_json()))
    else:
        rows: list[list[object]] = [["hermes-context", k, n] for k, n in report.deleted.items()]
        for name, counts in report.providers.items():
            rows += [[name, k, n] for k, n in counts.items()] or [[name, "(failed)", 0]]
        say(f"forgot {shown}:")
        say(table(["where", "kind", "deleted"], rows))
        for entry in report.shared_entries:
            say(f"kept (shared MEMORY.md, other users see it): {entry['preview']}")
        for problem in report.not_deleted:
            err(f"not deleted: {problem}")
    return EXIT_OK if report.complete else EXIT_INPUT
