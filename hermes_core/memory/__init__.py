"""File memory: the bounded MEMORY.md / USER.md store, its snapshot, tool and write approval.

``hermes_core.memory.MemoryStore`` is the public entry point (see ``docs/memory.md``).
"""

from __future__ import annotations

from hermes_core.memory.entries import ENTRY_DELIMITER, parse_entries, render_entries
from hermes_core.memory.store import MemoryStore, blocked_message

__all__ = ["ENTRY_DELIMITER", "MemoryStore", "blocked_message", "parse_entries", "render_entries"]
