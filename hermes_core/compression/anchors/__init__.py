"""The anchor ledger: paths, commands, URLs, errors, identifiers, asks, the user's rules and
the assistant's decisions, carried verbatim.

Why: LLM summaries drop the concrete handles an agent needs to carry on (measured elsewhere:
9.8% of file paths and 0.2% of commands survived). The ledger is extracted mechanically from
the compacted middle, rendered as a fixed section after the prose, parsed back out of the
previous summary and merged, so a bad summary cannot lose them. Every item is redacted, one
line and bounded; every scan is linear (inputs are windowed, regexes have bounded repetition).

What a bounded ledger keeps first: the user's rules in their own words, the files the session
wrote or edited, its failed commands with their error lines, and its newest command (then the
assistant's newest decisions and measured figures); when items no longer fit one per line, paths
are grouped by directory and commands by program and subcommand (labels say how to read the
groups back), and only then do the least recently seen go.

Layout of the package: the categories, labels and bounds of an item in :mod:`.items`; the
ledger type in :mod:`.ledger` and its render plan in :mod:`.render`; the recognisers (path,
URL, identifier, error line) and the section parser in :mod:`.recognisers`; what one message
gives in :mod:`.message`; the walk over a compacted middle in :mod:`.extract`; the growth guard
that merges the previous ledger back into a new summary in :mod:`.guard`.
"""

from __future__ import annotations

from hermes_core.compression.anchors.extract import extract_anchors
from hermes_core.compression.anchors.guard import guard_summary
from hermes_core.compression.anchors.ledger import (
    ANCHOR_HEADER,
    DEFAULT_LEDGER_CHARS,
    AnchorLedger,
    key_chars,
    ledger_bound,
)
from hermes_core.compression.anchors.recognisers import parse_anchor_section, split_summary

__all__ = [
    "ANCHOR_HEADER",
    "DEFAULT_LEDGER_CHARS",
    "AnchorLedger",
    "extract_anchors",
    "guard_summary",
    "key_chars",
    "ledger_bound",
    "parse_anchor_section",
    "split_summary",
]
