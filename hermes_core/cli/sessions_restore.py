"""``hermes-context sessions restore ID [--compaction N]``: undo a compaction without a host.

The same undo as :meth:`Session.undo_compaction
<hermes_core.host.session.Session.undo_compaction>` (both run
:func:`hermes_core.host.undo_restore.undo_in_store`), for a user who wants the transcript
back between two runs of the agent: ``ID`` is the conversation (followed into the child
session it continues in, as a host resuming it would), ``--list`` shows its compactions.
docs/undo.md has the rules.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Iterator
from typing import Any

from hermes_core.cli.common import (
    EXIT_INPUT,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    bounded_int,
    open_host,
    table,
)
from hermes_core.cli.escaped import escaped_errors, json_text, one_line, say
from hermes_core.cli.text import count
from hermes_core.compression.engine import Compressor
from hermes_core.errors import SessionError
from hermes_core.host.hermes import Hermes
from hermes_core.host.resume import open_record
from hermes_core.host.session_state import SessionState
from hermes_core.host.undo_history import CompactionRecord
from hermes_core.host.undo_restore import undo_in_store
from hermes_core.sessions.store import SessionRecord, SessionStore

__all__ = ["register_restore", "run_restore"]

_number = bounded_int(1, 10**9)  # a compaction's number in its conversation


def register_restore(
    actions: argparse._SubParsersAction[argparse.ArgumentParser],
    parents: list[argparse.ArgumentParser],
) -> None:
    restore = actions.add_parser(
        "restore",
        parents=parents,
        help="undo a compaction: the transcript from before it, as a new state",
        description=(
            "Bring back the exact transcript from before compaction N (default: the newest "
            "not undone), the messages added after it following; see docs/undo.md."
        ),
    )
    restore.add_argument("session_id", metavar="ID")
    restore.add_argument("--compaction", type=_number, metavar="N", help="its number (see --list)")
    restore.add_argument("--list", action="store_true", help="list the compactions; change nothing")
    restore.add_argument("--json", action="store_true", help="print JSON")
    restore.set_defaults(handler=escaped_errors(run_restore))


@contextlib.contextmanager
def _host(args: argparse.Namespace) -> Iterator[tuple[Hermes, SessionStore]]:
    host = open_host(args)
    try:
        store = host.session_store
        if store is None:
            raise CommandError(
                "the session store is off (sessions.enabled: false in the config), so no "
                "compaction was archived and there is nothing to restore",
                EXIT_USAGE,
            )
        yield host, store
    finally:
        host.close()


def run_restore(args: argparse.Namespace) -> int:
    if args.list and args.compaction is not None:
        raise CommandError("--list changes nothing; it takes no --compaction", EXIT_USAGE)
    with _host(args) as (host, store):
        current = _conversation(store, args)
        state = SessionState.from_record(current.state)
        if args.list:
            return _print_history(state, args)
        settings = host.settings
        compressor = Compressor(
            settings,
            context_length=state.context_length or settings.model.context_length,
            max_tokens=settings.model.max_tokens,
            model=state.model or settings.model.name or None,
        )
        try:
            done = undo_in_store(
                store,
                session_id=current.id,
                user_id=args.user,
                state=state,
                n=args.compaction,
                compressor=compressor,
                after_seq=store.last_seq(current.id),
                wall_now=time.time(),
            )
        except SessionError as exc:
            raise CommandError(str(exc), EXIT_INPUT) from None
    plan = done.plan
    report: dict[str, Any] = {
        "compaction": plan.record.n,
        "undone": plan.undone,
        "session_id": done.record.id,
        "left": current.id,
        "messages": len(done.rows),
        "appended": plan.appended,
        "abandoned": plan.abandon,
    }
    if args.json:
        print(json_text(report))
        return EXIT_OK
    undone = ", ".join(str(n) for n in plan.undone)
    say(
        f"restored the transcript from before compaction {plan.record.n} of {args.session_id}: "
        f"{count(len(done.rows), 'message')} active in session {done.record.id} "
        f"({plan.appended:,} added after it follow); undone: {undone}"
    )
    if plan.abandon:
        say(f"ended as 'undone' (not resumed any more): {', '.join(plan.abandon)}")
    return EXIT_OK


def _conversation(store: SessionStore, args: argparse.Namespace) -> SessionRecord:
    """The session the conversation ``ID`` continues in (its newest live child, if any)."""
    if store.get_session(args.session_id, user_id=args.user) is None:
        who = " (anonymous user; pass --user ID for another)" if args.user is None else ""
        raise CommandError(f"no such session: {args.session_id}{who}", EXIT_INPUT)
    return open_record(store, args.session_id, user_id=args.user, model=None)


def _print_history(state: SessionState, args: argparse.Namespace) -> int:
    records = state.history.records
    if args.json:
        print(json_text([_record_json(r) for r in records]))
        return EXIT_OK
    if not records:
        say(f"no compactions recorded for {args.session_id}")
        return EXIT_OK
    rows = [
        (
            r.n,
            time.strftime("%Y-%m-%d %H:%M", time.localtime(r.at)),
            one_line(r.session if r.into == r.session else f"{r.session} -> {r.into}"),
            f"{r.tokens_before:,} -> {r.tokens_after:,}",
            one_line(r.summarizer or "-"),
            _status(r),
        )
        for r in records
    ]
    say(table(("n", "when", "session", "tokens", "summary", "status"), rows))
    return EXIT_OK


def _status(record: CompactionRecord) -> str:
    if record.undone is not None:
        return f"undone (by {record.undone.by})"
    return "can be undone" if record.compressor is not None else "too old to undo"


def _record_json(record: CompactionRecord) -> dict[str, Any]:
    return {
        "n": record.n,
        "at": record.at,
        "session_id": record.session,
        "into": record.into,
        "tokens_before": record.tokens_before,
        "tokens_after": record.tokens_after,
        "summarizer": record.summarizer,
        "status": _status(record),
    }
