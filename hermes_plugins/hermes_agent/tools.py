"""Our tools under names hermes-agent does not use, and the guard every host call goes through.

hermes-agent has its own ``memory`` and ``session_search`` tools and silently drops a plugin
tool whose name is already taken, so ours are offered as ``hc_memory`` and
``hc_session_search`` (an external provider's tools keep their own names). ``skill_manage``
is not offered: hermes-agent keeps its own skills.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from hermes_core import Hermes, HermesError, Session
from hermes_core.types import SessionInfo

__all__ = [
    "PREFIX",
    "arguments_of",
    "guarded",
    "host_name",
    "our_name",
    "schemas_before_session",
    "schemas_for_host",
    "tool_error",
]

log = logging.getLogger("hermes_context.hermes_agent")
PREFIX = "hc_"
_RENAMED = frozenset({"memory", "session_search"})
_HIDDEN = frozenset({"skill_manage"})
T = TypeVar("T")


def host_name(ours: str) -> str:
    return PREFIX + ours if ours in _RENAMED else ours


def our_name(host: str) -> str:
    bare = host[len(PREFIX) :] if host.startswith(PREFIX) else host
    return bare if bare in _RENAMED else host


def schemas_before_session(host: Hermes) -> list[dict[str, Any]]:
    """The memory tools of ``host`` as a session will offer them (hermes-agent asks a memory
    provider for its tools before it initialises one)."""
    from hermes_core.memory.manager import MemoryManager
    from hermes_core.sessions.recall_tool import SESSION_RECALL_SCHEMA
    from hermes_core.sessions.search_tool import SESSION_SEARCH_SCHEMA

    manager = MemoryManager(host)
    try:
        found = manager.tools(SessionInfo("hermes-context-schemas", home=host.home))
    finally:
        manager.close(timeout=0.0)
    if host.settings.sessions.enabled:
        found.extend((SESSION_SEARCH_SCHEMA, SESSION_RECALL_SCHEMA))
    return renamed(found)


def schemas_for_host(session: Session) -> list[dict[str, Any]]:
    """Bare function schemas (hermes-agent wraps them), renamed."""
    return renamed(session.tools())


def renamed(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        function = dict(tool.get("function") or tool)
        name = str(function.get("name") or "")
        if not name or name in _HIDDEN:
            continue
        function["name"] = host_name(name)
        out.append(function)
    return out


def tool_error(message: str) -> str:
    return json.dumps({"error": message})


def guarded(what: str, default: T, call: Callable[[], T]) -> T:
    """Run one of our steps for the host: our errors are logged in one clear line and
    ``default`` comes back, so a bad input never ends the host's turn with a traceback."""
    try:
        return call()
    except HermesError as exc:
        log.error("hermes-context: %s refused: %s", what, exc)
    except Exception as exc:  # the host's turn must go on
        log.error("hermes-context: %s failed: %s: %s", what, type(exc).__name__, exc)
        log.debug("hermes-context: %s traceback", what, exc_info=True)
    return default


def arguments_of(args: Any) -> Mapping[str, Any] | str:
    """A tool call's arguments as the host gives them (a dict, or JSON text)."""
    if isinstance(args, (Mapping, str)):
        return args
    return {}
