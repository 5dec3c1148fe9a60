"""The four Mem0 tools offered to the model (OpenAI function schemas) and argument checks.

Arguments arrive from a model, so every check answers with a message the model can act on
(:class:`BadArguments`), never a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_core.provider_kit import function_tool

SEARCH = "mem0_search"
ADD = "mem0_add"
UPDATE = "mem0_update"
DELETE = "mem0_delete"
NAMES = frozenset({SEARCH, ADD, UPDATE, DELETE})
MAX_LIMIT = 50
MAX_CONTENT = 25_000


class BadArguments(ValueError):
    """A tool call's arguments are unusable; the message tells the model what to send."""


_ID = {"type": "string", "description": "The memory id, as returned by mem0_search."}
_TEXT = {"type": "string", "description": "The fact to remember, in one or two sentences."}


def schemas() -> list[dict[str, Any]]:
    """Tool schemas; every call is bound to the current user, so no user id is asked for."""
    return [
        function_tool(
            SEARCH,
            "Search the user's long-term memories (Mem0) for facts relevant to a query.",
            {
                "query": {"type": "string", "description": "What to look for."},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "description": "Most results to return (default: the configured top_k).",
                },
            },
            ["query"],
        ),
        function_tool(
            ADD, "Store a new long-term memory about the user.", {"content": _TEXT}, ["content"]
        ),
        function_tool(
            UPDATE,
            "Replace the text of one of the user's memories (find its id with mem0_search).",
            {"memory_id": _ID, "content": _TEXT},
            ["memory_id", "content"],
        ),
        function_tool(
            DELETE,
            "Delete one of the user's memories (find its id with mem0_search).",
            {"memory_id": _ID},
            ["memory_id"],
        ),
    ]


def text_argument(arguments: Mapping[str, Any], key: str, *, limit: int = MAX_CONTENT) -> str:
    value = arguments.get(key)
    if not isinstance(value, str) or not value.strip():
        raise BadArguments(f"'{key}' is required and must be a non-empty string")
    if len(value) > limit:
        raise BadArguments(f"'{key}' is {len(value)} characters; keep it under {limit}")
    return value.strip()


def limit_argument(arguments: Mapping[str, Any], default: int) -> int:
    value = arguments.get("limit", default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
        raise BadArguments(f"'limit' must be a whole number from 1 to {MAX_LIMIT}")
    return value


def check_known(arguments: Mapping[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(arguments) - allowed)
    if unknown:
        raise BadArguments(
            f"unknown argument(s) {', '.join(unknown)}; this tool takes "
            f"{', '.join(sorted(allowed))} (memories are always the current user's)"
        )
