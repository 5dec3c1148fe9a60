"""The tools Honcho offers the model: schemas and one dispatcher.

Arguments come from a model, so every one is checked and a bad call is answered with a JSON
error that says what to send instead; nothing here raises for bad input.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from hermes_core.provider_kit import function_tool
from hermes_plugins.honcho.backend import HonchoBackend, NotYours
from hermes_plugins.honcho.formatting import query_terms

PREFIX = "honcho_"
MAX_CARD_ITEMS = 40
MAX_CONTENT_CHARS = 4_000
_HONCHO_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")


def _schema(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    return function_tool(PREFIX + name, description, properties, required)


_STR = {"type": "string"}
SCHEMAS: tuple[dict[str, Any], ...] = (
    _schema(
        "search",
        "Search what Honcho remembers about the user: conclusions and earlier messages. "
        "Returns records with ids usable by honcho_forget and honcho_conclude(replaces=...).",
        {"query": _STR, "limit": {"type": "integer", "minimum": 1, "maximum": 50}},
        ["query"],
    ),
    _schema(
        "profile",
        "Read the user's profile card (action 'read') or replace it (action 'update' with "
        "'card', a list of short facts).",
        {
            "action": {"type": "string", "enum": ["read", "update"]},
            "card": {"type": "array", "items": _STR},
        },
        ["action"],
    ),
    _schema(
        "context",
        "What Honcho has concluded about the user, optionally focused on a query.",
        {"query": _STR},
        [],
    ),
    _schema(
        "conclude",
        "Record a lasting fact about the user. With 'replaces' (a record id from "
        "honcho_search) the old record is removed, which is how a fact is corrected.",
        {"content": _STR, "replaces": _STR},
        ["content"],
    ),
    _schema(
        "forget",
        "Forget one record of the user's, by the id honcho_search returned.",
        {"id": _STR},
        ["id"],
    ),
)
TOOL_NAMES = frozenset(schema["function"]["name"] for schema in SCHEMAS)


def _error(message: str) -> str:
    return json.dumps({"ok": False, "error": message}, ensure_ascii=False)


def _ok(**fields: Any) -> str:
    return json.dumps({"ok": True, **fields}, ensure_ascii=False)


class BadArguments(ValueError):
    """An argument the model can fix; the message says how."""


def _text(arguments: Mapping[str, Any], key: str, *, required: bool = True) -> str | None:
    value = arguments.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise BadArguments(f"'{key}' must be a non-empty string")
    if len(value) > MAX_CONTENT_CHARS:
        raise BadArguments(f"'{key}' is longer than {MAX_CONTENT_CHARS} characters; shorten it")
    return value.strip()


class ToolRunner:
    """Runs one tool call for one user peer against the backend."""

    def __init__(self, backend: HonchoBackend) -> None:
        self.backend = backend
        self._handlers: dict[str, Callable[[str, Mapping[str, Any]], str]] = {
            "honcho_search": self._search,
            "honcho_profile": self._profile,
            "honcho_context": self._context,
            "honcho_conclude": self._conclude,
            "honcho_forget": self._forget,
        }

    def run(self, user_peer: str, name: str, arguments: Mapping[str, Any]) -> str:
        handler = self._handlers[name]
        if not isinstance(arguments, Mapping):
            return _error("arguments must be a JSON object")
        unknown = sorted(set(arguments) - _allowed(name))
        if unknown:
            return _error(f"unknown argument(s) {', '.join(unknown)} for {name}")
        try:
            return handler(user_peer, arguments)
        except BadArguments as exc:
            return _error(str(exc))
        except NotYours:
            return _error("no such record for this user; use an id from honcho_search")

    def _search(self, user_peer: str, arguments: Mapping[str, Any]) -> str:
        query = _text(arguments, "query") or ""
        limit = arguments.get("limit", self.backend.settings.search_limit)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 50:
            raise BadArguments("'limit' must be a whole number from 1 to 50")
        terms = query_terms(query)
        records = self.backend.search(user_peer, query, limit)
        return _ok(results=[record.to_dict(terms) for record in records])

    def _profile(self, user_peer: str, arguments: Mapping[str, Any]) -> str:
        action = arguments.get("action")
        if action == "read":
            return _ok(card=self.backend.get_card(user_peer))
        if action != "update":
            raise BadArguments("'action' must be 'read' or 'update'")
        card = arguments.get("card")
        if (
            not isinstance(card, list)
            or not all(isinstance(item, str) and item.strip() for item in card)
            or len(card) > MAX_CARD_ITEMS
        ):
            raise BadArguments(
                f"'card' must be a list of at most {MAX_CARD_ITEMS} non-empty strings"
            )
        return _ok(card=self.backend.set_card(user_peer, [item.strip() for item in card]))

    def _context(self, user_peer: str, arguments: Mapping[str, Any]) -> str:
        query = _text(arguments, "query", required=False)
        return _ok(**self.backend.context(user_peer, query))

    def _conclude(self, user_peer: str, arguments: Mapping[str, Any]) -> str:
        content = _text(arguments, "content") or ""
        replaces = _text(arguments, "replaces", required=False)
        if replaces is not None:
            _check_id(replaces)
            # ownership first: a refused id must not leave a new record behind
            self.backend.forget(user_peer, replaces)
        record_id = self.backend.conclude(user_peer, content)
        return _ok(id=record_id, replaced=replaces)

    def _forget(self, user_peer: str, arguments: Mapping[str, Any]) -> str:
        record_id = _text(arguments, "id") or ""
        _check_id(record_id)
        return _ok(id=record_id, status=self.backend.forget(user_peer, record_id))


def _check_id(record_id: str) -> None:
    """A record id from honcho_search: ``c:<id>`` or ``m:<session>:<id>``, each part in
    Honcho's id alphabet, since the SDK puts them into URL paths unescaped."""
    kind, _, rest = record_id.partition(":")
    parts = rest.split(":")
    safe = all(_HONCHO_ID.fullmatch(part) for part in parts)
    valid_conclusion = kind == "c" and len(parts) == 1 and safe
    valid_message = kind == "m" and len(parts) == 2 and safe
    if not (valid_conclusion or valid_message):
        raise BadArguments(f"'{record_id}' is not a record id; use an id from honcho_search")


def _allowed(name: str) -> set[str]:
    for schema in SCHEMAS:
        if schema["function"]["name"] == name:
            return set(schema["function"]["parameters"]["properties"])
    return set()
