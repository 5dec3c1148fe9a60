"""The principal of a call: which Supermemory namespace ("container tag") a user owns.

Supermemory 5.x scopes everything by a namespace that the SDK puts, unescaped, into the URL
path (``/ns/{namespace}/...``). So a tag must be built only from safe characters, two users
must never map to the same tag, and ids coming from the model must be checked before they
reach a path.
"""

from __future__ import annotations

import hashlib
import re

from hermes_core import provider_kit
from hermes_core.types import SessionInfo

#: metadata key naming the container a record was written for; checked on every read.
OWNER_KEY = "hermes_container"

_PLAIN_USER = re.compile(r"^[A-Za-z0-9]{1,48}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9]+")
_RECORD_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


def container_tag(prefix: str, user_id: str) -> str:
    """``<prefix>_<user>`` for plain ids; other ids get a cleaned part plus a hash.

    Plain ids (letters and digits only) are used as they are; anything else is cleaned and
    suffixed with ``-`` and 16 hex digits of its SHA-256. Plain suffixes never contain ``-``,
    so a crafted plain id cannot collide with a hashed one.
    """
    if _PLAIN_USER.match(user_id):
        return f"{prefix}_{user_id}"
    cleaned = _UNSAFE.sub("_", user_id).strip("_")[:32]
    digest = hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:16]
    return f"{prefix}_{cleaned}-{digest}" if cleaned else f"{prefix}_-{digest}"


def principal(session: SessionInfo, default_user: str) -> str:
    """The user every call is bound to: ``session.user_id`` or the configured default."""
    return provider_kit.principal(session, default_user)


def valid_record_id(value: object) -> bool:
    """Whether a model-supplied id is safe to put in a URL path segment."""
    return isinstance(value, str) and _RECORD_ID.match(value) is not None
