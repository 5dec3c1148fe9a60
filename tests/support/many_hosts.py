"""Several host processes serving interleaved turns of several users through one store.

Each worker is a ``Hermes`` with its own home (as on another machine) and the shared store.
Round ``t`` gives user ``u``'s turn to host ``(u + t) % hosts``; a barrier ends every round,
so each user's turns are served in order but by a different host each time, and every host
keeps its ``Session`` objects open across rounds (it holds an older view whenever another
host served the user since). Workers check what they see as they go (nothing of another user
in a prepared request or a search result) and report counts; the test reads the store.
"""

from __future__ import annotations

import json
import re
import traceback
from pathlib import Path
from typing import Any

Token = str
_TOKEN = re.compile(r"tok(\d\d)x\d{4}")


def token(user: int, turn: int) -> Token:
    return f"tok{user:02d}x{turn:04d}"


def user_id(user: int) -> str:
    return f"user-{user:02d}"


def chat_id(user: int) -> str:
    return f"chat-{user:02d}"


def notes_id(user: int) -> str:
    return f"notes-{user:02d}"


def seed_notes(config: dict[str, Any], home: str, users: int) -> None:
    """One earlier session per user, for session_search to find (never another user's)."""
    from hermes_core import Hermes

    with Hermes.from_config(config, home=Path(home)) as host:
        for user in range(users):
            with host.session(notes_id(user), user_id=user_id(user)) as session:
                ask = {"role": "user", "content": f"remember the launch code {user_id(user)} zebra"}
                session.prepare([ask])
                session.end_turn([ask, {"role": "assistant", "content": "noted zebra"}])


def serve(
    plan: tuple[int, int, int, int], config: dict[str, Any], home: str, barrier: Any, results: Any
) -> None:
    """One host process (``plan``: its index, hosts, users, rounds): its share of every round,
    then a report in ``results``."""
    index, hosts, users, rounds = plan
    report: dict[str, Any] = {"host": index, "turns": 0, "compactions": 0, "problems": []}
    try:
        from hermes_core import Hermes

        events: list[str] = []

        def listen(event: Any) -> None:
            events.append(getattr(event, "kind", "") or "")

        with Hermes.from_config(config, home=Path(home) / f"host{index}") as host:
            sessions: dict[int, Any] = {}
            for turn in range(rounds):
                for user in range(users):
                    if (user + turn) % hosts == index:
                        session = sessions.get(user)
                        if session is None:
                            session = sessions[user] = host.session(
                                chat_id(user), user_id=user_id(user), on_event=listen
                            )
                        _turn(session, user, turn, report)
                barrier.wait()
            for session in sessions.values():
                session.close()
        report["compactions"] = events.count("compaction_committed")
    except BaseException:  # reported to the test, which fails on it
        report["problems"].append(traceback.format_exc())
        barrier.abort()
    results.put(report)


def _turn(session: Any, user: int, turn: int, report: dict[str, Any]) -> None:
    ask = {"role": "user", "content": f"question {token(user, turn)} about the build"}
    sent = session.prepare([*session.messages, ask])
    seen = {int(owner) for m in sent for owner in _TOKEN.findall(_text(m))}
    if seen - {user}:
        report["problems"].append(f"user {user} turn {turn}: another user's text was sent")
    if turn % 10 == 0:
        fact = f"prefers build flag {token(user, turn)}"
        answer = json.loads(
            session.handle_tool_call("memory", {"action": "add", "target": "user", "content": fact})
        )
        if not answer.get("success"):
            report["problems"].append(f"user {user} turn {turn}: memory add failed: {answer}")
        found = session.handle_tool_call("session_search", {"query": "launch code zebra"})
        others = [f"notes-{other:02d}" for other in range(100) if other != user]
        if any(other in found for other in others):
            report["problems"].append(f"user {user} turn {turn}: search crossed users")
        if notes_id(user) not in found:
            report["problems"].append(f"user {user} turn {turn}: search missed own notes")
    reply = {"role": "assistant", "content": f"answer to {token(user, turn)}: run make"}
    session.end_turn([*session.messages, reply])
    report["turns"] += 1


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else json.dumps(content)


def hammer(job: tuple[dict[str, Any], str, str, int], start: Any, results: Any) -> None:
    """One host writing turns into the shared session as fast as it can (no rounds): the
    other host writes it at the same time. Reports the errors it saw."""
    config, home, name, turns = job
    errors: list[str] = []
    try:
        from hermes_core import Hermes

        with Hermes.from_config(config, home=Path(home)) as host:
            session = host.session("shared", user_id="alice")
            start.wait()
            for turn in range(turns):
                try:
                    ask = {"role": "user", "content": f"q-{name}-{turn}"}
                    session.prepare([*session.messages, ask])
                    reply = {"role": "assistant", "content": f"a-{name}-{turn}"}
                    session.end_turn([*session.messages, reply])
                except Exception as exc:  # counted: the test wants none
                    errors.append(f"{type(exc).__name__}: {exc}")
            session.close()
    except BaseException:  # reported to the test, which fails on it
        errors.append(traceback.format_exc())
    results.put((name, errors))
