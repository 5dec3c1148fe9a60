"""The state our hermes-agent plugins share in one process: one ``Hermes`` per home and one
``Session`` per hermes-agent session id.

Why shared: hermes-agent builds the context engine and the memory provider as separate
objects (and deep-copies the engine for each agent), but both serve the same conversation, and
our store opens a conversation once per process. So both borrow the session from here, each
as a *holder*; the session closes when its last holder lets go. The memory provider learns
who the user is (``user_id`` in its ``initialize`` kwargs, from the gateway); the engine,
which is never told, asks here, so both act for the same user.

Where our state lives: ``$HERMES_CONTEXT_HOME`` when set, else ``<hermes home>/hermes-context``
(our ``config.yaml``, ``state.db``, ``memories/``), never hermes-agent's own files beside it.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_core import Hermes, Session, SessionError
from hermes_core.host.events import SessionEvent

__all__ = ["HOME_ENV", "HOST_DEFAULTS", "SUBDIR", "Runtime", "context_home", "runtime"]

log = logging.getLogger("hermes_context.hermes_agent")

HOME_ENV = "HERMES_CONTEXT_HOME"
SUBDIR = "hermes-context"


def context_home(hermes_home: str | os.PathLike[str] | None) -> Path:
    """Our home inside hermes-agent's (see the module docstring)."""
    override = os.environ.get(HOME_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    base = Path(hermes_home).expanduser() if hermes_home else _hermes_agent_home()
    return base / SUBDIR


def _hermes_agent_home() -> Path:
    raw = os.environ.get("HERMES_HOME", "").strip()
    return Path(raw).expanduser() if raw else Path.home() / ".hermes"


def clean_user(value: Any) -> str | None:
    """A platform user id as our ``user_id`` (None: the home's single local user)."""
    if value is None:
        return None
    text = str(value).strip()
    return text or None


#: Our defaults that differ inside hermes-agent (a value in our config.yaml still wins): a
#: gateway serves many users, so each gets their own MEMORY.md too; hermes-agent runs its own
#: background memory and skill reviews, so ours are off rather than doubling the cost.
HOST_DEFAULTS: dict[str, tuple[str, str, object]] = {
    "memory.per_user_memory": ("memory", "per_user_memory", True),
    "memory.nudge_interval": ("memory", "nudge_interval", 0),
    "memory.flush_min_turns": ("memory", "flush_min_turns", 0),
    "skills.creation_nudge_interval": ("skills", "creation_nudge_interval", 0),
}


def _host_defaults(host: Hermes) -> None:
    for dotted, (section, key, value) in HOST_DEFAULTS.items():
        if host.config.source_of(dotted).kind == "default":
            setattr(getattr(host.settings, section), key, value)


@dataclass
class _Entry:
    session: Session | None = None
    holders: set[str] = field(default_factory=set)
    committed: int = 0  # compactions committed to the store since it opened

    def on_event(self, event: SessionEvent) -> None:
        if event.kind == "compaction_committed":
            self.committed += 1


class Runtime:
    """Process-wide registry; every method is thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._hosts: dict[Path, Hermes] = {}
        self._sessions: dict[tuple[Path, str], _Entry] = {}
        self._users: dict[str, str | None] = {}
        #: a ``post_tool_call`` observer feeds our sessions' taint indexes (see ``observer``)
        self.observing = False

    def host(self, home: Path) -> Hermes:
        """The ``Hermes`` of ``home``, loaded once (its ``config.yaml`` when there is one)."""
        with self._lock:
            found = self._hosts.get(home)
            if found is None:
                home.mkdir(parents=True, exist_ok=True)
                config = home / "config.yaml"
                found = Hermes.from_config(config if config.exists() else {}, home=home)
                _host_defaults(found)
                self._hosts[home] = found
            return found

    def note_user(self, session_id: str, user_id: str | None) -> None:
        """The memory provider heard who the user of ``session_id`` is."""
        with self._lock:
            self._users[session_id] = user_id

    def user_of(self, session_id: str) -> str | None:
        with self._lock:
            return self._users.get(session_id)

    def acquire(
        self, home: Path, session_id: str, holder: str, *, user_id: str | None = None
    ) -> Session:
        """Open (or resume, or share) ``session_id`` for ``holder``."""
        with self._lock:
            if user_id is None:
                user_id = self._users.get(session_id)
            key = (home, session_id)
            entry = self._sessions.get(key)
            if entry is None:
                fresh = _Entry()
                host = self.host(home)
                fresh.session = host.session(session_id, user_id=user_id, on_event=fresh.on_event)
                entry = self._sessions[key] = fresh
            assert entry.session is not None
            held = entry.session.info.user_id
            if user_id is not None and held != user_id:
                raise SessionError(
                    f"session {session_id!r} is open for another user in this process; "
                    "a hermes-agent session id serves one user"
                )
            entry.holders.add(holder)
            return entry.session

    def sessions_named(self, session_id: str) -> list[Session]:
        """The open sessions of ``session_id`` (one per home that serves it)."""
        with self._lock:
            found = [e.session for (_, sid), e in self._sessions.items() if sid == session_id]
            return [s for s in found if s is not None]

    def open_session(self, home: Path, session_id: str) -> Session | None:
        """``session_id``'s session in ``home`` when a holder has it open (none is opened)."""
        with self._lock:
            entry = self._sessions.get((home, session_id))
            return entry.session if entry is not None else None

    def committed(self, home: Path, session_id: str) -> int:
        """Compactions committed for ``session_id`` since this process opened it."""
        with self._lock:
            entry = self._sessions.get((home, session_id))
            return entry.committed if entry is not None else 0

    def release(self, home: Path, session_id: str, holder: str) -> None:
        """``holder`` is done; the last one closes the session (its state is in the store)."""
        with self._lock:
            entry = self._sessions.get((home, session_id))
            if entry is None:
                return
            entry.holders.discard(holder)
            if entry.holders:
                return
            del self._sessions[(home, session_id)]
        try:
            if entry.session is not None:
                entry.session.close()
        except Exception as exc:  # noqa: BLE001 - a failing close must not end the host's turn
            log.error("hermes-context: closing session %s failed: %s", session_id, exc)

    def close_all(self) -> None:
        """Close every session and host (tests; a process exit needs nothing: all is stored)."""
        with self._lock:
            entries = list(self._sessions.values())
            hosts = list(self._hosts.values())
            self._sessions.clear()
            self._hosts.clear()
            self._users.clear()
        for entry in entries:
            if entry.session is not None:
                entry.session.close()
        for host in hosts:
            host.close()


_RUNTIME = Runtime()


def runtime() -> Runtime:
    """The process's registry."""
    return _RUNTIME
