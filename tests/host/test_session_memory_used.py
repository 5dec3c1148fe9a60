"""Issue 28: an entry's ``last_used`` follows a recall. The provider's prefetch block or a
``session_search`` / ``session_recall`` answer that holds an entry of the user's own blocks
(its words, at least four) marks that entry used, once a turn, through the dated write path;
nothing is written when nothing matched, and another user's entries are never marked."""

from __future__ import annotations

from pathlib import Path

from host_support import RecallPlugin, assistant, make_hermes, user

from hermes_core.memory import MemoryStore
from hermes_core.memory.dates import EntryDates
from hermes_core.testing import registered

DEPLOY = "The user deploys on Fridays"
SHORT = "likes tea"


def _dates(
    home: Path, target: str = "memory", user_id: str | None = None
) -> dict[str, EntryDates | None]:
    store = MemoryStore(home / "memories", scanner=lambda text: [], user_id=user_id)
    return dict(store.dated(target))


def test_a_recalled_entry_is_marked_used_once_a_turn_and_nothing_else(tmp_path: Path) -> None:
    shared = MemoryStore(tmp_path / "memories", scanner=lambda text: [])
    for entry in (DEPLOY, SHORT, "Builds run with make and ninja"):
        assert shared.add("memory", entry)["success"]
    bob = MemoryStore(tmp_path / "memories", scanner=lambda text: [], user_id="bob")
    assert bob.add("user", DEPLOY)["success"]  # bob's own copy of the same words
    sidecar = tmp_path / "memories" / "MEMORY.md.meta.json"
    with make_hermes(tmp_path) as host:
        plugin = RecallPlugin(f"- {DEPLOY.upper()}.\n- The user {SHORT}")
        with registered(host, plugin, "recall"):
            session = host.session("s1", user_id="alice")
            messages = [user("when do we deploy?")]
            session.prepare(messages)
            dated = _dates(tmp_path)
            assert dated[DEPLOY] is not None and dated[DEPLOY].last_used is not None
            assert dated[SHORT] is not None and dated[SHORT].last_used is None  # too short
            assert dated["Builds run with make and ninja"].last_used is None  # type: ignore[union-attr]
            assert _dates(tmp_path, "user", "bob")[DEPLOY].last_used is None  # type: ignore[union-attr]
            # the same turn: a search answer holding the entry writes nothing again
            before = sidecar.stat().st_mtime_ns, sidecar.read_bytes()
            session.handle_tool_call("session_search", {"query": "Fridays"})
            assert (sidecar.stat().st_mtime_ns, sidecar.read_bytes()) == before
            messages.append(assistant("Fridays."))
            session.end_turn(messages)
            plugin.recall = "Nothing stored about that."  # the next turn: nothing matches
            messages.append(user("and the build?"))
            session.prepare(messages)
            assert (sidecar.stat().st_mtime_ns, sidecar.read_bytes()) == before


def test_a_session_search_hit_marks_the_entry_it_brings_back(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memories", scanner=lambda text: [])
    assert store.add("memory", "Builds run with make and ninja")["success"]
    with make_hermes(tmp_path) as host:
        first = host.session("old", user_id="alice")
        messages = [user("how do builds run here?")]
        first.prepare(messages)
        messages.append(assistant("Builds run with make and ninja, as noted."))
        first.end_turn(messages)
        first.close()
        assert _dates(tmp_path)["Builds run with make and ninja"].last_used is None  # type: ignore[union-attr]
        session = host.session("new", user_id="alice")
        session.prepare([user("what about builds?")])
        answer = session.handle_tool_call("session_search", {"query": "ninja"})
        assert "make and >>ninja<<" in answer  # the hit, marked: still the entry's words
        used = _dates(tmp_path)["Builds run with make and ninja"]
        assert used is not None and used.last_used is not None
