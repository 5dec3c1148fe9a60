"""The principal of a call: which Supermemory namespace ("container tag") a user owns.

Supermemory 5.x scopes everything by a namespace that the SDK puts, unescaped, into the URL
path (``/ns/{namespace}/...``). So a tag must be built only from safe characters, two users
must never map to the same tag, and ids coming from the model must be checked before they
reach a path. The user part is :func:`hermes_core.provider_kit.principal`, which gives
exactly that: ``[a-z0-9_-]`` only, injective, at most 59 characters.
"""

from __future__ import annotations

import re

from hermes_core import provider_kit
from hermes_core.types import SessionInfo

#: metadata key naming the container a record was written for; checked on every read.
OWNER_KEY = "hermes_container"

_RECORD_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


def container_tag(prefix: str, principal_id: str) -> str:
    """``<prefix>_<principal>``: ``hermes_u-alice``, ``hermes_u_bob_<hash>``, ``hermes_default``.

    ``principal_id`` is what :func:`principal` gives (already backend-safe and injective), and
    ``prefix`` is the one configured ``container_tag``, so different principals never share a
    tag."""
    return f"{prefix}_{principal_id}"


def principal(session: SessionInfo, default_user: str) -> str:
    """The canonical principal every call is bound to (``provider_kit.principal``): the
    session's user id (``u-alice``) or the configured ``default_user``; ``""`` is refused."""
    return provider_kit.principal(session, default_user)


def valid_record_id(value: object) -> bool:
    """Whether a model-supplied id is safe to put in a URL path segment."""
    return isinstance(value, str) and _RECORD_ID.fullmatch(value) is not None
