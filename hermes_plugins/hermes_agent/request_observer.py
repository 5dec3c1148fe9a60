"""What each model request of hermes-agent carries, fed to our sessions' taint indexes.

Why a second hook: ``post_tool_call`` shows a tool result before other plugins'
``transform_tool_result`` may rewrite it, and nothing shows the context ``pre_llm_call``
plugins and the memory prefetch append to the API copy of the turn's user message. Before
every request hermes-agent fires ``pre_api_request`` with ``conversation_history``: its
messages as they are, each user message's API bytes kept beside its content as
``api_content``. Each message not fed before goes through the session's own indexing (the
user's words trusted, attachments, tool results and summaries untrusted), and whatever the
API copy adds after the content is untrusted (recalled memory in its fence, the rest
``attachment``). A message is fed once per session (hermes-agent passes the same strings
again on every request).
"""

from __future__ import annotations

import logging
import re
import threading
import weakref
from collections.abc import Mapping
from typing import Any, Final

from hermes_core import Session
from hermes_plugins.hermes_agent.runtime import runtime
from hermes_plugins.hermes_agent.skill_turns import user_instruction

__all__ = ["REQUEST_HOOK", "observe_request"]

log = logging.getLogger("hermes_context.hermes_agent")
REQUEST_HOOK: Final = "pre_api_request"
_FENCE: Final = re.compile(r"<memory-context>.*?(?:</memory-context>|\Z)", re.DOTALL)
_LOCK = threading.Lock()
#: per open session: the messages fed already, as (role, text) hashes (gone with the session)
_FED: weakref.WeakKeyDictionary[Session, set[int]] = weakref.WeakKeyDictionary()
#: a session past this many fed messages forgets them (feeding again is harmless)
_MAX_FED: Final = 100_000


def observe_request(*, session_id: Any = "", conversation_history: Any = None, **_: Any) -> None:
    """hermes-agent's ``pre_api_request``. Never raises into the host's loop."""
    try:
        if not isinstance(session_id, str) or not session_id:
            return
        if not isinstance(conversation_history, list):
            return
        for session in runtime().sessions_named(session_id):
            with _LOCK:
                _feed(session, conversation_history)
    except Exception:  # an observer never breaks the host's loop
        log.warning("hermes-context: indexing a model request failed", exc_info=True)


def _feed(session: Session, messages: list[Any]) -> None:
    fed = _FED.setdefault(session, set())
    if len(fed) > _MAX_FED:
        fed.clear()
    fresh = []
    for message in messages:
        if not isinstance(message, Mapping) or message.get("role") == "system":
            continue
        content = message.get("content")
        extra = message.get("api_content")
        key = hash((message.get("role"), str(content), str(extra)))
        if key in fed:
            continue
        fed.add(key)
        fresh.append(message)
        if isinstance(extra, str) and extra != content:
            added = (
                extra[len(content) :]
                if isinstance(content, str) and extra.startswith(content)
                else extra
            )
            recalled = "\n".join(_FENCE.findall(added))
            if recalled.strip():
                session.taint.index.add_untrusted(recalled, "recalled")
            rest = _FENCE.sub("", added).strip()
            if rest:
                session.taint.index.add_untrusted(rest, "attachment")
    plain = []
    for message in fresh:
        clean = {k: v for k, v in message.items() if k != "api_content"}
        text = clean.get("content")
        if clean.get("role") == "user" and isinstance(text, str):
            instruction = user_instruction(text)
            if instruction != text:  # a /skill turn: the skill's text is not the user's
                session.taint.index.add_untrusted(text, "attachment")
                clean["content"] = instruction or ""
        plain.append(clean)
    if plain:
        session.taint.absorb(plain)
