"""Who a call is for: Honcho peer and session ids derived from the host's principal.

Honcho ids allow only letters, digits, ``_`` and ``-`` (at most 100). The user's peer is
:func:`hermes_core.provider_kit.principal`: ``u-alice`` for ``alice``, ``u_<hint>_<hash>``
for anything else, ``peer_name`` for a session without a user id. A host session id is
mapped the same way (``s-chat-42``, ``s_<hint>_<hash>``), so two different ids never share a
Honcho peer or session and the mapping is stable across restarts and versions.
"""

from __future__ import annotations

import hashlib
import os
import re

from hermes_core import provider_kit
from hermes_core.types import SessionInfo
from hermes_plugins.honcho.settings import HonchoSettings

_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9_]+")
#: the longest session key Honcho takes; longer keys are hashed (kind ``k``)
_MAX_KEY = 100
#: metadata key on every message we store: the user peer it belongs to
OWNER_KEY = "hermes_user"


def user_peer_id(session: SessionInfo, settings: HonchoSettings) -> str:
    """The Honcho peer for the session's principal (``peer_name`` when there is no user id).

    Never ``ai_peer``: the settings refuse an ``ai_peer`` a principal could take. Raises
    :class:`~hermes_core.provider_kit.InvalidPrincipal` for the empty user id.
    """
    return provider_kit.principal(session, settings.peer_name)


def session_key(
    session: SessionInfo, settings: HonchoSettings, *, directory: str | None = None
) -> str:
    """The Honcho session a turn goes to: ``<peer>--<scope>``, always led by the user's peer.

    The prefix keeps users apart even when two of them reuse one host session id; neither
    part ever holds ``--``, so a key names one (peer, scope) pair. A key longer than Honcho's
    100 characters is hashed (``k_<hint>_<hash>``, which holds no ``--``).
    """
    peer = user_peer_id(session, settings)
    if settings.session_strategy == "global":
        scope = "global"
    elif settings.session_strategy == "per-directory":
        path = os.path.abspath(directory or os.getcwd())
        name = _UNSAFE_CHARS.sub("_", os.path.basename(path))[:40].strip("_") or "root"
        scope = f"dir-{name}-{hashlib.sha256(path.encode()).hexdigest()[:8]}"
    else:
        scope = provider_kit.canonical_id(session.session_id, provider_kit.SESSION_KIND)
    key = f"{peer}--{scope}"
    return key if len(key) <= _MAX_KEY else provider_kit.canonical_id(key, "k")
