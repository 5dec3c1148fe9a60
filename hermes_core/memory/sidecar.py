"""The JSON sidecar beside a memory file (``MEMORY.md.meta.json``): its entries' dates.

Why a file of its own: the prompt reads ``MEMORY.md`` whole, so anything kept in it costs
tokens in every session; a sidecar costs nothing there. It is written under the memory
file's own lock, atomically (temp file and rename, like the file), just before the file, so
a crash between the two leaves dates ahead of the text, which the next write reconciles
(never text that looks appended by hand).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from hermes_core.errors import MemoryStoreError
from hermes_core.memory.files import atomic_write, read_text

__all__ = ["SIDECAR_SUFFIX", "read_sidecar", "remove_sidecar", "sidecar_path", "write_sidecar"]

log = logging.getLogger("hermes_context.memory")
SIDECAR_SUFFIX = ".meta.json"


def sidecar_path(real: Path) -> Path:
    """The sidecar of the memory file at ``real`` (its real path, links followed)."""
    return real.with_name(real.name + SIDECAR_SUFFIX)


def read_sidecar(real: Path) -> object:
    """The sidecar's JSON (None when missing). One that cannot be read or parsed is logged
    and read as None: dates are a help, and a write must not fail for them."""
    path = sidecar_path(real)
    try:
        text = read_text(path)
    except MemoryStoreError as exc:
        log.warning("memory dates left out (%s)", exc)
        return None
    if text is None:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        log.warning("memory dates in %s are not JSON (%s); they are rebuilt", path, exc)
        return None


def write_sidecar(real: Path, meta: object) -> None:
    """Replace the sidecar atomically (call under the memory file's lock)."""
    atomic_write(sidecar_path(real), json.dumps(meta, ensure_ascii=False, sort_keys=True))


def remove_sidecar(real: Path) -> None:
    """Drop the sidecar with its file (a reset): its dates belong to entries now gone."""
    sidecar_path(real).unlink(missing_ok=True)
