"""File memory: the bounded MEMORY.md / USER.md store, its snapshot, tool and write approval.

``hermes_core.memory.MemoryStore`` is the public entry point (see ``docs/memory.md``). The
names load on first use (PEP 562): the compression path imports ``memory.calls`` alone and
must not pay for the store, its audit trail and provenance.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_core.memory.entries import ENTRY_DELIMITER, parse_entries, render_entries
    from hermes_core.memory.store import MemoryStore, blocked_message

__all__ = ["ENTRY_DELIMITER", "MemoryStore", "blocked_message", "parse_entries", "render_entries"]

_LAZY = {
    "ENTRY_DELIMITER": "hermes_core.memory.entries",
    "parse_entries": "hermes_core.memory.entries",
    "render_entries": "hermes_core.memory.entries",
    "MemoryStore": "hermes_core.memory.store",
    "blocked_message": "hermes_core.memory.store",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes_core.memory' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
