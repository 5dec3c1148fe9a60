"""What the model reads in hermes-agent, fed to our session's taint index as it happens.

Why: hermes-agent hands our session the turn's messages only at ``sync_turn``, after the
turn, so when the model calls ``hc_memory`` mid-turn the page it just fetched is not yet in
our view, and the write would look like the model's own words. hermes-agent's
``post_tool_call`` hook (its plugin context's ``register_hook``, called with ``tool_name``,
``result`` and ``session_id`` among other keywords) shows us every tool result when it
arrives; each goes into the index of that session id's open sessions (``hc_session_search``
and ``hc_session_recall`` results as ``recalled``). Recall that ``prefetch`` returns goes in
too (:func:`feed_recall`), and so does the user message of each turn as it starts, with the
attachments hermes-agent expanded into it (:func:`feed_user_message`). Without the hook (our
context-engine plugin not enabled) nothing tells us what the model read, so each session is
marked ``blind``: every write it makes is staged (fail-safe).

A tool result another plugin's ``transform_tool_result`` rewrote, and the context a
``pre_llm_call`` plugin appends to the API copy of the user message, reach the index before
each model request (``request_observer``, hermes-agent's ``pre_api_request``).
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from hermes_core import Session
from hermes_core.host.session_taint import RECALL_TOOLS
from hermes_plugins.hermes_agent.runtime import runtime
from hermes_plugins.hermes_agent.skill_turns import user_instruction
from hermes_plugins.hermes_agent.tools import our_name

__all__ = [
    "HOOK",
    "feed_recall",
    "feed_turn",
    "feed_untrusted",
    "feed_user_message",
    "observe_tool_result",
    "register_observer",
    "see_or_blind",
    "user_instruction",
]

log = logging.getLogger("hermes_context.hermes_agent")
HOOK = "post_tool_call"
#: hermes-agent may run tools side by side: one feed at a time into an index
_FEEDING = threading.Lock()


def register_observer(ctx: Any) -> bool:
    """Register the hook with hermes-agent's plugin context; False when it has no hooks."""
    register = getattr(ctx, "register_hook", None)
    if not callable(register):
        return False
    from hermes_plugins.hermes_agent.request_observer import REQUEST_HOOK, observe_request

    register(HOOK, observe_tool_result)
    register(REQUEST_HOOK, observe_request)  # what reaches the model, rewritten or appended
    runtime().observing = True
    return True


def _text(result: Any) -> str:
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return str(result)


def observe_tool_result(
    *, tool_name: Any = "", result: Any = None, session_id: Any = "", **_: Any
) -> None:
    """hermes-agent's ``post_tool_call``: index ``result`` for the sessions of ``session_id``.
    Never raises (a failing observer must not touch the agent's turn)."""
    try:
        if not isinstance(session_id, str) or not session_id or result is None:
            return
        name = our_name(str(tool_name))[:200] or None
        kind = "recalled" if name in RECALL_TOOLS else "tool"
        text = _text(result)
        for session in runtime().sessions_named(session_id):
            with _FEEDING:
                session.taint.index.add_untrusted(text, kind, name)
    except Exception:  # an observer never breaks the host's loop
        log.warning("hermes-context: indexing a tool result failed", exc_info=True)


def feed_recall(session: Session, text: str) -> None:
    """Recall our provider returned for the host to show the model: untrusted, ``recalled``."""
    feed_untrusted(session, text, "recalled")


def feed_untrusted(session: Session, text: str, kind: str) -> None:
    """``text`` the model reads, from an untrusted source of ``kind``."""
    if isinstance(text, str) and text.strip():
        with _FEEDING:
            session.taint.index.add_untrusted(text, kind)


def feed_user_message(session: Session, text: str) -> None:
    """The turn's user message as hermes-agent hands it to the model, before the model reads
    it: the user's own words trusted; what hermes-agent appended after them (the expanded
    ``@file:``/``@url:`` references under ``--- Attached Context ---``, its warnings)
    untrusted ``attachment``: no tool runs for those, so the observer never sees them."""
    if isinstance(text, str) and text.strip():
        with _FEEDING:
            session.taint.absorb([{"role": "user", "content": text}])


def feed_turn(session: Session, message: Any) -> None:
    """The turn's user message into the taint index (:func:`feed_user_message`). A
    ``/skill`` turn carries the skill's text (a hub skill, its inline shell output) before
    the user's instruction: only the instruction is the user's; the rest is ``attachment``."""
    if not isinstance(message, str) or not message.strip():
        return
    instruction = user_instruction(message)
    if instruction != message:
        feed_untrusted(session, message, "attachment")
    feed_user_message(session, instruction or "")


def see_or_blind(session: Session) -> None:
    """Before a write: without an observer this session cannot see what the model read."""
    if not runtime().observing:
        session.taint.index.blind = True
