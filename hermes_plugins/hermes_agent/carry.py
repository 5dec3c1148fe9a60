"""A parent session's taint index carried into the child hermes-agent moves the conversation to.

Why: hermes-agent's rotating compaction (``compression.in_place: false``), ``/branch`` and
``/resume`` give the live conversation a new session id; our plugins then open a fresh
``Session`` for it, with an empty taint index, while the model still has the page it read
before the switch in its context. A write copying that page must still be held, so the
child starts with everything the parent had seen (the index never shrinks). Only a reset
(``/new``, ``/reset``: a new conversation) starts clean.
"""

from __future__ import annotations

from hermes_core.provenance import TaintIndex

__all__ = ["carry_taint"]


def carry_taint(parent: TaintIndex, child: TaintIndex) -> None:
    """Add what ``parent`` has seen to ``child`` (``child``'s own entries stay, first seen
    wins); a full or blind parent makes the child full or blind too."""
    if parent is child:
        return
    origin_of: dict[int, int] = {}
    for number, (kind, tool) in enumerate(parent.origins):
        if (kind, tool) not in child.origins:
            child.add_untrusted(" ", kind, tool)  # registers the origin, indexes nothing
        if (kind, tool) in child.origins:
            origin_of[number] = child.origins.index((kind, tool))
    fallback = origin_of.get(0, 0)
    for gram, origin in parent.untrusted.items():
        child.untrusted.setdefault(gram, origin_of.get(origin, fallback))
    for mark, origin in parent.marks.items():
        child.marks.setdefault(mark, origin_of.get(origin, fallback))
    child.trusted.update(parent.trusted)
    child.trusted_marks.update(parent.trusted_marks)
    for target, words in parent.written.items():
        child.written.setdefault(target, words)
    child.blind = child.blind or parent.blind
    child.full = child.full or parent.full or len(child) >= child.cap
