"""A host process driven by commands, so a test can alternate two of them turn by turn."""

from __future__ import annotations

import json
import traceback
from pathlib import Path
from typing import Any


def host_process(config: dict[str, Any], home: str, inbox: Any, outbox: Any) -> None:
    """Serve commands until ``None``: each answer is ``(ok, value)``."""
    from hermes_core import Hermes

    with Hermes.from_config(config, home=Path(home)) as host:
        sessions: dict[tuple[str, str], Any] = {}

        def session(session_id: str, user: str) -> Any:
            key = (session_id, user)
            if key not in sessions:
                sessions[key] = host.session(session_id, user_id=user)
            return sessions[key]

        while (command := inbox.get()) is not None:
            kind, session_id, user, text = command
            try:
                current = session(session_id, user)
                if kind == "turn":
                    current.prepare([*current.messages, {"role": "user", "content": text}])
                    reply = {"role": "assistant", "content": f"noted: {text}"}
                    current.end_turn([*current.messages, reply])
                    value: Any = [m.get("content") for m in current.messages]
                elif kind == "remember":
                    value = json.loads(
                        current.handle_tool_call(
                            "memory", {"action": "add", "target": "user", "content": text}
                        )
                    )
                elif kind == "search":
                    value = json.loads(current.handle_tool_call("session_search", {"query": text}))
                elif kind == "prompt":
                    other = host.session(f"{session_id}-fresh", user_id=user)
                    value = other.system_prompt("You are helpful.")
                    other.close()
                else:
                    raise ValueError(kind)
                outbox.put((True, value))
            except Exception:
                outbox.put((False, traceback.format_exc()))
        for open_session in sessions.values():
            open_session.close()
