"""The four RetainDB tools the model may call, each bound to one principal.

``retaindb_forget`` fetches the record first and checks the server says it belongs to this
user and project before deleting: an id copied from another user's conversation is refused.
Bad arguments and backend failures come back as JSON errors the model can act on.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from hermes_core.provider_kit import function_tool
from hermes_plugins.retaindb.client import RetainDBClient, RetainDBError
from hermes_plugins.retaindb.formatting import owned, tool_record
from hermes_plugins.retaindb.settings import RetainDBSettings

MAX_CONTENT_CHARS = 25_000
MAX_LIMIT = 50


TOOL_SCHEMAS: list[dict[str, Any]] = [
    function_tool(
        "retaindb_search",
        "Search the user's long-term memories in RetainDB by meaning; returns ids and text.",
        {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
        },
        ["query"],
    ),
    function_tool(
        "retaindb_remember",
        "Store one durable fact about the user or their work in RetainDB.",
        {"content": {"type": "string", "description": "The fact, in one or two sentences."}},
        ["content"],
    ),
    function_tool(
        "retaindb_forget",
        "Delete one of the user's memories by the id retaindb_search returned.",
        {"id": {"type": "string", "description": "The memory id."}},
        ["id"],
    ),
    function_tool(
        "retaindb_profile",
        "What RetainDB knows about the user overall (a profile summary).",
        {},
        [],
    ),
]
TOOL_NAMES = frozenset(schema["function"]["name"] for schema in TOOL_SCHEMAS)


def _error(message: str, **extra: Any) -> str:
    return json.dumps({"ok": False, "error": message, **extra}, ensure_ascii=False)


def _ok(**fields: Any) -> str:
    return json.dumps({"ok": True, **fields}, ensure_ascii=False)


class RetainDBTools:
    """Runs the tools for one provider; every method takes the principal explicitly."""

    def __init__(self, client: RetainDBClient, settings: RetainDBSettings) -> None:
        self._client = client
        self._settings = settings

    def handle(self, user_id: str, session_id: str, name: str, args: Mapping[str, Any]) -> str:
        try:
            if name == "retaindb_search":
                return self._search(user_id, args)
            if name == "retaindb_remember":
                return self._remember(user_id, session_id, args)
            if name == "retaindb_forget":
                return self._forget(user_id, args)
            return self._profile(user_id)
        except RetainDBError as exc:
            hint = "try again later" if exc.retryable else "check the provider's configuration"
            return _error(f"{exc}; {hint}", retryable=exc.retryable)

    def _search(self, user_id: str, args: Mapping[str, Any]) -> str:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return _error("'query' must be a non-empty string")
        limit = args.get("limit", self._settings.top_k)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            return _error(f"'limit' must be a whole number from 1 to {MAX_LIMIT}")
        found = self._client.search(user_id, query, limit=limit)
        mine = owned(found, user_id, self._settings.project)
        return _ok(results=[tool_record(record) for record in mine])

    def _remember(self, user_id: str, session_id: str, args: Mapping[str, Any]) -> str:
        content = args.get("content")
        if not isinstance(content, str) or not content.strip():
            return _error("'content' must be a non-empty string")
        if len(content) > MAX_CONTENT_CHARS:
            return _error(f"'content' is longer than {MAX_CONTENT_CHARS} characters; shorten it")
        record = self._client.remember(
            user_id,
            content.strip(),
            idempotency_key=uuid.uuid4().hex,
            session_id=session_id,
            metadata={"source": "tool"},
        )
        return _ok(id=str(record["id"]))

    def _forget(self, user_id: str, args: Mapping[str, Any]) -> str:
        memory_id = args.get("id")
        if isinstance(memory_id, int) and not isinstance(memory_id, bool):
            memory_id = str(memory_id)
        if not isinstance(memory_id, str) or not memory_id.strip():
            return _error("'id' must be the id of a memory returned by retaindb_search")
        memory_id = memory_id.strip()
        try:
            record = self._client.get(user_id, memory_id)
        except ValueError:
            return _error("'id' is not a valid memory id")
        if record is None or not owned([record], user_id, self._settings.project):
            # The same answer for "absent" and "someone else's": no probing other users' ids.
            return _error(f"no memory with id {memory_id!r} for this user")
        self._client.delete(user_id, memory_id)
        return _ok(deleted=memory_id)

    def _profile(self, user_id: str) -> str:
        profile = self._client.profile(user_id)
        if profile.get("user_id", user_id) != user_id:
            return _error("RetainDB answered a profile for another user; refusing to show it")
        return _ok(profile=profile)
