"""Threat screening of what an @-reference attaches, before the model reads it.

Why: an attachment is text someone else may have written (a file of a cloned repository, a
commit message, a web page), and it reaches the model beside the user's own words. Like
recalled text and session excerpts, it is scanned in the ``context`` scope through the
``scan_threat`` hook (the host passes every loaded scanner; alone, the built-in one), and
text that matches is withheld with a warning instead of attached. Long text is read in
overlapping windows, so no part of it goes unread (the scanner reads 64 KiB per call), and a
scanner that raises counts as a finding: screening fails closed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

from hermes_core.redact import redact
from hermes_core.types import SCAN_OVERLAP, SCAN_WINDOW, Finding, ScanFn, scan_windows

__all__ = [
    "OVERLAP",
    "WINDOW",
    "Scan",
    "context_scan",
    "flagged",
    "screened_warnings",
    "windows",
]

log = logging.getLogger("hermes_context.references")

Scan = ScanFn
WINDOW: Final = SCAN_WINDOW
OVERLAP: Final = SCAN_OVERLAP
windows = scan_windows


def context_scan() -> Scan:
    """The built-in scanner in the ``context`` scope (a session passes the hook instead)."""
    from hermes_core.threats import scan

    return lambda text: scan(text, "context")


def flagged(scan: Scan, text: str) -> list[str]:
    """The pattern ids ``scan`` reports anywhere in ``text``, each once, in order found."""
    ids: dict[str, None] = {}
    for piece in windows(text):
        try:
            hits = list(scan(piece))
        except Exception as exc:  # noqa: BLE001 - fail closed, whatever the scanner did
            log.warning(
                "the reference threat scan failed: %s: %s", type(exc).__name__, redact(str(exc))
            )
            hits = [
                Finding("scanner_failed", "scanner", f"the scanner raised {type(exc).__name__}")
            ]
        ids.update(dict.fromkeys(hit.pattern_id for hit in hits))
    return list(ids)


_WITHHELD_ONE: Final = (
    "a warning was withheld from you: its text matched the threat scanner ({ids}), so it may "
    "quote words a server or page chose; the user sees it"
)
_WITHHELD_ALL: Final = (
    "the warnings were withheld from you: read together they matched the threat scanner "
    "({ids}); the user sees them"
)


def screened_warnings(
    warnings: list[str], scan: Scan, render: Callable[[list[str]], str]
) -> list[str]:
    """The warnings as the model may read them. Why: a refusal can quote what a server
    chose (a media type, a redirect target, an error), so the block is screened as
    ``render`` shows it to the model: each warning that matches is replaced by a notice,
    and if the block still matches read together, all of them are."""
    if not warnings or not (ids := flagged(scan, render(warnings))):
        return warnings
    kept = []
    for warning in warnings:
        found = flagged(scan, render([warning]))
        kept.append(_WITHHELD_ONE.format(ids=", ".join(found)) if found else warning)
    if again := flagged(scan, render(kept)):
        return [_WITHHELD_ALL.format(ids=", ".join(again or ids))]
    return kept
