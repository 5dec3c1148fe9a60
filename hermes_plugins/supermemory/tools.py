"""The three model-facing tools: ``supermemory_store``, ``_search`` and ``_forget``.

Each handler is bound to one container tag by the caller and answers JSON text. Bad
arguments, missing records and backend failures become ``{"error": ...}`` results the
model can act on; nothing here raises.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hermes_core.provider_kit import function_tool
from hermes_plugins.supermemory.backend import BackendError, SupermemoryBackend
from hermes_plugins.supermemory.scope import valid_record_id

STORE = "supermemory_store"
SEARCH = "supermemory_search"
FORGET = "supermemory_forget"
TOOL_NAMES = frozenset({STORE, SEARCH, FORGET})

#: longest text the store tool accepts in one call
STORE_MAX_CHARS = 50_000
SEARCH_MAX_LIMIT = 20


def tool_schemas() -> list[dict[str, Any]]:
    """OpenAI function schemas for the three tools."""
    return [
        function_tool(
            STORE,
            "Save a fact about the user or their work to long-term memory (Supermemory) so it "
            "can be recalled in later conversations.",
            {"content": {"type": "string", "description": "The fact to remember, self-contained."}},
            ["content"],
        ),
        function_tool(
            SEARCH,
            "Search the user's long-term memory (Supermemory). Returns matching memories with "
            "the document_id needed to forget one.",
            {
                "query": {"type": "string", "description": "What to look for."},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": SEARCH_MAX_LIMIT,
                    "description": "Most results to return (default 5).",
                },
            },
            ["query"],
        ),
        function_tool(
            FORGET,
            "Delete one memory document of this user from long-term memory (Supermemory), by "
            "the document_id a search returned.",
            {"document_id": {"type": "string", "description": "The document_id to delete."}},
            ["document_id"],
        ),
    ]


def _json(payload: Mapping[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)


def _error(message: str) -> str:
    return _json({"error": message})


@dataclass(frozen=True)
class ToolCall:
    """One tool call bound to a container tag and session."""

    backend: SupermemoryBackend
    tag: str
    session_id: str
    default_limit: int
    on_failure: Callable[[BackendError], None]

    def run(self, name: str, arguments: Mapping[str, Any]) -> str:
        handlers = {STORE: self._store, SEARCH: self._search, FORGET: self._forget}
        if not isinstance(arguments, Mapping):
            return _error("arguments must be a JSON object")
        try:
            return handlers[name](arguments)
        except BackendError as exc:
            self.on_failure(exc)
            return _error(f"{exc}; the memory was not changed, try again later")

    def _store(self, arguments: Mapping[str, Any]) -> str:
        content = arguments.get("content")
        if not isinstance(content, str) or not content.strip():
            return _error("'content' must be a non-empty string: the fact to remember")
        if len(content) > STORE_MAX_CHARS:
            return _error(f"'content' is longer than {STORE_MAX_CHARS} characters; shorten it")
        metadata = {"session_id": self.session_id, "source": "tool"}
        document_id = self.backend.add(self.tag, content.strip(), metadata)
        return _json({"ok": True, "document_id": document_id})

    def _search(self, arguments: Mapping[str, Any]) -> str:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return _error("'query' must be a non-empty string")
        limit = arguments.get("limit", self.default_limit)
        if isinstance(limit, bool) or not isinstance(limit, int):
            return _error(f"'limit' must be a whole number from 1 to {SEARCH_MAX_LIMIT}")
        if not 1 <= limit <= SEARCH_MAX_LIMIT:
            return _error(f"'limit' must be from 1 to {SEARCH_MAX_LIMIT}")
        hits = self.backend.search(self.tag, query.strip(), limit)
        results = [
            {"id": hit.id, "document_id": hit.document_id, "text": hit.text, "score": hit.score}
            for hit in hits
        ]
        return _json({"results": results, "count": len(results)})

    def _forget(self, arguments: Mapping[str, Any]) -> str:
        document_id = arguments.get("document_id")
        if not valid_record_id(document_id):
            return _error(
                "'document_id' must be a document_id from supermemory_search "
                "(letters, digits, '_' or '-')"
            )
        assert isinstance(document_id, str)
        document = self.backend.get_document(self.tag, document_id)
        if document is None or document.owner != self.tag:
            return _error(f"no memory document '{document_id}' belongs to this user")
        if not self.backend.delete_document(self.tag, document_id):
            return _error(f"memory document '{document_id}' could not be deleted")
        return _json({"ok": True, "deleted": document_id})
