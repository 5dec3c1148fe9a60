"""The built-in ``session_store`` plugin opens this store at ``$HERMES_HOME/state.db``."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.errors import SessionError
from hermes_core.sessions.sqlite import SQLiteSessionStore
from hermes_core.testing import make_host


def test_the_host_opens_state_db_in_its_home(tmp_path: Path) -> None:
    host = make_host(tmp_path, builtins=None)
    store = host.session_store
    assert isinstance(store, SQLiteSessionStore)
    assert store.path == tmp_path / "state.db"
    assert host.session_store is store  # opened once
    store.open_session("s", user_id=None)
    host.close()
    with pytest.raises(SessionError, match="is closed"):
        store.messages("s")  # the host closed it


def test_sessions_db_path_is_relative_to_the_home(tmp_path: Path) -> None:
    host = make_host(tmp_path, {"sessions": {"db_path": "db/sessions.sqlite"}}, builtins=None)
    store = host.session_store
    assert isinstance(store, SQLiteSessionStore)
    assert store.path == tmp_path / "db" / "sessions.sqlite"
    host.close()
