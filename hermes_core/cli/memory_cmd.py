"""``hermes-context memory ...``: inspect and edit MEMORY.md / USER.md, review staged writes.

Writes go through the same store, scanner and approval mode as the agent's ``memory`` tool
(origin ``cli``), so a person at a terminal cannot plant what the agent could not. A refused
write exits 1 with the reason on stderr and leaves the text as it was. The blocks are where
the host keeps them (``memory.backend``: the home's files, or rows in PostgreSQL), and what
is printed about a location names that place.

Nothing from a memory file or a staged record reaches the terminal raw: control characters
and bidirectional overrides (refused on write, but a file can be edited by hand) are printed
as visible escapes (``\x1b``), so an escape sequence cannot hide text from the person who
reviews or approves it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes_core.cli.audit_cmd import add_audit_parser
from hermes_core.cli.common import EXIT_INPUT, EXIT_OK, EXIT_USAGE, CommandError, open_host, table
from hermes_core.cli.consolidate_cmd import add_memory_consolidate
from hermes_core.cli.escaped import err as _err
from hermes_core.cli.escaped import say as _say
from hermes_core.cli.escaped import short as _short
from hermes_core.cli.memory_dates import dates_json, dates_lines
from hermes_core.cli.pending_view import SeenRecords, memory_lines
from hermes_core.cli.staged import (
    command,
    escaped_handler,
    print_json,
    review_staged,
    runnable,
    source_label,
)
from hermes_core.memory.approval import MemoryWriter, WriteRequest
from hermes_core.memory.entries import TARGET_FILES
from hermes_core.memory.store import MemoryStore
from hermes_core.provenance.audit_log import cli_actor
from hermes_core.types import Finding

TARGETS = ("memory", "user")


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = sub.add_parser("memory", parents=[common], help="show, edit or review file memory")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    who = argparse.ArgumentParser(add_help=False)
    who.add_argument("--user", metavar="ID", help="the user whose USER.md to use")
    one = argparse.ArgumentParser(add_help=False)
    one.add_argument("--target", choices=TARGETS, default="memory", help="default: memory")
    js = argparse.ArgumentParser(add_help=False)
    js.add_argument("--json", action="store_true", help="print JSON")

    show = actions.add_parser(
        "show", parents=[common, who, js], help="print what the system prompt would show"
    )
    show.add_argument("--target", choices=TARGETS, help="one block only (default: both)")
    show.add_argument("--raw", action="store_true", help="the files as stored, unscanned")
    show.add_argument(
        "--dates", action="store_true", help="each entry with when it was added, changed, used"
    )
    show.set_defaults(handler=escaped_handler(run_show))

    add = actions.add_parser("add", parents=[common, who, one, js], help="add an entry")
    add.add_argument("content", metavar="TEXT", help="the entry ('-' reads standard input)")
    add.set_defaults(handler=escaped_handler(run_write), write="add")
    replace = actions.add_parser("replace", parents=[common, who, one, js], help="replace an entry")
    replace.add_argument("old_text", metavar="OLD", help="the entry, or a unique part of it")
    replace.add_argument("content", metavar="NEW", help="the new entry ('-' reads stdin)")
    replace.set_defaults(handler=escaped_handler(run_write), write="replace")
    remove = actions.add_parser("remove", parents=[common, who, one, js], help="remove an entry")
    remove.add_argument("old_text", metavar="OLD", help="the entry, or a unique part of it")
    remove.set_defaults(handler=escaped_handler(run_write), write="remove")

    pending = actions.add_parser(
        "pending", parents=[common, who, js], help="list staged writes, or show one in full"
    )
    pending.add_argument("pending_id", metavar="ID", nargs="?", help="show this one in full")
    pending.set_defaults(handler=escaped_handler(run_pending))
    for name, verb in (("approve", "apply"), ("reject", "drop")):
        review = actions.add_parser(name, parents=[common, js], help=f"{verb} staged writes")
        review.add_argument("pending_id", metavar="ID|all", help="a pending id, or all")
        if name == "approve":
            review.add_argument(
                "--yes",
                action="store_true",
                help="with all: apply the writes shown in full before, without asking",
            )
        review.set_defaults(handler=escaped_handler(run_review), review=name)

    reset = actions.add_parser(
        "reset",
        parents=[common, who, js],
        help="delete a memory block (a copy is kept: a .bak file, or a history row)",
    )
    reset.add_argument("--target", choices=("all", *TARGETS), default="all")
    reset.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    reset.set_defaults(handler=escaped_handler(run_reset))
    add_audit_parser(actions, common, "memory")
    add_memory_consolidate(actions, [common, who])


@contextlib.contextmanager
def _writer(args: argparse.Namespace, user_id: str | None = None) -> Iterator[MemoryWriter]:
    """The home's writer for ``user_id``, scanning with every loaded ``scan_threat`` plugin."""
    with _opened(args, user_id) as (_, writer):
        yield writer


