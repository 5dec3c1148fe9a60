"""``approve`` and ``reject`` of staged writes, for memory and skills alike.

Why one place: both stores stage writes the same way (a record per write under
``pending/``, re-judged when approved), so the command that applies or drops them, one id or
``all``, is the same: exit 1 when any of them was refused, the reason on stderr. Under
``all``, a record another process applied or rejected meanwhile is skipped, not an error:
eight shells approving everything at once each report only what they applied. ``approve
all`` applies only records a person was shown in full, as shown (:func:`review_staged`).

Every command printed here (and by the memory commands) is one that works as shown: it
carries the ``--home`` and ``--config`` the user gave (:func:`command`, :func:`runnable`).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from collections.abc import Callable
from typing import Any, Protocol

from hermes_core.cli.common import EXIT_INPUT, EXIT_OK, CommandError, config_errors_exit_2
from hermes_core.cli.escaped import Handler, err, escaped_errors, say
from hermes_core.cli.pending_view import SeenRecords, digest

__all__ = [
    "Reviewable",
    "command",
    "escaped_handler",
    "noun_command",
    "print_json",
    "review_staged",
    "runnable",
    "source_label",
]

_COMMAND = re.compile(r"`(?:hermes-context )?((?:memory|skills) [a-z]+(?: [^`]*)?)`")


class _Record(Protocol):
    id: str


class _Pending(Protocol):
    def all(self) -> tuple[list[Any], list[str]]: ...

    def get(self, pending_id: str) -> Any: ...


class Reviewable(Protocol):
    """What holds staged writes: memory's writer, the skills library."""

    @property
    def pending(self) -> _Pending: ...

    def approve(self, pending_id: str) -> dict[str, Any]: ...

    def reject(self, pending_id: str) -> dict[str, Any]: ...


def escaped_handler(handler: Handler) -> Handler:
    """A memory or skills handler: its errors reach the terminal escaped, and a configuration
    error exits 2 as in every other command (the escaping alone would make it 1)."""
    return escaped_errors(config_errors_exit_2(handler))


def command(args: argparse.Namespace, *words: str) -> str:
    """``hermes-context WORDS`` with the ``--home`` and ``--config`` of this run, quoted for
    a shell, so that pasting it reaches the same home."""
    parts = ["hermes-context", *words]
    for flag in ("home", "config"):
        value = getattr(args, flag, None)
        if value:
            parts += [f"--{flag}", str(value)]
    return " ".join(shlex.quote(part) for part in parts)


def runnable(args: argparse.Namespace, text: str) -> str:
    """``text`` with every command it names in backquotes (`` `memory pending` ``,
    `` `hermes-context skills approve ID` ``) made complete: the program and this run's
    ``--home``/``--config``."""
    return _COMMAND.sub(lambda m: f"`{command(args, *shlex.split(m.group(1)))}`", text)


def source_label(provenance: object) -> str:
    """The ``source`` column of ``pending``: where a staged write's words came from
    (``tool:web_fetch``, ``attachment``, ``recalled``, ``user``...), from its record."""
    from hermes_core.provenance import Provenance

    if provenance is None:
        return "unknown (before provenance)"
    try:
        return Provenance.from_json(provenance).label()
    except ValueError:
        return "unreadable"


def print_json(value: object) -> None:
    """JSON on stdout with every control and invisible character as a ``\\u`` escape."""
    from hermes_core.skills.layout import escape_invisible

    print(escape_invisible(json.dumps(value, ensure_ascii=False, indent=1, default=str)))


