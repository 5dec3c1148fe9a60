"""Who a call is for: Honcho peer and session ids derived from the host's principal.

Honcho ids allow only letters, digits, ``_`` and ``-``. A user id outside that alphabet is
mapped to a readable prefix plus a hash of the original, so two different user ids can never
share a peer (``a.b`` and ``a_b`` stay apart) and the mapping is stable across restarts.
"""

from __future__ import annotations

import hashlib
import os
import re

from hermes_core import provider_kit
from hermes_core.types import SessionInfo
from hermes_plugins.honcho.settings import HonchoSettings

#: Ids kept as they are: no ``-``, which every hashed id holds (``prefix-digest``), so a user
#: can never choose an id equal to another user's hashed one.
_PLAIN = re.compile(r"^[A-Za-z0-9_]{1,64}$")
_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9_]+")
#: metadata key on every message we store: the user peer it belongs to
OWNER_KEY = "hermes_user"


def safe_id(raw: str) -> str:
    """``raw`` when it is a short id of letters, digits and ``_``, else a readable prefix plus
    a hash (which holds ``-``, so no plain id can equal it; ``--``, the separator in session
    keys, never survives either)."""
    if _PLAIN.match(raw):
        return raw
    prefix = _UNSAFE_CHARS.sub("_", raw)[:40].strip("_") or "id"
    digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]
    return f"{prefix}-{digest}"


def user_peer_id(session: SessionInfo, settings: HonchoSettings) -> str:
    """The Honcho peer for the session's principal (``peer_name`` when there is no user id).

    A user id that equals the assistant's peer gets a hashed suffix: a user must never read
    or write as the assistant.
    """
    if not session.user_id:
        return settings.peer_name
    peer = safe_id(provider_kit.principal(session, settings.peer_name))
    if peer in (settings.ai_peer, settings.peer_name):
        digest = hashlib.sha256(b"user:" + peer.encode()).hexdigest()[:16]
        peer = f"{peer}-{digest}"
    return peer


def session_key(
    session: SessionInfo, settings: HonchoSettings, *, directory: str | None = None
) -> str:
    """The Honcho session a turn goes to, always prefixed by the user's peer.

    The prefix keeps users apart even when two of them reuse one host session id.
    """
    peer = user_peer_id(session, settings)
    if settings.session_strategy == "global":
        scope = "global"
    elif settings.session_strategy == "per-directory":
        path = os.path.abspath(directory or os.getcwd())
        name = _UNSAFE_CHARS.sub("_", os.path.basename(path))[:40].strip("_") or "root"
        scope = f"dir-{name}-{hashlib.sha256(path.encode()).hexdigest()[:8]}"
    else:
        scope = safe_id(session.session_id)
    key = f"{peer}--{scope}"
    return key if len(key) <= 100 else safe_id(key)