@contextlib.contextmanager
def _opened(
    args: argparse.Namespace, user_id: str | None = None
) -> Iterator[tuple[Path, MemoryWriter]]:
    """The home and its writer (see :func:`_writer`)."""
    from hermes_core.memory.home import open_writer

    with open_host(args) as host:

        def strict(text: str) -> list[Finding]:
            return host.plugins.scan_threat(text, "strict")

        documents = host.memory_documents()
        try:
            writer = open_writer(
                host.home, host.settings, user_id=user_id, scanner=strict, documents=documents
            )
        except ValueError as exc:  # a user id that cannot name a directory
            raise CommandError(f"--user: {exc}", EXIT_USAGE) from None
        yield host.home, writer


def run_show(args: argparse.Namespace) -> int:
    with _writer(args, args.user) as writer:
        return _show(args, writer)


def _show(args: argparse.Namespace, writer: MemoryWriter) -> int:
    store = writer.store
    targets = [args.target] if args.target else list(TARGETS)
    if args.json:
        blocks = [
            {
                "target": t,
                "where": store.where(t),
                "text": store.raw(t) if args.raw else store.block(t),
                "dates": dates_json(store, t),
            }
            for t in targets
        ]
        print_json({"raw": bool(args.raw), "blocks": blocks})
        return EXIT_OK
    if args.dates:
        for line in dates_lines(store, targets):
            _say(line)
        return EXIT_OK
    if args.raw:
        for target in targets:
            text = store.raw(target)
            _say(f"# {store.where(target)}" + ("" if text else " (empty or missing)"))
            if text:
                _say(text.removeprefix("\ufeff"))
        return EXIT_OK
    text = "\n\n".join(b for b in (store.block(t) for t in targets) if b)
    if text:
        _say(text)
    else:
        _err("memory is empty: nothing is added to the system prompt")
    return EXIT_OK


def _text(value: str) -> str:
    """The argument, or standard input for ``-`` (which must be UTF-8)."""
    if value != "-":
        return value
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CommandError(f"standard input is not UTF-8 text (byte {exc.start})") from None


def run_write(args: argparse.Namespace) -> int:
    content = _text(args.content) if hasattr(args, "content") else None
    old_text = getattr(args, "old_text", None)
    request = WriteRequest(args.write, args.target, content, old_text)
    with _writer(args, args.user) as writer:
        return _report(args, writer.write(request, origin="cli"))


def _report(args: argparse.Namespace, result: dict[str, Any]) -> int:
    if result.get("staged"):
        pending_id = str(result["pending_id"])
        result["approve"] = command(args, "memory", "approve", pending_id)
        result["reject"] = command(args, "memory", "reject", pending_id)
    if "error" in result:
        result["error"] = runnable(args, str(result["error"]))
    if args.json:
        print_json(result)
        return EXIT_OK if result.get("success") else EXIT_INPUT
    if not result.get("success"):
        lines = [str(result.get("error", "refused"))]
        lines += [f"  - {_short(x, 100)}" for x in result.get("matches", [])]
        if result.get("reason") in ("over_limit", "no_match"):
            lines += [f"  - {_short(x, 100)}" for x in result.get("entries", [])]
        _err("hermes-context: " + "\n".join(lines))
        return EXIT_INPUT
    if result.get("staged"):
        _say(
            f"staged as {result['pending_id']}: approve with `{result['approve']}`, or reject "
            f"with `{result['reject']}` (memory.write_approval: stage)"
        )
        return EXIT_OK
    message = str(result.get("message", "done"))
    for key in ("replaced", "removed"):
        if key in result:
            message += f" ({key}: {_short(result[key], 100)})"
    _say(f"{message} [{result.get('usage', '')}]")
    return EXIT_OK


