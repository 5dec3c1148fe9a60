"""The store's refusals that need no text: storage failures, threat hits, bad operations.

Why apart: :mod:`hermes_core.memory.store` keeps to the order of a write; these are the pure
answers it gives before (or instead of) touching the text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from hermes_core.errors import MemoryStoreError
from hermes_core.memory.documents import StorageUnavailable, UnsafeLocation
from hermes_core.memory.files import ReadOnlyFile
from hermes_core.memory.layout import describe
from hermes_core.memory.plan import failure
from hermes_core.types import Finding

__all__ = ["blocked_message", "check_operation", "numbered", "refusal", "threat"]

Result = dict[str, Any]
_ACTIONS: Final = ("add", "replace", "remove")


def blocked_message(pattern_id: str) -> str:
    """The refusal of a write that matched a threat pattern (spec 20 §5)."""
    return (
        f"Blocked: content matches threat pattern '{pattern_id}'. Memory is injected into the "
        "system prompt and must not carry injection or exfiltration payloads."
    )


def refusal(exc: MemoryStoreError) -> Result:
    """The refusal for a storage failure: a link out of the home, storage that cannot be
    reached, or text that cannot be read (never read as empty)."""
    if isinstance(exc, UnsafeLocation):
        return failure("unsafe_path", str(exc))
    if isinstance(exc, StorageUnavailable):
        return failure("unavailable", str(exc))
    if isinstance(exc, ReadOnlyFile):
        return failure("read_only_file", str(exc))
    return failure("unreadable", str(exc))


def threat(findings: Sequence[Finding]) -> Result:
    ids = list(dict.fromkeys(f.pattern_id for f in findings))
    return failure("threat", blocked_message(ids[0]), patterns=ids)


def numbered(n: int, many: bool) -> str:
    return f"operation {n}: " if many else ""


def check_operation(op: object) -> str | None:
    """What is wrong with one operation, or None."""
    if not isinstance(op, Mapping):
        return "an operation must be an object {action, content?, old_text?}."
    action = op.get("action")
    if not (isinstance(action, str) and action in _ACTIONS):
        return f"action must be one of {', '.join(_ACTIONS)}, got {describe(action)}."
    if action in ("add", "replace") and not isinstance(op.get("content"), str):
        return f"{action} needs content: a string with the fact to save."
    old_text = op.get("old_text")
    if action in ("replace", "remove") and not (isinstance(old_text, str) and old_text.strip()):
        return f"{action} needs old_text: a string quoting the entry to change."
    return None
