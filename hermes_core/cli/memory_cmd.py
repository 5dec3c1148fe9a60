"""``hermes-context memory ...``: inspect and edit MEMORY.md / USER.md, review staged writes.

Writes go through the same store, scanner and approval mode as the agent's ``memory`` tool
(origin ``cli``), so a person at a terminal cannot plant what the agent could not. A refused
write exits 1 with the reason on stderr and leaves the file as it was.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator
from typing import Any

from hermes_core.cli.common import EXIT_INPUT, EXIT_OK, EXIT_USAGE, CommandError, open_host, table
from hermes_core.memory.approval import MemoryWriter, WriteRequest
from hermes_core.memory.entries import TARGET_FILES
from hermes_core.memory.matching import preview
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

    show = actions.add_parser(
        "show", parents=[common, who], help="print what the system prompt would show"
    )
    show.add_argument("--target", choices=TARGETS, help="one block only (default: both)")
    show.add_argument("--raw", action="store_true", help="the files as stored, unscanned")
    show.set_defaults(handler=run_show)

    add = actions.add_parser("add", parents=[common, who, one], help="add an entry")
    add.add_argument("content", metavar="TEXT", help="the entry ('-' reads standard input)")
    add.set_defaults(handler=run_write, write="add")
    replace = actions.add_parser("replace", parents=[common, who, one], help="replace an entry")
    replace.add_argument("old_text", metavar="OLD", help="the entry, or a unique part of it")
    replace.add_argument("content", metavar="NEW", help="the new entry ('-' reads stdin)")
    replace.set_defaults(handler=run_write, write="replace")
    remove = actions.add_parser("remove", parents=[common, who, one], help="remove an entry")
    remove.add_argument("old_text", metavar="OLD", help="the entry, or a unique part of it")
    remove.set_defaults(handler=run_write, write="remove")

    pending = actions.add_parser("pending", parents=[common], help="list staged writes")
    pending.set_defaults(handler=run_pending)
    for name, verb in (("approve", "apply"), ("reject", "drop")):
        review = actions.add_parser(name, parents=[common], help=f"{verb} staged writes")
        review.add_argument("pending_id", metavar="ID|all", help="a pending id, or all")
        review.set_defaults(handler=run_review, review=name)

    reset = actions.add_parser(
        "reset", parents=[common, who], help="delete memory files (a .bak copy is kept)"
    )
    reset.add_argument("--target", choices=("all", *TARGETS), default="all")
    reset.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    reset.set_defaults(handler=run_reset)


@contextlib.contextmanager
def _writer(args: argparse.Namespace, user_id: str | None = None) -> Iterator[MemoryWriter]:
    """The home's writer for ``user_id``, scanning with every loaded ``scan_threat`` plugin."""
    from hermes_core.memory.home import open_writer

    with open_host(args) as host:

        def strict(text: str) -> list[Finding]:
            return host.plugins.scan_threat(text, "strict")

        try:
            writer = open_writer(host.home, host.settings, user_id=user_id, scanner=strict)
        except ValueError as exc:  # a user id that cannot name a directory
            raise CommandError(f"--user: {exc}", EXIT_USAGE) from None
        yield writer


def run_show(args: argparse.Namespace) -> int:
    with _writer(args, args.user) as writer:
        return _show(args, writer)


def _show(args: argparse.Namespace, writer: MemoryWriter) -> int:
    store = writer.store
    targets = [args.target] if args.target else list(TARGETS)
    if args.raw:
        for target in targets:
            path = store.path(target)
            text = store.raw(target)
            print(f"# {path}" + ("" if text else " (empty or missing)"))
            if text:
                print(text.removeprefix("\ufeff"))
        return EXIT_OK
    text = "\n\n".join(b for b in (store.block(t) for t in targets) if b)
    if text:
        print(text)
    else:
        print("memory is empty: nothing is added to the system prompt", file=sys.stderr)
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
        return _report(writer.write(request, origin="cli"))


def _report(result: dict[str, Any]) -> int:
    if not result.get("success"):
        lines = [str(result.get("error", "refused"))]
        lines += [f"  - {preview(str(x), 100)}" for x in result.get("matches", [])]
        if result.get("reason") in ("over_limit", "no_match"):
            lines += [f"  - {preview(str(x), 100)}" for x in result.get("entries", [])]
        print("hermes-context: " + "\n".join(lines), file=sys.stderr)
        return EXIT_INPUT
    if result.get("staged"):
        print(f"staged as {result['pending_id']}: approve with `hermes-context memory approve`")
        return EXIT_OK
    message = str(result.get("message", "done"))
    for key in ("replaced", "removed"):
        if key in result:
            message += f" ({key}: {preview(str(result[key]), 100)})"
    print(f"{message} [{result.get('usage', '')}]")
    return EXIT_OK


def run_pending(args: argparse.Namespace) -> int:
    with _writer(args) as writer:
        records, broken = writer.pending.all()
    for pending_id in broken:
        print(f"hermes-context: pending write {pending_id} cannot be read", file=sys.stderr)
    if not records:
        print("no pending memory writes", file=sys.stderr)
        return EXIT_OK
    now = time.time()
    rows = [
        (
            r.id,
            r.action,
            TARGET_FILES.get(r.target, r.target),
            r.user_id or "-",
            r.origin,
            _age(now - r.created),
            preview(_describe(r.content, r.selected, len(r.operations)), 60),
        )
        for r in records
    ]
    print(table(("id", "action", "file", "user", "origin", "age", "what"), rows))
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
    with _writer(args) as writer:
        return _review(args, writer)


def _review(args: argparse.Namespace, writer: MemoryWriter) -> int:
    if args.pending_id == "all":
        ids = [r.id for r in writer.pending.all()[0]]
        if not ids:
            print("no pending memory writes", file=sys.stderr)
            return EXIT_OK
    else:
        ids = [args.pending_id]
    code = EXIT_OK
    for pending_id in ids:
        try:
            if args.review == "approve":
                result = writer.approve(pending_id)
            else:
                result = writer.reject(pending_id)
        except KeyError as exc:
            raise CommandError(str(exc.args[0] if exc.args else exc)) from None
        except ValueError as exc:  # a record whose user id names no directory
            raise CommandError(f"{pending_id}: {exc}; reject it") from None
        if result.get("success"):
            print(f"{pending_id}: {result.get('message', 'done')}")
        else:
            print(f"hermes-context: {pending_id}: {result.get('error')}", file=sys.stderr)
            code = EXIT_INPUT
    return code


def run_reset(args: argparse.Namespace) -> int:
    from hermes_core.memory.files import backup_copy, locked

    with _writer(args, args.user) as writer:
        store = writer.store
    targets = list(TARGETS) if args.target == "all" else [args.target]
    paths = [store.path(t) for t in targets if store.path(t).exists()]
    if not paths:
        print("nothing to reset: no memory files", file=sys.stderr)
        return EXIT_OK
    for path in paths:
        print(f"will delete {path} ({path.stat().st_size:,} bytes; a .bak copy is kept)")
    if not args.yes:
        print("type yes to delete: ", end="", file=sys.stderr, flush=True)
        answer = sys.stdin.readline().strip()
        if answer != "yes":
            print("not deleted", file=sys.stderr)
            return EXIT_INPUT
    for path in paths:
        with locked(path):
            copy = backup_copy(path, always=True)
            path.unlink(missing_ok=True)
        print(f"deleted {path}" + (f" (copy: {copy.name})" if copy else ""))
    return EXIT_OK