def run_pending(args: argparse.Namespace) -> int:
    if args.pending_id is not None:
        return _pending_one(args)
    with _opened(args) as (_home, writer):
        records, broken = writer.pending.all()
    if args.user is not None:  # one user's staged writes, as show/add take --user
        records = [r for r in records if r.user_id == args.user]
    if args.json:  # for scripts: not noted as shown (nobody may have read it)
        print_json({"pending": [dataclasses.asdict(r) for r in records], "unreadable": broken})
        return EXIT_OK
    for pending_id in broken:
        _err(
            f"hermes-context: pending write {pending_id} cannot be read; reject it with "
            f"`{command(args, 'memory', 'reject', pending_id)}`"
        )
    if not records:
        _err("no pending memory writes")
        return EXIT_OK
    now = time.time()
    rows = [
        (
            r.id,
            r.action,
            TARGET_FILES.get(r.target, r.target),
            _short(r.user_id or "-", 40),
            r.origin,
            _short(source_label(r.provenance), 30),
            _age(now - r.created),
            _short(_describe(r.content, r.selected, len(r.operations)), 60),
        )
        for r in records
    ]
    _say(table(("id", "action", "file", "user", "origin", "source", "age", "what"), rows))
    _err(
        f"each is cut to a line: `{command(args, 'memory', 'pending', 'ID')}` shows one in "
        f"full; `{command(args, 'memory', 'approve', 'all')}` shows each before it applies them"
    )
    return EXIT_OK


def _pending_one(args: argparse.Namespace) -> int:
    """One staged write in full (noted as shown: ``approve all --yes`` may then apply it)."""
    with _opened(args) as (home, writer):
        try:
            record = writer.pending.get(args.pending_id)
        except KeyError as exc:
            raise CommandError(runnable(args, str(exc.args[0] if exc.args else exc))) from None
        SeenRecords(home, "memory").add([record])
    if args.json:
        print_json(dataclasses.asdict(record))
        return EXIT_OK
    for line in memory_lines(record):
        _say(line)
    return EXIT_OK


def _describe(content: str | None, selected: str | None, operations: int) -> str:
    if operations:
        return f"{operations} operations"
    if selected and content:
        return f"{selected} -> {content}"
    return content or selected or ""


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{max(0, int(seconds))}s"
    if seconds < 7200:
        return f"{int(seconds // 60)}m"
    return f"{int(seconds // 3600)}h"


def run_review(args: argparse.Namespace) -> int:
    with _opened(args) as (home, writer):
        seen = SeenRecords(home, "memory")
        return review_staged(args, writer, "memory", show=memory_lines, seen=seen)


def run_reset(args: argparse.Namespace) -> int:
    with _writer(args, args.user) as writer:  # the documents stay open while it runs
        return _reset(args, writer.store, writer)


def _reset(args: argparse.Namespace, store: MemoryStore, writer: MemoryWriter) -> int:
    targets = list(TARGETS) if args.target == "all" else [args.target]
    for target in [t for t in targets if store.shared(t)]:
        note = _shared_note(store, target)
        if args.target != "all":
            raise CommandError(note + " Nothing was deleted.")
        _err(note)
        targets.remove(target)
    found = []
    for target in targets:
        # a link out of the home is refused here, before asking
        line = store.documents.reset_preview(target, store.scope(target))
        if line is not None:
            found.append(target)
            # with --json the plan goes to stderr: stdout holds the one JSON answer
            (_err if args.json else _say)(f"will delete {line}")
    if not found:
        kept = "files" if store.documents.kind == "files" else f"in {store.documents.kind}"
        if args.json:
            print_json({"reset": []})
        else:
            _err(f"nothing to reset: no memory {kept}")
        return EXIT_OK
    if not args.yes:
        _err("type yes to delete: ", end="", flush=True)
        answer = sys.stdin.readline().strip()
        if answer != "yes":
            _err("not deleted")
            return EXIT_INPUT
    code = EXIT_OK
    results = []
    for target in found:
        result = store.reset(target)
        results.append({"target": target, **result})
        if not result.get("success"):
            code = EXIT_INPUT
        elif writer.audit_log is not None:
            writer.audit_log.record(
                "reset", actor=cli_actor(), target=target, shared=store.shared(target)
            )
        if args.json:
            continue
        if result.get("success"):
            _say(result["message"])
        else:
            _err(f"hermes-context: {result.get('error')}")
    if args.json:
        print_json({"reset": results})
    return code


def _shared_note(store: MemoryStore, target: str) -> str:
    return (
        f"{store.where(target)} is shared by every user of this home (memory.per_user_memory is "
        f"false): it holds other users' entries, so it is not reset for --user "
        f"{store.user_id}. To reset it for everyone, run `hermes-context memory reset --target "
        "memory` without --user."
    )
