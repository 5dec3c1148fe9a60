"""``hermes-context memory audit`` and ``skills audit``: who wrote what, when, from where.

Why: the memory files carry no metadata, so this is how a person finds out where an entry
came from: the audit lines the writers append (``$HERMES_HOME/audit/*.jsonl``, or the
backend's table), newest last, filtered; ``--entries`` joins the current entries (or
skills) to their last line by sha256 (or name). A user id sees its own lines and the lines
about what every user shares. Lines that cannot be read are reported on stderr and skipped.
Everything printed goes through :mod:`hermes_core.cli.escaped`.
"""

from __future__ import annotations

import argparse
import datetime
import re
import time
from collections.abc import Callable, Iterable
from typing import Any, Final

from hermes_core.cli.common import EXIT_OK, EXIT_USAGE, CommandError, open_host, table
from hermes_core.cli.escaped import err, say, short
from hermes_core.cli.staged import escaped_handler, print_json
from hermes_core.provenance.audit_log import ALL_EVENTS, AuditLog

__all__ = ["add_audit_parser", "parse_since"]

_SINCE: Final = re.compile(r"^(\d{1,9})([smhdw])$")
_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
UNKNOWN: Final = "unknown (before audit / hand-edited)"
#: The events after which an entry (or skill) is as the line says.
_WRITTEN: Final = ("landed", "approved")


def parse_since(text: str) -> float:
    """``7d`` -> seconds (at most 9 digits); a usage error saying what to write."""
    match = _SINCE.match(text.strip())
    if not match:
        raise CommandError(
            f"--since: {text!r} is not a duration; use a number and s, m, h, d or w (e.g. 7d)",
            EXIT_USAGE,
        )
    return float(match.group(1)) * _UNITS[match.group(2)]


def add_audit_parser(
    actions: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
    store: str,
) -> None:
    noun = "memory entries" if store == "memory" else "skills"
    audit = actions.add_parser(
        "audit", parents=[common], help=f"who wrote which {noun}, when, from where"
    )
    if store == "memory":
        audit.add_argument("--user", metavar="ID", help="this user's lines and shared ones only")
    audit.add_argument("--since", metavar="AGE", help="e.g. 30m, 12h, 7d")
    audit.add_argument("--source", metavar="KIND", help="user, model, tool, attachment, ...")
    audit.add_argument("--event", choices=ALL_EVENTS, help="one kind of decision only")
    audit.add_argument(
        "--entries", action="store_true", help=f"the current {noun}, each with its last line"
    )
    audit.add_argument("--json", action="store_true", help="print JSON")
    audit.set_defaults(handler=escaped_handler(_run_memory if store == "memory" else _run_skills))


def _run_memory(args: argparse.Namespace) -> int:
    from hermes_core.memory.entries import TARGET_FILES
    from hermes_core.memory.home import memory_audit_log, open_store
    from hermes_core.provenance.audit_log import entry_sha256

    with open_host(args) as host:
        documents = host.memory_documents()
        own: AuditLog | None = getattr(documents, "audit_log", None)
        source = own if own is not None else memory_audit_log(host.home, host.settings)
        try:
            store = open_store(host.home, host.settings, user_id=args.user, documents=documents)
        except ValueError as exc:
            raise CommandError(f"--user: {exc}", EXIT_USAGE) from None

        def visible(line: dict[str, Any]) -> bool:
            """What ``memory show --user`` shows: lines about the blocks this user sees."""
            target = line.get("target")
            if target not in ("memory", "user"):
                return line.get("user_id") in (args.user, None)
            return _scope(line) == store.scope(str(target))

        lines = _read(source, args, visible if args.user is not None else None)
        if not args.entries:
            return _print_lines(args, lines)
        current = [(t, e) for t in ("memory", "user") for e in store.entries(t)]
    rows = []
    for target, entry in current:
        sha = entry_sha256(entry)
        last = _last(lines, lambda line, sha=sha: sha in _shas(line))
        rows.append({"file": TARGET_FILES.get(target, target), "entry": entry, "last": last})
    return _print_entries(args, rows, "entry")


def _scope(line: dict[str, Any]) -> str | None:
    """Whose block a line is about: its user's, or None (the text every user shares)."""
    user = line.get("user_id")
    return None if line.get("shared") is True or not isinstance(user, str) else user


