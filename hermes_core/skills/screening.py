"""Threat screening of skill text, before any of it reaches the disk or a prompt.

Why windows: a SKILL.md may hold 100,000 characters and a support file 1 MiB, but the
strict scanner reads at most 64 KiB and calls anything longer a finding. So long text is
scanned in overlapping windows (every payload shorter than the overlap lies whole in one
of them). A scanner that raises counts as a finding: screening fails closed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Final

from hermes_core.types import SCAN_OVERLAP, SCAN_WINDOW, Finding, ScanFn, scan_windows

__all__ = ["OVERLAP", "WINDOW", "Scan", "blocked_message", "default_scan", "findings", "windows"]

log = logging.getLogger("hermes_context.skills")

Scan = ScanFn
WINDOW: Final = SCAN_WINDOW
OVERLAP: Final = SCAN_OVERLAP
windows = scan_windows


def default_scan() -> Scan:
    """The built-in strict scanner (the host passes every plugin's instead)."""
    from hermes_core.threats import scan

    return lambda text: scan(text, "strict")


def findings(scan: Scan, texts: Iterable[str]) -> list[Finding]:
    """Every finding in ``texts``, one per pattern id."""
    found: dict[str, Finding] = {}
    for text in texts:
        for piece in windows(text):
            try:
                hits = list(scan(piece))
            except Exception as exc:  # noqa: BLE001 - fail closed, whatever the scanner did
                log.warning("the skill threat scanner failed: %s: %s", type(exc).__name__, exc)
                hits = [Finding("scanner_failed", "scanner", f"the scanner raised {exc!r}")]
            for hit in hits:
                found.setdefault(hit.pattern_id, hit)
    return list(found.values())


def blocked_message(pattern_ids: Sequence[str]) -> str:
    """The refusal of a write that matched a threat pattern (nothing was written)."""
    return (
        f"Blocked: content matches threat pattern '{pattern_ids[0]}'. Skills are loaded into "
        "the agent's context and must not carry injection or exfiltration payloads. Nothing "
        "was written."
    )
