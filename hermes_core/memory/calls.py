"""The pieces of the memory manager that are not the manager: its events and report, a call
on its own daemon thread, deep redaction, reading a tool schema's name.

Why apart: they are plain data and small functions the manager composes; keeping them here
keeps the manager about policy (what is bounded, skipped, scanned, mirrored).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_core.redact import redact

__all__ = [
    "Call",
    "MemoryEvent",
    "ShutdownReport",
    "StuckCalls",
    "redacted",
    "redacted_messages",
    "tool_name",
]


@dataclass(frozen=True)
class MemoryEvent:
    """Something a host may want to show or log: ``recall_blocked``, ``provider_timeout``,
    ``provider_skipped``, ``provider_error``, ``tool_dropped``, ``sync_abandoned``."""

    kind: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ShutdownReport:
    """What shutdown could not finish: turns left unsynced, providers still stuck."""

    synced: int
    abandoned: list[str]
    stuck: list[str]


class Call:
    """One provider call on its own daemon thread (a hung provider must never block exit)."""

    def __init__(self, target: Callable[[], tuple[bool, Any]]) -> None:
        self.done = threading.Event()
        self.result: tuple[bool, Any] = (False, None)

        def run() -> None:
            try:
                self.result = target()
            except BaseException as exc:  # noqa: BLE001 - even KeyboardInterrupt is only reported
                self.result = (False, exc)
            finally:
                self.done.set()

        threading.Thread(target=run, name="hermes-memory-call", daemon=True).start()


@dataclass
class StuckCalls:
    """Provider calls still running past their time limit, by plugin name.

    Shared by every memory manager of one host, so a provider that hangs in one session is
    skipped (not waited for again) in every other session until it returns.
    """

    calls: dict[str, Call] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def redacted(value: Any, depth: int = 0) -> Any:
    """Strings redacted all the way down, keys included (tool arguments, message contents)."""
    if isinstance(value, str):
        return redact(value)
    if depth > 20:
        return value
    if isinstance(value, Mapping):
        return {redacted(k, depth + 1): redacted(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redacted(v, depth + 1) for v in value]
    return value


def redacted_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``messages`` with every string redacted, for hooks that hand them out."""
    return [redacted(dict(m)) for m in messages if isinstance(m, Mapping)]


def tool_name(schema: Any) -> str | None:
    if not isinstance(schema, Mapping):
        return None
    function = schema.get("function")
    name = function.get("name") if isinstance(function, Mapping) else None
    return name if isinstance(name, str) and name else None


def landed_writes(args: Mapping[str, Any], answer: str) -> list[tuple[str, str, str]]:
    """(action, target, text) of each operation of a ``memory`` tool call whose answer says it
    landed: a staged or refused write is no news for the providers."""
    try:
        result = json.loads(answer)
    except ValueError:
        return []
    if not (isinstance(result, dict) and result.get("success")) or result.get("staged"):
        return []
    target = str(args.get("target", ""))
    ops = args.get("operations")
    found = []
    for op in ops if isinstance(ops, list) else [args]:
        if isinstance(op, Mapping) and op.get("action") in ("add", "replace", "remove"):
            text = op.get("content") if op.get("action") != "remove" else op.get("old_text")
            found.append((str(op["action"]), target, str(text or "")))
    return found
