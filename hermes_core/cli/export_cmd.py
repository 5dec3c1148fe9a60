"""``hermes-context export --user ID --out BUNDLE``: one user's data as a portable bundle.

The stores are the home's, as its config chooses them (SQLite or PostgreSQL sessions, files
or PostgreSQL memory); see ``docs/export.md`` for what the bundle holds.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_core.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    HOME_MARKERS,
    CommandError,
    add_user_choice,
    open_host,
)
from hermes_core.cli.escaped import escaped_errors, json_text, say

if TYPE_CHECKING:
    from hermes_core.lifecycle.bundle_export import BundleParts


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = sub.add_parser(
        "export",
        parents=[common],
        help="write one user's sessions, memory and skills to a bundle",
        description="Write one user's sessions (archived rows too), memory blocks, staged "
        "records and the home's skills to one portable bundle file (docs/export.md).",
    )
    add_user_choice(parser, "export")
    parser.add_argument("--out", metavar="BUNDLE", required=True, help="the file to write")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    parser.set_defaults(handler=escaped_errors(run_export))


@contextlib.contextmanager
def bundle_parts(args: argparse.Namespace) -> Iterator[BundleParts]:
    """The home's stores, opened as its config chooses them, closed afterwards."""
    from hermes_core.lifecycle.bundle_export import BundleParts
    from hermes_core.skills.home import pending_directory, skills_directory
    from hermes_core.skills.pending import PendingSkillWrites

    with open_host(args) as host:
        store = host.session_store
        if store is None:
            raise CommandError(
                "the session store is off (sessions.enabled: false in the config)", EXIT_USAGE
            )
        documents = host.memory_documents()
        try:
            yield BundleParts(
                store=store,
                documents=documents,
                skills_root=skills_directory(host.home),
                skill_pending=PendingSkillWrites(pending_directory(host.home)),
                per_user_memory=host.settings.memory.per_user_memory,
            )
        finally:
            documents.close()


def _check_home(args: argparse.Namespace) -> None:
    """An export reads a home: a ``--home`` that holds none is a typo, refused before
    anything is created there (exit 2)."""
    if args.home is None:
        return
    home = Path(args.home).expanduser()
    if not home.is_dir() or not any((home / name).exists() for name in HOME_MARKERS):
        raise CommandError(
            f"--home {args.home} holds no hermes-context home (none of "
            f"{', '.join(HOME_MARKERS)}): check the path (nothing was created)",
            EXIT_USAGE,
        )


def run_export(args: argparse.Namespace) -> int:
    from hermes_core.lifecycle.bundle_export import export_bundle

    if args.user == "":
        raise CommandError("--user needs an id (use --anonymous for no id)", EXIT_USAGE)
    user_id = None if args.anonymous else args.user
    _check_home(args)
    with bundle_parts(args) as parts:
        done = export_bundle(Path(args.out), parts, user_id=user_id)
    if args.json:
        say(json_text({"out": args.out, **done}))
        return EXIT_OK
    counts = done["counts"]
    say(
        f"wrote {args.out}: {counts['sessions']} session(s), {counts['messages']} message(s) "
        f"({counts['archived_messages']} archived), {counts['memory_blocks']} memory block(s), "
        f"{counts['skills']} skill(s), {counts['pending_memory'] + counts['pending_skills']} "
        "staged record(s)"
    )
    for note in done["notes"]:
        say(f"note: {note}")
    return EXIT_OK