def _run_skills(args: argparse.Namespace) -> int:
    from hermes_core.skills.home import open_library, skills_audit_log

    with open_host(args) as host:
        lines = _read(skills_audit_log(host.home, host.settings), args, None)
        if not args.entries:
            return _print_lines(args, lines)
        skills = open_library(host.home, host.settings).list()
    rows = []
    for skill in skills:
        last = _last(lines, lambda line, name=skill.name: line.get("name") == name)
        rows.append({"file": skill.path, "entry": skill.name, "last": last})
    return _print_entries(args, rows, "skill")


def _read(
    log: AuditLog, args: argparse.Namespace, visible: Callable[[dict[str, Any]], bool] | None
) -> list[dict[str, Any]]:
    """The lines this user may see that pass the filters, oldest first; bad lines reported."""
    lines, problems = log.read()
    for problem in problems:
        err(f"hermes-context: audit: {problem}")
    since = time.time() - parse_since(args.since) if args.since is not None else None
    kept = [
        line
        for line in lines
        if (visible is None or visible(line))
        and (since is None or line["at"] >= since)
        and (args.event is None or line.get("event") == args.event)
        and (args.source is None or args.source in _kinds(line))
    ]
    return sorted(kept, key=lambda line: float(line["at"]))


def _kinds(line: dict[str, Any]) -> set[str]:
    """Every name ``--source`` matches for a line: its source, label and untrusted kinds."""
    found = {str(line.get("source") or "unknown")}
    record = line.get("provenance")
    if isinstance(record, dict):
        found.add(str(record.get("source")))
        for item in record.get("sources") or []:
            if isinstance(item, dict):
                found.add(str(item.get("kind")))
    return found


def _shas(line: dict[str, Any]) -> list[str]:
    many = line.get("entries_sha256")
    found = [line.get("entry_sha256"), *(many if isinstance(many, list) else [])]
    return [sha for sha in found if isinstance(sha, str)]


def _last(lines: Iterable[dict[str, Any]], match: Any) -> dict[str, Any] | None:
    found = None
    for line in lines:
        if line.get("event") in _WRITTEN and match(line):
            found = line
    return found


def _when(at: object) -> str:
    try:
        moment = datetime.datetime.fromtimestamp(float(at), datetime.timezone.utc)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError, OSError):
        return "?"
    return moment.strftime("%Y-%m-%d %H:%M:%SZ")


def _where(line: dict[str, Any]) -> str:
    from hermes_core.memory.entries import TARGET_FILES

    if line.get("store") == "skills":
        return str(line.get("name") or "-")
    target = line.get("target")
    return TARGET_FILES.get(str(target), str(target or "-"))


def _row(line: dict[str, Any]) -> tuple[str, ...]:
    return (
        _when(line.get("at")),
        short(line.get("event"), 10),
        short(line.get("actor") or "-", 24),
        short(_where(line), 30),
        short(line.get("source") or "unknown", 24),
        short(line.get("content") or line.get("reason") or "", 60),
    )


_HEADERS: Final = ("time", "event", "actor", "file", "source", "preview")


def _print_lines(args: argparse.Namespace, lines: list[dict[str, Any]]) -> int:
    if args.json:
        print_json({"lines": lines})
        return EXIT_OK
    if not lines:
        err("no audit lines")
        return EXIT_OK
    say(table(_HEADERS, [_row(line) for line in lines]))
    return EXIT_OK


def _print_entries(args: argparse.Namespace, rows: list[dict[str, Any]], noun: str) -> int:
    if args.json:
        print_json({"entries": rows})
        return EXIT_OK
    if not rows:
        err(f"no current {'entries' if noun == 'entry' else noun + 's'}")
        return EXIT_OK
    shown = []
    for row in rows:
        last = row["last"]
        cells = _row(last) if last else (UNKNOWN, "", "", "", "", "")
        tail = (cells[0], cells[1], cells[2], cells[4])
        shown.append((short(row["file"], 30), short(row["entry"], 50), *tail))
    say(table(("file", noun, "time", "event", "actor", "source"), shown))
    return EXIT_OK
