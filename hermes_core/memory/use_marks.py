"""Marking memory entries used when a recall brings them back (their ``last_used``).

Why through the documents' own ``update``: the dates are changed under the same lock or
version check as every write, by the same dated path, so a mark never races a write and
never touches the text (a decision that stores no text stores only the dates). Nothing is
written when no entry matched. Only the store's own blocks are read (its user's USER.md and
the MEMORY.md it shows), so another user's entries are never marked.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from hermes_core.errors import MemoryStoreError
from hermes_core.memory.documents import DatedDocuments, Decision
from hermes_core.memory.entries import parse_entries
from hermes_core.memory.store import MemoryStore
from hermes_core.memory.used import recalled

__all__ = ["mark_recalled"]

log = logging.getLogger("hermes_context.memory")


def mark_recalled(
    store: MemoryStore, texts: Sequence[str], skip: set[tuple[str, str]] | None = None
) -> list[tuple[str, str]]:
    """Mark used each entry of the store's enabled blocks found in ``texts`` (see
    :func:`hermes_core.memory.used.recalled`), leaving out the (target, entry) pairs in
    ``skip``; returns the pairs marked. Failures are logged: a mark is a help."""
    if not isinstance(store.documents, DatedDocuments) or not any(texts):
        return []
    marked: list[tuple[str, str]] = []
    for target in ("memory", "user"):
        if not store.enabled[target]:
            continue
        try:
            found = [
                e
                for e in recalled(store.entries(target), texts)
                if (target, e) not in (skip or set())
            ]
            if found and _mark(store, target, found):
                marked.extend((target, e) for e in found)
        except (MemoryStoreError, OSError) as exc:
            log.warning("memory entries recalled but not marked used: %s", exc)
    return marked


def _mark(store: MemoryStore, target: str, found: list[str]) -> bool:
    def decide(text: str | None) -> Decision[bool]:
        present = tuple(e for e in found if e in parse_entries(text or ""))
        return Decision(bool(present), None, succeeded=bool(present), used=present)

    updated = store.documents.update(target, store.scope(target), decide)
    return bool(updated is not None and updated.value)
