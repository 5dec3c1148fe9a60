"""``hermes-context sessions retain | vacuum | backup``: the store's lifecycle (docs/sessions.md).

These act on the whole store (every user's sessions), as the operator of the home: retention
is one policy for the store, vacuum and backup are about files and tables. They open the store
for writing directly (not through a host, whose opening would run the automatic retention
before ``--dry-run`` could show the plan).
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Iterator
from typing import Any

from hermes_core.cli.common import EXIT_OK, EXIT_USAGE, CommandError, bounded_int, load
from hermes_core.cli.escaped import escaped_errors, json_text, one_line, say
from hermes_core.cli.text import count

BODIES = ("compress", "drop")
_days = bounded_int(1, 36_500)


def register_maintenance(
    actions: argparse._SubParsersAction[argparse.ArgumentParser],
    parents: list[argparse.ArgumentParser],
) -> None:
    retain = actions.add_parser(
        "retain",
        parents=parents,
        help="archive idle sessions (sessions.retention)",
        description=(
            "Archive every user's sessions whose last message is older than "
            "sessions.retention.archive_after_days (or --days): summaries and metadata are "
            "kept, bodies compressed or dropped as sessions.retention.bodies says."
        ),
    )
    retain.add_argument("--days", type=_days, metavar="N", help="default: the config's")
    retain.add_argument("--bodies", choices=BODIES, help="default: the config's")
    retain.add_argument("--dry-run", action="store_true", help="list what would be archived")
    retain.add_argument("--json", action="store_true", help="print JSON")
    retain.set_defaults(handler=escaped_errors(run_retain))

    vacuum = actions.add_parser(
        "vacuum", parents=parents, help="give freed space back (after retention or deletes)"
    )
    vacuum.add_argument(
        "--full", action="store_true", help="PostgreSQL: VACUUM FULL (locks the tables)"
    )
    vacuum.add_argument("--json", action="store_true", help="print JSON")
    vacuum.set_defaults(handler=escaped_errors(run_vacuum))

    backup = actions.add_parser(
        "backup", parents=parents, help="a consistent copy of state.db, while hosts run"
    )
    backup.add_argument("--out", required=True, metavar="FILE", help="a new file")
    backup.add_argument("--json", action="store_true", help="print JSON")
    backup.set_defaults(handler=escaped_errors(run_backup))


@contextlib.contextmanager
def _writable(args: argparse.Namespace) -> Iterator[tuple[Any, Any]]:
    """(the store, the sessions settings), opened for writing."""
    loaded = load(args)
    settings = loaded.settings.sessions
    if not settings.enabled:
        raise CommandError(
            "the session store is off (sessions.enabled: false in the config)", EXIT_USAGE
        )
    store: Any
    if settings.backend == "sqlite":
        from hermes_core.sessions.sqlite import SQLiteSessionStore
        from hermes_plugins.session_store import db_path

        path = db_path(loaded.home, settings.db_path)
        if not path.is_file():
            raise CommandError(f"no session store at {path}: nothing to do (none was created)")
        store = SQLiteSessionStore(path)
    else:
        from hermes_plugins.postgres.database import Database, dsn_from
        from hermes_plugins.postgres.sessions import PostgresSessionStore

        store = PostgresSessionStore(
            Database(dsn_from(settings), pool_size=2, timeout=settings.timeout)
        )
    try:
        yield store, settings
    finally:
        store.close()


def run_retain(args: argparse.Namespace) -> int:
    with _writable(args) as (store, settings):
        days = args.days or settings.retention.archive_after_days
        if not days:
            raise CommandError(
                "retention is off: set sessions.retention.archive_after_days in the config, "
                "or pass --days N",
                EXIT_USAGE,
            )
        bodies = args.bodies or settings.retention.bodies
        before = store.size_bytes()
        report = store.retain(days=days, bodies=bodies, dry_run=args.dry_run)
        after = store.size_bytes()
    document = {
        "dry_run": report.dry_run,
        "days": days,
        "bodies": bodies,
        "cutoff": report.cutoff,
        "sessions": list(report.sessions),
        "rows_packed": report.packed,
        "rows_dropped": report.dropped,
        "bytes_before": before,
        "bytes_after": after,
    }
    if args.json:
        print(json_text(document))
        return EXIT_OK
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(report.cutoff))
    verb = "would archive" if report.dry_run else "archived"
    say(f"{verb} {count(len(report.sessions), 'session')} idle since before {when} ({bodies})")
    for session_id in report.sessions[:50]:
        say(f"  {one_line(session_id)}")
    if len(report.sessions) > 50:
        say(f"  ... and {len(report.sessions) - 50:,} more (--json lists them all)")
    if not report.dry_run:
        say(
            f"{count(report.packed, 'message')} compressed, {count(report.dropped, 'body')} "
            "dropped; `hermes-context sessions vacuum` gives the freed space back"
        )
    return EXIT_OK


def run_vacuum(args: argparse.Namespace) -> int:
    with _writable(args) as (store, settings):
        if settings.backend == "sqlite":
            if args.full:
                raise CommandError("--full is for PostgreSQL; SQLite's VACUUM is always full")
            space = store.vacuum()
        else:
            space = store.vacuum(full=args.full)
    if args.json:
        print(json_text({"bytes_before": space.before, "bytes_after": space.after}))
        return EXIT_OK
    freed = space.before - space.after
    say(f"{space.before:,} bytes before, {space.after:,} after ({freed:,} freed)")
    return EXIT_OK


def run_backup(args: argparse.Namespace) -> int:
    settings = load(args).settings.sessions
    if settings.backend != "sqlite":
        raise CommandError(
            "sessions backup copies the SQLite file; for PostgreSQL use `hermes-context export` "
            "(a portable bundle per user) or the database's own backups (pg_dump)",
            EXIT_USAGE,
        )
    with _writable(args) as (store, _):
        size = store.backup(args.out)
    if args.json:
        print(json_text({"out": args.out, "bytes": size}))
        return EXIT_OK
    say(f"wrote a consistent copy of the session store to {one_line(args.out)} ({size:,} bytes)")
    return EXIT_OK
