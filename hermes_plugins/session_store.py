"""The default ``session_store`` plugin: the SQLite store at ``$HERMES_HOME/state.db``.

Thin on purpose: the store lives in :mod:`hermes_core.sessions.sqlite`. It answers last, so a
plugin that returns another backend (PostgreSQL for many hosts) takes its place.
"""

from __future__ import annotations

from pathlib import Path

from hermes_core.markers import hookimpl
from hermes_core.plugins import PluginContext
from hermes_core.sessions.retention import upkeep_on_open
from hermes_core.sessions.store import SessionStore


def db_path(home: Path, configured: str) -> Path:
    """``sessions.db_path`` (relative to the home unless absolute; empty: ``state.db``)."""
    path = Path(configured).expanduser() if configured else Path("state.db")
    return path if path.is_absolute() else home / path


class SessionStorePlugin:
    """Built-in ``session_store``: SQLite with WAL, FTS5 and a LIKE fallback."""

    def __init__(self, context: PluginContext) -> None:
        self.context = context

    @hookimpl(trylast=True)
    def session_store(self) -> SessionStore | None:
        from hermes_core.sessions.sqlite import SQLiteSessionStore

        settings = self.context.settings.sessions
        if settings.backend != "sqlite":
            return None  # another backend's plugin answers (never a silent fallback here)
        store = SQLiteSessionStore(db_path(self.context.home, settings.db_path))
        upkeep_on_open(store, settings.retention)
        return store
