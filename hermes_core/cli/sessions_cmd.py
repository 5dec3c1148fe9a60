"""``hermes-context sessions ...``: list, show, search and export stored sessions (and
``restore``: undo a compaction, in cli/sessions_restore.py).

Every command acts as one user (``--user ID``; default: the anonymous principal of a
single-user home). A session of another user is "no such session" (exit 1), exactly like a
session that does not exist: the command line never shows, nor confirms, what it would not
let that user search.

Stored text is whatever a user, a model or a tool wrote, terminal escapes included: every
human-readable line here is printed through :mod:`hermes_core.cli.escaped` (controls and bidi
overrides shown as ``\\x1b``, ``\\u202e``), and JSON through its :func:`json_text` (exact
data, no live control).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from hermes_core.cli.common import (
    EXIT_INPUT,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    bounded_int,
    load,
    open_host,
    table,
)
from hermes_core.cli.escaped import err, escaped_errors, json_text, one_line, say, visible
from hermes_core.cli.sessions_maintain import register_maintenance
from hermes_core.cli.sessions_restore import register_restore
from hermes_core.cli.text import count
from hermes_core.errors import TranscriptError
from hermes_core.sessions.store import SearchHit, SessionRecord, SessionStore, StoredMessage
from hermes_core.transcript.files import check_output_path
from hermes_core.transcript.messages import message_text

FORMATS = ("json", "jsonl", "md")


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = sub.add_parser(
        "sessions",
        parents=[common],
        help="list, show, search or export stored sessions",
        description="Sessions in the session store (state.db), one user at a time.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    who = argparse.ArgumentParser(add_help=False)
    who.add_argument("--user", metavar="ID", help="act as this user (default: anonymous)")

    listing = actions.add_parser("list", parents=[common, who], help="newest sessions first")
    listing.add_argument("--limit", type=_positive, default=50, metavar="N", help="default 50")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=escaped_errors(run_list))

    show = actions.add_parser("show", parents=[common, who], help="print a session's messages")
    show.add_argument("session_id", metavar="ID")
    show.add_argument("--all", action="store_true", help="archived (compacted) rows too")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(handler=escaped_errors(run_show))

    search = actions.add_parser("search", parents=[common, who], help="full-text search")
    search.add_argument("query", metavar="QUERY", help="words to look for (any text is safe)")
    search.add_argument("--limit", type=_positive, default=10, metavar="N", help="default 10")
    search.add_argument("--json", action="store_true", help="print JSON")
    search.set_defaults(handler=escaped_errors(run_search))

    export = actions.add_parser("export", parents=[common, who], help="write a transcript")
    export.add_argument("session_id", metavar="ID")
    export.add_argument("--format", choices=FORMATS, default=None, help="default: json")
    export.add_argument("--out", metavar="FILE", help="write here (default stdout)")
    export.add_argument("--json", action="store_true", help="the same as --format json")
    export.set_defaults(handler=escaped_errors(run_export))

    register_restore(actions, [common, who])
    register_maintenance(actions, [common])


MAX_LIMIT = 10_000  # rows a listing or a search may ask for
_positive = bounded_int(1, MAX_LIMIT)


class _NoStore:
    """A home without its ``state.db``: no sessions, and none is created by looking."""

    def list_sessions(self, **_: object) -> list[SessionRecord]:
        return []

    def get_session(self, *_: object, **__: object) -> None:
        return None

    def search(self, *_: object, **__: object) -> list[SearchHit]:
        return []

    def messages(self, *_: object, **__: object) -> list[StoredMessage]:
        return []


@contextlib.contextmanager
def _store(args: argparse.Namespace) -> Iterator[SessionStore]:
    """The store to read: SQLite opened read-only (nothing created, migrated or switched to
    WAL; a read-only file or folder works), another backend through the host."""
    loaded = load(args)
    settings = loaded.settings.sessions
    if not settings.enabled:
        raise CommandError(
            "the session store is off (sessions.enabled: false in the config)", EXIT_USAGE
        )
    if settings.backend == "sqlite":
        from hermes_core.sessions.sqlite import SQLiteSessionStore
        from hermes_plugins.session_store import db_path

        path = db_path(loaded.home, settings.db_path)
        if not path.exists():
            yield cast(SessionStore, _NoStore())
            return
        local = SQLiteSessionStore(path, read_only=True)
        try:
            yield local
        finally:
            local.close()
        return
    host = open_host(args)
    try:
        store = host.session_store
        if store is None:
            raise CommandError(
                "the session store is off (sessions.enabled: false in the config)", EXIT_USAGE
            )
        yield store
    finally:
        host.close()


def _session(store: SessionStore, args: argparse.Namespace) -> SessionRecord:
    record = store.get_session(args.session_id, user_id=args.user)
    if record is None:
        raise CommandError(f"no such session: {args.session_id}{_as_user(args.user)}", EXIT_INPUT)
    return record


def _as_user(user_id: str | None) -> str:
    return " (anonymous user; pass --user ID for another)" if user_id is None else ""


def _when(stamp: float | None) -> str:
    return "-" if stamp is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def record_json(record: SessionRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "user_id": record.user_id,
        "parent_session_id": record.parent_session_id,
        "title": record.title,
        "model": record.model,
        "started_at": record.started_at,
        "ended_at": record.ended_at,
        "end_reason": record.end_reason,
        "counters": dict(record.counters),
    }


def run_list(args: argparse.Namespace) -> int:
    with _store(args) as store:
        records = store.list_sessions(user_id=args.user, limit=args.limit)
    if args.json:
        print(json_text([record_json(r) for r in records]))
        return EXIT_OK
    if not records:
        err(f"no sessions{_as_user(args.user)}")
        return EXIT_OK
    rows = [
        (
            one_line(r.id),
            _when(r.started_at),
            one_line(r.end_reason or ("-" if r.ended_at is None else "ended")),
            one_line(r.model or "-"),
            one_line(r.parent_session_id or "-"),
            one_line(r.title or "", 40) or "-",
        )
        for r in records
    ]
    say(table(("id", "started", "ended", "model", "parent", "title"), rows))
    return EXIT_OK


def run_show(args: argparse.Namespace) -> int:
    with _store(args) as store:
        record = _session(store, args)
        rows = store.messages(record.id, include_archived=args.all)
    if args.json:
        document = {"session": record_json(record), "messages": [_row_json(m) for m in rows]}
        print(json_text(document))
        return EXIT_OK
    say(_header(record, rows, archived_shown=args.all))
    for row in rows:
        mark = "" if row.active else " [archived]"
        say(f"\n#{row.seq} {one_line(row.message.get('role', '?'))}{mark}")
        say(_body(row.message))
    return EXIT_OK


def _header(record: SessionRecord, rows: Sequence[StoredMessage], *, archived_shown: bool) -> str:
    active = sum(1 for r in rows if r.active)
    lines = [
        f"session {one_line(record.id)}" + (f": {one_line(record.title)}" if record.title else ""),
        f"  started {_when(record.started_at)}, ended {_when(record.ended_at)}"
        + (f" ({one_line(record.end_reason)})" if record.end_reason else ""),
        f"  model {one_line(record.model or '-')}; "
        f"parent {one_line(record.parent_session_id or '-')}",
        f"  {count(active, 'active message')}"
        + (f", {len(rows) - active:,} archived" if archived_shown else " (--all adds archived)"),
    ]
    return "\n".join(lines)


def _body(message: Mapping[str, Any]) -> str:
    """The message as people read it, every control escaped (newlines kept)."""
    parts = []
    text = message_text(message)
    if text:
        parts.append(visible(text))
    elif message.get("content") is not None and not isinstance(message.get("content"), str):
        parts.append(json_text(message.get("content"), indent=None))
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping):
            name, arguments = function.get("name"), function.get("arguments")
            parts.append(f"-> {one_line(name)}({one_line(arguments, 200)})")
    return "\n".join(parts) if parts else "(no content)"


def _row_json(row: StoredMessage) -> dict[str, Any]:
    return {
        "seq": row.seq,
        "active": row.active,
        "compacted": row.compacted,
        "timestamp": row.timestamp,
        "token_count": row.token_count,
        "api_content": row.api_content,
        "message": dict(row.message),
    }


def run_search(args: argparse.Namespace) -> int:
    with _store(args) as store:
        hits = store.search(args.query, user_id=args.user, limit=args.limit)
    if args.json:
        print(json_text([_hit_json(h) for h in hits]))
        return EXIT_OK
    if not hits:
        err(f"no matching sessions{_as_user(args.user)}")
        return EXIT_OK
    for n, hit in enumerate(hits):
        if n:
            say("")
        title = f": {one_line(hit.title, 60)}" if hit.title else ""
        say(
            f"{one_line(hit.session_id)}{title}  ({_when(hit.started_at)}, "
            f"{count(hit.matches, 'matching message')})"
        )
        for line in hit.context:
            pointer = ">" if line.seq == hit.seq else " "
            say(f"  {pointer} #{line.seq} {one_line(line.role)}: {one_line(line.text, 200)}")
    return EXIT_OK


def _hit_json(hit: SearchHit) -> dict[str, Any]:
    return {
        "session_id": hit.session_id,
        "title": hit.title,
        "started_at": hit.started_at,
        "score": hit.score,
        "matches": hit.matches,
        "seq": hit.seq,
        "role": hit.role,
        "snippet": hit.snippet,
        "context": [{"seq": c.seq, "role": c.role, "text": c.text} for c in hit.context],
    }


def run_export(args: argparse.Namespace) -> int:
    form = _export_format(args)
    with _store(args) as store:
        record = _session(store, args)
        messages = [dict(m.message) for m in store.messages(record.id)]
    text = render_export(record, messages, form)
    if args.out:
        try:
            check_output_path(args.out)  # never a device, FIFO or directory
        except TranscriptError as exc:
            raise CommandError(str(exc), EXIT_USAGE) from None
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot write {args.out}: {exc.strerror or exc}") from None
        err(f"wrote {count(len(messages), 'message')} to {args.out}")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _export_format(args: argparse.Namespace) -> str:
    if args.json and args.format not in (None, "json"):
        raise CommandError(
            f"--json is --format json; it cannot be combined with --format {args.format}",
            EXIT_USAGE,
        )
    return str(args.format or "json")


def render_export(record: SessionRecord, messages: list[dict[str, Any]], form: str) -> str:
    """The active transcript as ``json`` (``{"session", "messages"}``: the ``compress`` and
    ``tokens`` commands read it), ``jsonl`` (a message a line) or ``md`` (for people). JSON
    keeps the exact data with no live control (:func:`json_text`); markdown shows stored
    controls escaped, to a file as to the terminal (a file is read on a terminal too)."""
    if form == "json":
        document = {"session": record_json(record), "messages": messages}
        return json_text(document) + "\n"
    if form == "jsonl":
        return "".join(json_text(m, indent=None) + "\n" for m in messages)
    lines = [f"# Session {one_line(record.id)}", ""]
    if record.title:
        lines += [f"**{one_line(record.title)}**", ""]
    lines += [
        f"- started: {_when(record.started_at)}",
        f"- ended: {_when(record.ended_at)}"
        + (f" ({one_line(record.end_reason)})" if record.end_reason else ""),
        f"- model: {one_line(record.model or '-')}",
    ]
    if record.parent_session_id:
        lines.append(f"- continues: {one_line(record.parent_session_id)}")
    for message in messages:
        lines += ["", f"## {one_line(message.get('role', '?'))}", "", _body(message)]
    return "\n".join(lines) + "\n"
