"""What a message is, by content: its digest and its cache key.

Why apart from token costs: formats and the host match messages across forms and calls by
these (``message_digest``: a 16-byte digest of what goes on the wire), and the cost cache keys
its entries by them (``content_key``); neither is a cost. Keys starting with ``_`` are ignored
by both: they are the host's bookkeeping, never sent.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Any

from hermes_core.errors import InvalidMessages
from hermes_core.transcript.validation import MAX_NESTING

__all__ = ["content_key", "message_digest", "wire_items"]


def wire_items(message: Mapping[Any, Any]) -> list[tuple[str, Any]]:
    return [
        (k if isinstance(k, str) else repr(k), v)
        for k, v in message.items()
        if not (isinstance(k, str) and k.startswith("_"))
    ]


@functools.cache
def _blake2b() -> Callable[..., Any]:
    """hashlib pulls in OpenSSL (~3 ms), so it loads on the first digest, not at import."""
    import hashlib

    return hashlib.blake2b


def message_digest(message: Mapping[Any, Any]) -> bytes:
    """A 16-byte digest of the fields sent on the wire (keys starting with ``_`` are ignored).

    Raises `InvalidMessages` for a message nested too deeply for the JSON encoder (which is
    also deeper than ``MAX_NESTING``), where a ``RecursionError`` would escape."""
    items = sorted(wire_items(message), key=lambda kv: kv[0])
    try:
        canonical = json.dumps(
            items, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str
        )
    except (TypeError, ValueError, RecursionError):
        content_key(message)  # raises InvalidMessages, naming the field, if it is too deep
        canonical = repr(items)
    digest: bytes = _blake2b()(canonical.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    return digest


class _TooDeep(Exception):
    """Raised inside :func:`_freeze`; :func:`content_key` names the field."""


def _freeze(value: Any, depth: int = 1) -> Any:
    """A hashable, content-equal form of a JSON-like value. Strings stay the same objects, so
    Python's cached string hash makes a repeated lookup O(fields), not O(text). Containers
    nested deeper than ``MAX_NESTING`` (``depth`` is the level of ``value``) raise
    ``_TooDeep``: every later step (JSON encoding, hashing) would recurse as deep."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (Mapping, list, tuple)) and depth > MAX_NESTING:
        raise _TooDeep
    deeper = depth + 1  # strings (most values) skip the call: content keys are built per count
    if isinstance(value, Mapping):
        items = [
            (k if type(k) is str else str(k), v if type(v) is str else _freeze(v, deeper))
            for k, v in value.items()
        ]
        items.sort(key=_first)
        return tuple(items)
    if isinstance(value, (list, tuple)):
        return ("[]", *(v if type(v) is str else _freeze(v, deeper) for v in value))
    return repr(value)


def _first(pair: tuple[str, Any]) -> str:
    return pair[0]


def content_key(message: Mapping[Any, Any]) -> Any:
    """The cache key of a message: its wire fields by content (``_`` keys ignored), not id().
    Called for every message of every count, so string values skip :func:`_freeze`.

    Raises `InvalidMessages` when a field nests lists or objects deeper than ``MAX_NESTING``
    (``validate_messages`` reports the same), instead of a ``RecursionError`` later."""
    items: list[tuple[str, Any]] = []
    for key, value in message.items():
        if isinstance(key, str) and key.startswith("_"):
            continue
        name = key if isinstance(key, str) else repr(key)
        if type(value) is str:
            items.append((name, value))
            continue
        try:
            items.append((name, _freeze(value)))
        except (_TooDeep, RecursionError):  # RecursionError: a deep key's repr()
            raise InvalidMessages(
                f"cannot count tokens: field {json.dumps(name, ensure_ascii=False)[:80]} nests "
                f"lists or objects deeper than {MAX_NESTING} levels; flatten it",
                [f"field {name!r} nests deeper than {MAX_NESTING} levels"],
            ) from None
    items.sort(key=_first)
    return tuple(items)
