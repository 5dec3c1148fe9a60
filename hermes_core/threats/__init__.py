"""The built-in threat scanner: prompt injection, exfiltration, persistence, C2 and secrets.

Memory entries (MEMORY.md, USER.md) are injected into every future system prompt, so text
bound for them is scanned first; so are skills, summaries and recalled context, each in
its scope. The ``threat_scanner`` plugin (:mod:`hermes_plugins.threat_scanner`) answers
the ``scan_threat`` hook with :func:`scan`; other plugins can add their own findings.
See ``docs/threats.md``.
"""

from __future__ import annotations

from hermes_core.threats.catalog import PATTERN_IDS, patterns_for
from hermes_core.threats.messages import threat_message
from hermes_core.threats.rules import CATEGORIES, SCOPES
from hermes_core.threats.scan import MAX_SCAN_CHARS, scan

__all__ = [
    "CATEGORIES",
    "MAX_SCAN_CHARS",
    "PATTERN_IDS",
    "SCOPES",
    "patterns_for",
    "scan",
    "threat_message",
]
