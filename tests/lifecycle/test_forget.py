"""``Hermes.forget_user`` on the default backends (SQLite sessions, file memory): plant a
token per place for two users, forget one, scan every byte of the home for both."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from forget_plant import home_bytes, plant, plant_shared, where

from hermes_core.errors import InvalidArgument
from hermes_core.host import Hermes
from hermes_core.markers import hookimpl


def _host(home: Path) -> Hermes:
    (home / "config.yaml").write_text("memory:\n  per_user_memory: true\n", encoding="utf-8")
    return Hermes.from_config(home / "config.yaml", home=home)


def _indexed(home: Path, word: str) -> int:
    with sqlite3.connect(home / "state.db") as conn:
        (n,) = conn.execute(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (f'"{word}"',)
        ).fetchone()
    return int(n)


def test_no_byte_of_the_forgotten_user_is_left(tmp_path: Path) -> None:
    with _host(tmp_path) as hermes:
        alice = plant(hermes, "alice")
        bob = plant(hermes, "bob")
        anon = plant(hermes, None)
        shared = plant_shared(hermes, "alice")
        before = home_bytes(tmp_path)
        assert all(where(before, t) for t in alice.values()), "a token was not planted"
        assert _indexed(tmp_path, alice["active"]) == 1
        report = hermes.forget_user("alice")
        after = home_bytes(tmp_path)
        assert _indexed(tmp_path, alice["active"]) == 0
        assert _indexed(tmp_path, bob["active"]) == 1
    assert {p: where(after, t) for p, t in alice.items() if where(after, t)} == {}
    assert b"alice" not in b"".join(after[p] for p in after if p.name.startswith("state.db"))
    for kept in (bob, anon):
        assert all(where(after, t) for t in kept.values()), "another user's byte was lost"
    assert where(after, shared)  # the shared entry is kept, and reported
    assert [e["preview"] for e in report.shared_entries] == [f"shared {shared}"]
    assert report.deleted["sessions"] == 1 and report.deleted["messages"] == 5
    assert report.deleted["staged writes"] == 1 and report.deleted["audit lines"] == 2
    # USER.md, MEMORY.md, a copy, a lock and a dates sidecar each
    assert report.deleted["memory files"] == 8
    assert not (tmp_path / "memories" / "users" / "alice").exists()
    assert report.complete, report.not_deleted


def test_the_anonymous_principal_is_named_and_touches_no_named_user(tmp_path: Path) -> None:
    with _host(tmp_path) as hermes:
        alice = plant(hermes, "alice")
        anon = plant(hermes, None)
        report = hermes.forget_user(None)
        after = home_bytes(tmp_path)
    assert report.user_id is None and report.deleted["sessions"] == 1
    assert [p for p in anon if where(after, anon[p])] == []
    # the dates sidecar names the entries by their sha256: it goes with USER.md
    assert not (tmp_path / "memories" / "USER.md.meta.json").exists()
    assert all(where(after, t) for t in alice.values())


@pytest.mark.parametrize("bad", ["", 5, b"alice"])
def test_a_bad_user_id_changes_nothing(tmp_path: Path, bad: Any) -> None:
    with _host(tmp_path) as hermes:
        alice = plant(hermes, "alice")
        before = home_bytes(tmp_path)
        with pytest.raises(InvalidArgument, match="nothing was deleted"):
            hermes.forget_user(bad)
        assert all(where(home_bytes(tmp_path), t) for t in alice.values())
        assert set(before) <= set(home_bytes(tmp_path))


class _Silent:
    """An external provider that keeps data but has no memory_forget hook."""

    external_memory_provider = True

    @hookimpl
    def memory_prefetch(self, query: str, session: Any) -> None:
        return None


class _Kept:
    """A plugin that keeps per-user rows in a dict and forgets them (or fails to)."""

    def __init__(self, fail: bool = False) -> None:
        self.rows = {"alice": ["a1", "a2"], "bob": ["b1"]}
        self.fail = fail

    @hookimpl
    def memory_forget(self, user_id: str | None) -> dict[str, int]:
        if self.fail:
            raise RuntimeError("service said 503; nothing was deleted")
        return {"memories": len(self.rows.pop(str(user_id), []))}


def test_providers_answer_fail_or_lack_the_hook(tmp_path: Path) -> None:
    with _host(tmp_path) as hermes:
        kept, broken = _Kept(), _Kept(fail=True)
        hermes.plugins.register(kept, name="kept")
        hermes.plugins.register(broken, name="broken")
        hermes.plugins.register(_Silent(), name="silent")
        report = hermes.forget_user("alice")
    assert report.providers["kept"] == {"memories": 2}
    assert kept.rows == {"bob": ["b1"]}
    assert broken.rows["alice"] == ["a1", "a2"]
    problems = "\n".join(report.not_deleted)
    assert "plugin 'broken' could not forget the user: service said 503" in problems
    assert "memory provider 'silent' has no memory_forget hook" in problems
    assert not report.complete