def review_staged(
    args: argparse.Namespace,
    staged: Reviewable,
    noun: str,
    *,
    show: Callable[[Any], list[str]] | None = None,
    seen: SeenRecords | None = None,
) -> int:
    """Apply (``args.review == "approve"``) or drop ``args.pending_id`` (or ``all``).

    ``approve all`` applies only writes a person was shown in full, as shown (``show``
    prints one; ``seen`` keeps a digest of each as shown): without ``--yes`` it prints each
    and asks; with ``--yes`` it applies those shown before (by ``pending ID`` or an earlier
    ``approve all``) and skips the rest, saying how to see them. A record whose content
    changed since it was shown is left staged with a message, under both."""
    every = args.pending_id == "all"
    as_json = bool(getattr(args, "json", False))
    unseen: list[str] = []
    chosen: dict[str, str] | None = None
    if every:
        records = staged.pending.all()[0]
        ids = [record.id for record in records]
        if not ids and not as_json:
            err(f"no pending {noun} writes")
            return EXIT_OK
        if args.review == "approve" and show is not None and seen is not None and ids:
            chosen = _seen_or_confirmed(args, records, noun, show, seen)
            if chosen is None:
                return EXIT_INPUT
            unseen = [i for i in ids if i not in chosen]
            ids = [i for i in ids if i in chosen]
    else:
        ids = [args.pending_id]
    code = EXIT_OK
    rows: list[dict[str, Any]] = []
    for pending_id in unseen:
        message = (
            "not approved: not shown in full yet; see it with "
            f"`{command(args, noun_command(noun), 'pending', pending_id)}`"
        )
        rows.append({"id": pending_id, "status": "unseen", "message": message})
        if not as_json:
            err(f"{pending_id}: {message}")
        code = EXIT_INPUT  # a script must not take "some applied" for "all applied"
    for pending_id in ids:
        if chosen is not None and _changed(staged, pending_id, chosen[pending_id]):
            message = (
                "not approved: it changed since it was shown; left staged. See it again with "
                f"`{command(args, noun_command(noun), 'pending', pending_id)}`"
            )
            rows.append({"id": pending_id, "status": "changed", "message": message})
            if not as_json:
                err(f"{pending_id}: {message}")
            code = EXIT_INPUT
            continue
        row = _review_one(args, staged, pending_id, every=every)
        rows.append(row)
        if row["status"] == "failed":
            code = EXIT_INPUT
        if as_json:
            continue
        if row["status"] == "done":
            say(f"{pending_id}: {row['message']}")
        elif row["status"] == "skipped":
            err(f"{pending_id}: {row['message']}")
        else:
            err(f"hermes-context: {pending_id}: {row['error']}")
    if as_json:
        print_json({"action": args.review, "results": rows})
    return code


def noun_command(noun: str) -> str:
    """The command group of a noun: ``memory`` or ``skills``."""
    return "skills" if noun == "skill" else noun


def _changed(staged: Reviewable, pending_id: str, shown: str) -> bool:
    """Whether the record ``pending_id`` is no longer the one shown (digest ``shown``); one
    gone or unreadable is left for the approval to report."""
    try:
        current = staged.pending.get(pending_id)
    except (KeyError, ValueError):
        return False
    return digest(current) != shown


def _seen_or_confirmed(
    args: argparse.Namespace,
    records: list[Any],
    noun: str,
    show: Callable[[Any], list[str]],
    seen: SeenRecords,
) -> dict[str, str] | None:
    """``{id: digest as shown}`` of the records ``approve all`` may apply: with ``--yes``,
    those shown in full before; else each is printed in full now and applied once the person
    types yes (None: not)."""
    if getattr(args, "yes", False):
        return seen.digests()
    out = err if getattr(args, "json", False) else say  # stdout holds the JSON answer
    for record in records:
        for line in show(record):
            out(line)
        out("")
    seen.add(records)
    err(f"type yes to approve these {len(records)} {noun} writes: ", end="", flush=True)
    try:
        answer = sys.stdin.readline().strip()
    except (OSError, ValueError):
        answer = ""
    if answer != "yes":
        group = noun_command(noun)
        err(
            "not approved: nothing was applied. They are noted as shown: "
            f"`{command(args, group, 'approve', 'all', '--yes')}` applies them (and only them)"
        )
        return None
    return {r.id: digest(r) for r in records}


def _review_one(
    args: argparse.Namespace, staged: Reviewable, pending_id: str, *, every: bool
) -> dict[str, Any]:
    """One id's outcome: ``done``, ``skipped`` (under ``all``: gone meanwhile) or
    ``failed``; a single id that is not there is a usage error."""
    gone = {
        "id": pending_id,
        "status": "skipped",
        "message": "applied or rejected meanwhile by another process; skipped",
    }
    try:
        if args.review == "approve":
            result = staged.approve(pending_id)
        else:
            result = staged.reject(pending_id)
    except KeyError as exc:
        message = runnable(args, str(exc.args[0] if exc.args else exc))
        if every and message.startswith("no pending"):
            return gone
        if every:
            return {"id": pending_id, "status": "failed", "reason": "unreadable", "error": message}
        raise CommandError(message) from None
    except ValueError as exc:  # a record whose user id names no directory
        if every:
            error = f"{exc}; reject it"
            return {"id": pending_id, "status": "failed", "reason": "invalid", "error": error}
        raise CommandError(f"{pending_id}: {exc}; reject it") from None
    if result.get("success"):
        return {"id": pending_id, "status": "done", "message": result.get("message", "done")}
    if every and result.get("reason") == "gone":
        return gone
    error = runnable(args, str(result.get("error")))
    return {"id": pending_id, "status": "failed", "reason": result.get("reason"), "error": error}
