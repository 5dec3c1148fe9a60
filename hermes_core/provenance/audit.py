"""The audit seam: every decision a writer makes about a write, with its provenance.

Why only a seam here: the log itself (files, a PostgreSQL table, ``memory audit``) is built on
top of this. The writers call :func:`audit` at each decision, ``landed``, ``staged``,
``refused`` (when written) and ``approved``, ``rejected`` (later, by a person); a sink
registered with :func:`add_sink` receives each. With no sink nothing happens. A failing sink
is logged and never fails the write.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

from hermes_core.provenance.record import Provenance

__all__ = ["EVENTS", "AuditSink", "add_sink", "audit"]

log = logging.getLogger("hermes_context.provenance")

EVENTS: Final = ("landed", "staged", "refused", "approved", "rejected")


class AuditSink(Protocol):
    """Receives one decision: ``event`` (one of EVENTS), ``store`` (``memory`` or
    ``skills``), the write's provenance (None when unknown, e.g. a record from before it
    was kept), the staged record's id if any, and a few plain details (action, target)."""

    def __call__(
        self,
        event: str,
        *,
        store: str,
        provenance: Provenance | None,
        pending_id: str | None,
        detail: Mapping[str, Any],
    ) -> None: ...


_SINKS: list[AuditSink] = []


def add_sink(sink: AuditSink) -> Callable[[], None]:
    """Register ``sink``; returns the call that removes it again."""
    _SINKS.append(sink)
    return lambda: _SINKS.remove(sink) if sink in _SINKS else None


def audit(
    event: str,
    *,
    store: str,
    provenance: Provenance | None = None,
    pending_id: str | None = None,
    **detail: Any,
) -> None:
    """Tell every sink about one decision."""
    for sink in list(_SINKS):
        try:
            sink(event, store=store, provenance=provenance, pending_id=pending_id, detail=detail)
        except Exception:  # an audit sink must never fail a write
            log.warning("audit sink %r failed", sink, exc_info=True)
