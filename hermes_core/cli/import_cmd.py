"""``hermes-context import BUNDLE``: restore a bundle into this home, never overwriting.

The target stores are this home's, as its config chooses them, so a bundle exported from
SQLite lands in PostgreSQL and back. See ``docs/export.md``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from hermes_core.cli.common import EXIT_OK
from hermes_core.cli.escaped import escaped_errors, json_text, say
from hermes_core.cli.export_cmd import bundle_parts


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = sub.add_parser(
        "import",
        parents=[common],
        help="restore a bundle written by export into this home",
        description="Restore a bundle (docs/export.md) into this home's stores. Refuses a "
        "damaged, changed or newer bundle, and anything that exists already, unless "
        "--skip-existing; nothing is ever overwritten.",
    )
    parser.add_argument("bundle", metavar="BUNDLE", help="the bundle file")
    parser.add_argument(
        "--skip-existing",
        action="store_true",
        help="keep what the home holds already (same session ids, memory text, skills, "
        "staged ids) and import the rest",
    )
    parser.add_argument("--json", action="store_true", help="print what was imported as JSON")
    parser.set_defaults(handler=escaped_errors(run_import))


def run_import(args: argparse.Namespace) -> int:
    from hermes_core.lifecycle.bundle_format import read_bundle

    read_bundle(Path(args.bundle))  # a bad bundle is refused before the home is opened
    from hermes_core.lifecycle.bundle_import import import_bundle

    with bundle_parts(args) as parts:
        report = import_bundle(Path(args.bundle), parts, skip_existing=args.skip_existing)
    if args.json:
        say(json_text(report.as_json()))
        return EXIT_OK
    who = "the anonymous principal" if report.user_id is None else f"user {report.user_id}"
    blocks = ", ".join(report.memory_blocks) or "none"
    say(
        f"imported for {who}: {report.sessions} session(s), {report.messages} message(s), "
        f"memory blocks: {blocks}, {report.skills} skill(s), "
        f"{report.pending_memory + report.pending_skills} staged record(s)"
    )
    for kind, names in report.skipped.items():
        say(f"skipped (exists already) {kind}: {', '.join(names)}")
    return EXIT_OK
