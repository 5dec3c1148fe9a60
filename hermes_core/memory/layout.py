"""Where each target's file lives: the seed's layout, plus one directory per user id.

Why: one user's profile must never reach another user's prompt, and a user id comes from a
host (or a chat platform) and must never steer a path outside the home. Ids that are plainly
safe keep their name (readable on disk); anything else, including upper case (two ids that
differ only in case would share a directory on a case-insensitive file system), is hashed.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Final

from hermes_core.memory.entries import TARGET_FILES

__all__ = ["describe", "safe_user_id", "shared_target", "target_path", "validate_target"]

_PLAIN_ID: Final = re.compile(r"[a-z0-9][a-z0-9_@.-]{0,63}")


def safe_user_id(user_id: str) -> str:
    """A directory name for ``user_id`` that cannot escape ``users/`` or collide with another
    id: the id itself when it is short lower-case ``[a-z0-9_@.-]`` without ``..``, else
    ``_`` + 32 hex digits of its SHA-256 (a plain name never starts with ``_``)."""
    if not isinstance(user_id, str) or not user_id:
        raise ValueError(f"a user id must be a non-empty string, got {describe(user_id)}")
    if _PLAIN_ID.fullmatch(user_id) and ".." not in user_id:
        return user_id
    return "_" + hashlib.sha256(user_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def describe(value: object) -> str:
    """A short, safe rendering of a value a caller sent, for an error message (never the
    repr of a huge or odd object)."""
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:39] + "…")
    if value is None or isinstance(value, bool):
        return repr(value)
    return f"a {type(value).__name__}"


def validate_target(target: object) -> str | None:
    """An error message unless ``target`` is ``memory`` or ``user``."""
    if isinstance(target, str) and target in TARGET_FILES:
        return None
    return f"target must be 'memory' or 'user', got {describe(target)}."


def target_path(
    directory: Path, target: str, user_id: str | None = None, *, per_user_memory: bool = False
) -> Path:
    """The file of ``target``: ``USER.md`` (and with ``per_user_memory`` ``MEMORY.md``) under
    ``users/<safe id>/`` when there is a user id, else directly in ``directory``."""
    name = TARGET_FILES[target]
    if user_id is not None and (target == "user" or per_user_memory):
        return directory / "users" / safe_user_id(user_id) / name
    return directory / name


def shared_target(target: str, user_id: str | None, *, per_user_memory: bool = False) -> bool:
    """Whether a store for ``user_id`` keeps ``target`` in a file that other users share: the
    home's ``MEMORY.md`` when there is a user id and ``per_user_memory`` is off."""
    return user_id is not None and target == "memory" and not per_user_memory
