"""Supermemory (SDK 5.x) as the external memory provider: ``memory.provider: supermemory``.

Install with ``pip install '/path/to/hermes-context[supermemory]'``; see
``docs/providers/supermemory.md``.
"""

from __future__ import annotations

from hermes_plugins.supermemory.provider import SupermemoryProvider

__all__ = ["SupermemoryProvider"]
