"""Keyword recall in SQLite: the smallest complete external memory provider.

Every call is bound to the session's user id, mapped by ``provider_kit.principal`` to its
canonical form (distinct ids never share rows; ``""`` is refused); a tool can only touch that
user's rows (the owner is checked in the same SQL statement). Recall returns plain lines; the
core scans and fences them.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Mapping
from typing import Any

from hermes_core import ConfigError, hookimpl
from hermes_core.plugins import PluginContext
from hermes_core.provider_kit import InvalidPrincipal, principal
from hermes_core.types import SessionInfo, Turn

__all__ = ["KeywordMemoryProvider"]

_WORD = re.compile(r"\w{3,}")
_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "keyword_memory_search",
            "description": "Search what you remember about this user by keywords.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "keyword_memory_forget",
            "description": "Forget a memory by its id (from keyword_memory_search).",
            "parameters": {
                "type": "object",
                "properties": {"id": {"type": "integer"}},
                "required": ["id"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "keyword_memory_update",
            "description": "Replace the text of a memory by its id.",
            "parameters": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "text": {"type": "string"}},
                "required": ["id", "text"],
            },
        },
    },
]


_NAMES = frozenset(tool["function"]["name"] for tool in _TOOLS)


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


class KeywordMemoryProvider:
    """The plugin object: built once per host with its ``plugin_config.keyword_memory``."""

    external_memory_provider = True

    def __init__(self, context: PluginContext) -> None:
        unknown = set(context.config) - {"max_results"}
        if unknown:
            raise ConfigError(f"plugin_config.keyword_memory: unknown key {sorted(unknown)[0]!r}")
        self.max_results = int(context.config.get("max_results", 5))
        self._db = sqlite3.connect(context.home / "keyword_memory.db", check_same_thread=False)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS memories (id INTEGER PRIMARY KEY, user TEXT, text TEXT)"
        )
        self._lock = threading.Lock()

    @staticmethod
    def _user(session: SessionInfo) -> str:
        # The canonical principal: "u-alice" for "alice", "u_<hint>_<hash>" for any other id
        # (so "bob", "Bob" and "bob " never share rows), "default" without a user id; the
        # empty user id raises InvalidPrincipal (it is not the anonymous principal).
        return principal(session, "default")

    def _search(self, user: str, query: str) -> list[tuple[int, str]]:
        wanted = _words(query)
        with self._lock:
            rows = self._db.execute(
                "SELECT id, text FROM memories WHERE user = ? ORDER BY id DESC", (user,)
            ).fetchall()
        hits = [(i, t) for i, t in rows if wanted & _words(t)]
        return hits[: self.max_results]

    @hookimpl
    def memory_prefetch(self, query: str, session: SessionInfo) -> str | None:
        hits = self._search(self._user(session), query)
        return "\n".join(f"- {text}" for _, text in hits) or None

    @hookimpl
    def memory_sync(self, turn: Turn, session: SessionInfo) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO memories (user, text) VALUES (?, ?)",
                (self._user(session), turn.user[:2000]),
            )

    @hookimpl
    def memory_tools(self, session: SessionInfo) -> list[dict[str, Any]]:
        return _TOOLS

    @hookimpl
    def memory_handle_tool(
        self, session: SessionInfo, name: str, arguments: Mapping[str, Any]
    ) -> str | None:
        if name not in _NAMES:
            return None
        try:
            user = self._user(session)
        except InvalidPrincipal as exc:
            return json.dumps({"error": str(exc)})
        if name == "keyword_memory_search":
            hits = self._search(user, str(arguments.get("query", "")))
            return json.dumps({"results": [{"id": i, "text": t} for i, t in hits]})
        memory_id = arguments.get("id")
        if not isinstance(memory_id, int):
            return json.dumps({"error": "id must be an integer from keyword_memory_search"})
        with self._lock, self._db:
            if name == "keyword_memory_forget":
                cursor = self._db.execute(
                    "DELETE FROM memories WHERE id = ? AND user = ?", (memory_id, user)
                )
            else:
                cursor = self._db.execute(
                    "UPDATE memories SET text = ? WHERE id = ? AND user = ?",
                    (str(arguments.get("text", "")), memory_id, user),
                )
        if cursor.rowcount == 0:  # not there, or another user's: the same answer
            return json.dumps({"error": f"no memory {memory_id} for this user"})
        return json.dumps({"success": True})

    @hookimpl
    def memory_shutdown(self) -> None:
        with self._lock:
            self._db.close()
