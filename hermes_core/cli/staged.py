"""``approve`` and ``reject`` of staged writes, for memory and skills alike.

Why one place: both stores stage writes the same way (a record per write under
``pending/``, re-judged when approved), so the command that applies or drops them, one id or
``all``, is the same: exit 1 when any of them was refused, the reason on stderr.
"""

from __future__ import annotations

import argparse
from typing import Any, Protocol

from hermes_core.cli.common import EXIT_INPUT, EXIT_OK, CommandError
from hermes_core.cli.escaped import err, say

__all__ = ["Reviewable", "review_staged"]


class _Record(Protocol):
    id: str


class _Pending(Protocol):
    def all(self) -> tuple[list[Any], list[str]]: ...


class Reviewable(Protocol):
    """What holds staged writes: memory's writer, the skills library."""

    @property
    def pending(self) -> _Pending: ...

    def approve(self, pending_id: str) -> dict[str, Any]: ...

    def reject(self, pending_id: str) -> dict[str, Any]: ...


def review_staged(args: argparse.Namespace, staged: Reviewable, noun: str) -> int:
    """Apply (``args.review == "approve"``) or drop ``args.pending_id`` (or ``all``)."""
    if args.pending_id == "all":
        ids = [record.id for record in staged.pending.all()[0]]
        if not ids:
            err(f"no pending {noun} writes")
            return EXIT_OK
    else:
        ids = [args.pending_id]
    code = EXIT_OK
    for pending_id in ids:
        try:
            if args.review == "approve":
                result = staged.approve(pending_id)
            else:
                result = staged.reject(pending_id)
        except KeyError as exc:
            raise CommandError(str(exc.args[0] if exc.args else exc)) from None
        except ValueError as exc:  # a record whose user id names no directory
            raise CommandError(f"{pending_id}: {exc}; reject it") from None
        if result.get("success"):
            say(f"{pending_id}: {result.get('message', 'done')}")
        else:
            err(f"hermes-context: {pending_id}: {result.get('error')}")
            code = EXIT_INPUT
    return code
