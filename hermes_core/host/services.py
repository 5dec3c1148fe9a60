"""What a session needs of the host that opened it.

The session modules are typed against this protocol rather than :class:`Hermes` itself, so
they need not import ``host.hermes`` (which opens sessions): no import circle, even under
``TYPE_CHECKING``. :class:`Hermes` satisfies it; mypy checks that where sessions are opened.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hermes_core.config.settings import Settings
    from hermes_core.memory.calls import StuckCalls
    from hermes_core.memory.documents import MemoryDocuments
    from hermes_core.plugins import PluginHost
    from hermes_core.sessions.store import SessionStore


class SessionHost(Protocol):
    """The host's services a :class:`~hermes_core.host.session.Session` uses."""

    plugins: PluginHost
    stuck_calls: StuckCalls

    @property
    def settings(self) -> Settings: ...

    @property
    def home(self) -> Path: ...

    @property
    def session_store(self) -> SessionStore | None: ...

    def memory_documents(self, home: str | os.PathLike[str] | None = None) -> MemoryDocuments: ...

    def forget_session(self, session: Any) -> None: ...
