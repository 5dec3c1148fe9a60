"""What the session tests share: a home with the real built-in plugins, a recall plugin, and
a host loop that talks to nothing (the replies are made up; the session does the rest)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import hermes_core as hc
from hermes_core.markers import hookimpl
from hermes_core.types import SessionInfo, Turn


def make_hermes(home: Path, config: Mapping[str, Any] | None = None) -> hc.Hermes:
    """A host over ``home`` with the real default plugins (file memory, store, compressor)."""
    from hermes_core.config.loader import load_config

    return hc.Hermes(load_config(dict(config or {}), home=home, environ={}))


class RecallPlugin:
    """A memory provider in miniature: recalls a fixed line, records what it was given."""

    def __init__(self, recall: str = "The user deploys on Fridays.") -> None:
        self.recall = recall
        self.queries: list[tuple[str, str | None]] = []
        self.synced: list[Turn] = []
        self.started: list[str] = []
        self.switched: list[tuple[str, str]] = []

    @hookimpl
    def memory_prefetch(self, query: str, session: SessionInfo) -> str | None:
        self.queries.append((query, session.user_id))
        return self.recall

    @hookimpl
    def memory_sync(self, turn: Turn, session: SessionInfo) -> None:
        self.synced.append(turn)

    @hookimpl
    def memory_session_start(self, session: SessionInfo) -> None:
        self.started.append(session.session_id)

    @hookimpl
    def memory_session_switch(self, session: SessionInfo, parent_session_id: str) -> None:
        self.switched.append((parent_session_id, session.session_id))

    @hookimpl
    def memory_tools(self, session: SessionInfo) -> list[dict[str, Any]]:
        return [
            {
                "type": "function",
                "function": {"name": "recall_tool", "parameters": {"type": "object"}},
            }
        ]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def tool_round(n: int, body: str) -> list[dict[str, Any]]:
    """An assistant tool call and its result."""
    call_id = f"call_{n}"
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": "read_file",
                        "arguments": json.dumps({"path": f"f{n}.py"}),
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": body},
    ]


def big_file(n: int, lines: int = 120) -> str:
    return "\n".join(f"def f{n}_{i}(x):\n    return x * {i}  # line {i}" for i in range(lines))


def run_turns(
    session: hc.Session,
    messages: list[dict[str, Any]],
    texts: list[str],
    *,
    with_tools: bool = True,
    usage_ratio: float | None = 1.0,
) -> list[list[dict[str, Any]]]:
    """Drive ``session`` as a host would; returns every list ``prepare`` returned."""
    sent: list[list[dict[str, Any]]] = []
    for n, text in enumerate(texts):
        messages.append(user(text))
        rounds = [tool_round(len(messages), big_file(len(messages)))] if with_tools else []
        for extra in [*rounds, None]:
            wire = session.prepare(messages)
            sent.append(wire)
            if usage_ratio is not None:
                real = int(hc.count_tokens(wire) * usage_ratio)
                session.record_usage({"prompt_tokens": real, "completion_tokens": 5})
            if extra is None:
                messages.append(assistant(f"answer {n}"))
            else:
                messages.extend(extra)
        session.end_turn(messages)
    return sent
