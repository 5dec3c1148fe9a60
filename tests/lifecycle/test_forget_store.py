"""The SQLite store's own forget: rows, the index (a stale one too) and the files' bytes."""

from __future__ import annotations

from pathlib import Path

from hermes_core.sessions.sqlite.store import SQLiteSessionStore


def _bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*") if p.is_file())


def _fill(store: SQLiteSessionStore, user: str | None, word: str) -> None:
    sid = f"s-{user}"
    store.open_session(sid, user_id=user)
    store.append_messages(sid, [{"role": "user", "content": f"note {word}"}])


def test_a_stale_index_is_rebuilt_too(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = SQLiteSessionStore(path, fts=True)
    _fill(store, "alice", "zqaliceword")
    _fill(store, "bob", "zqbobword")
    store.close()
    store = SQLiteSessionStore(path, fts=False)  # the index tables stay, unused
    try:
        assert store.forget_user("alice") == {"sessions": 1, "messages": 1}
        assert store.scrub() == []
        assert store.search("zqbobword", user_id="bob")
    finally:
        store.close()
    data = _bytes(path)
    assert b"zqaliceword" not in data and b"zqbobword" in data


def test_forgetting_nobody_changes_no_row(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "state.db")
    try:
        _fill(store, "bob", "zqbobword")
        _fill(store, None, "zqanonword")
        assert store.forget_user("alice") == {"sessions": 0, "messages": 0}
        assert store.scrub() == []
        assert [s.id for s in store.list_sessions(user_id="bob")] == ["s-bob"]
        assert [s.id for s in store.list_sessions(user_id=None)] == ["s-None"]
    finally:
        store.close()
