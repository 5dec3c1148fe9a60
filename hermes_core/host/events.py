"""Status events a session hands to its host's ``on_event`` callback.

One shape for everything a host may show or log (compression, memory, the store), redacted
before it leaves, so a host writes one listener. A listener that raises is logged and
otherwise ignored: a status display must never break a turn.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_core.memory.calls import redacted

__all__ = ["EventListener", "SessionEvent", "emit"]

log = logging.getLogger("hermes_context.session")


@dataclass(frozen=True)
class SessionEvent:
    """``kind`` names what happened; ``data`` holds plain, redacted values.

    Kinds: the compressor's (``compression_started``, ``compression_finished``,
    ``compression_failed``, ``compression_blocked``, ``status``), the memory manager's
    (``recall_blocked``, ``provider_timeout``, ``provider_skipped``, ``provider_error``,
    ``tool_dropped``, ``sync_abandoned``), the background review's (``review_started``,
    ``review_action``, ``review_refused``, ``review_finished``, ``review_failed``,
    ``review_skipped``, ``review_abandoned``, ``review_consolidation``: docs/review.md), the
    @-references' (``reference_warning``), and the session's own: ``compaction_committed``,
    ``compaction_undone`` (docs/undo.md), ``session_switched`` (a child session continues,
    or ``back_to`` a parent after an undo), ``transcript_replaced`` (the host
    rewrote its history), ``overflow`` (the provider said the prompt was too long),
    ``images_stripped``, ``store_error``.
    """

    kind: str
    session_id: str
    data: Mapping[str, Any] = field(default_factory=dict)


EventListener = Callable[[SessionEvent], None]


def emit(
    listener: EventListener | None, kind: str, session_id: str, data: Mapping[str, Any]
) -> None:
    if listener is None:
        return
    try:
        listener(SessionEvent(kind, session_id, redacted(dict(data))))
    except Exception:
        log.warning("the host's on_event listener failed on %s", kind, exc_info=True)
