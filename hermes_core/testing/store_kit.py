"""Messages, queries and comparisons the session-store conformance checks share.

Kept apart from the checks so a backend's own tests can reuse them (``user``, ``call``, the
round-trip shapes, the hostile queries) and so each check module stays about one thing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_core.sessions.store import SearchHit, SessionStore, StoredMessage

__all__ = [
    "FILLER",
    "HOSTILE_QUERIES",
    "ROUND_TRIP_MESSAGES",
    "OpenStore",
    "assistant",
    "call",
    "canonical",
    "contents",
    "family",
    "hit_ids",
    "seeded",
    "snapshot",
    "tool_result",
    "user",
]

#: opens another store instance on the test's data (closed by the suite after the test)
OpenStore = Callable[[], SessionStore]

#: sixty distinct words: a long message in which a term is one among many
FILLER = " ".join(f"filler{n}" for n in range(60))


def user(text: Any, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, **extra}


def assistant(text: Any, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": text, **extra}


def call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    """One entry of an assistant message's ``tool_calls``."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool_result(call_id: str, name: str, text: str | None) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": text}


#: every shape a transcript holds, and a few it should not but might: each must come back
#: exactly (every key, every value and its JSON type)
ROUND_TRIP_MESSAGES: tuple[dict[str, Any], ...] = (
    {"role": "system", "content": "You are a careful assistant."},
    user("plain text"),
    user(""),
    user("unicode: 日本語のテキスト, émoji 🎉, RTL עברית, zero\u200bwidth, e\u0301, \U0001f9ec"),
    user("a NUL \x00 in the middle, control \x01\x1f and one at the end\x00"),
    user("long text " + "0123456789" * 10_000),
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "look at this"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "text", "text": "and this"},
        ],
    },
    assistant(None, tool_calls=[call("c1", "read_file", '{"path": "src/app.py"}')]),
    assistant(
        "two at once",
        tool_calls=[
            call("c2", "terminal", '{"command": "pytest -k \\"foo\\" \\u0000"}'),
            call("c3", "grep", {"q": 1, "nested": [[], {}, [None]]}),
        ],
    ),
    tool_result("c1", "read_file", "def main():\n    return 0\n"),
    tool_result("c2", "terminal", None),
    {"content": "no role at all"},
    {"role": "assistant"},
    {
        "role": "assistant",
        "content": "meta keys and JSON types",
        "_compressed_summary": True,
        "numbers": [0, -7, 1.0, 2.5, 1e-300, 2**53 + 1, 2**70],
        "flags": [True, False, None],
        "nul\x00key": "nul\x00value",
    },
    {"tool_calls": [], "role": "assistant", "content": "keys in an unusual order"},
    {"role": 7, "content": 3.5, "name": None, "tool_call_id": 12, "tool_calls": {"odd": True}},
    {"role": "user", "content": {"not": "a list"}, "reasoning": {"steps": ["a", "b"]}},
    user("a lone surrogate \ud800 survives, and \udfff"),
    {"role": "assistant", "content": "infinity", "n": float("inf"), "m": -float("inf")},
)

#: queries a model or a user may send: none may raise, none may reach another user's rows
HOSTILE_QUERIES: tuple[str, ...] = (
    'pytest -k "foo"',
    '"unbalanced',
    'a " b " c "',
    "''",
    "it's",
    "NOT",
    "NOT secret",
    "AND OR NOT NEAR",
    "NEAR(a b, 3)",
    "a & b | !c <-> d",
    "foo:* & !bar",
    "-x",
    "-",
    "--",
    "a:b",
    "content: secret",
    "src/app.py:12",
    "...",
    ":",
    "*",
    "foo* ^bar (baz) {qux} [x]",
    "%_\\ like wildcards",
    "'; DROP TABLE messages; --",
    "\\",
    "\x00",
    "nul\x00inside",
    "\x01\x1f",
    "🎉",
    "emoji 🎉🚀 only",
    "数",
    "数据 ab 東京タワー x",
    "x" * 10_000,
    " ".join(["word"] * 2_000),
    "   ",
)


def canonical(message: Mapping[str, Any]) -> str:
    """The message as sorted-key JSON: equal only when every value has its JSON type too
    (``==`` alone takes ``1`` for ``1.0`` and ``True``)."""
    return json.dumps(message, sort_keys=True, ensure_ascii=False)


def contents(rows: Sequence[StoredMessage]) -> list[Any]:
    return [row.message.get("content") for row in rows]


def hit_ids(hits: Sequence[SearchHit]) -> list[str]:
    return [hit.session_id for hit in hits]


def snapshot(store: SessionStore, session_id: str) -> list[tuple[Any, ...]]:
    """Everything the store holds for one session's rows, for before/after comparisons."""
    return [
        (m.seq, m.active, m.compacted, canonical(m.message), m.api_content, m.token_count)
        for m in store.messages(session_id, include_archived=True)
    ]


def family(store: SessionStore, user_id: str | None = "u") -> None:
    """Sessions ``root`` > ``child`` > ``grandchild``, ``root`` > ``sibling``, and a
    ``stranger`` with no relatives, all of ``user_id``, created in that order."""
    store.open_session("root", user_id=user_id)
    store.open_session("child", user_id=user_id, parent_session_id="root")
    store.open_session("grandchild", user_id=user_id, parent_session_id="child")
    store.open_session("sibling", user_id=user_id, parent_session_id="root")
    store.open_session("stranger", user_id=user_id)


def seeded(store: SessionStore, session_id: str = "s", user_id: str | None = "u") -> list[Any]:
    """A six-message session with token counts 1..6 (seqs 1..6), ready to be compacted."""
    messages = [
        {"role": "system", "content": "be brief"},
        user("the test in tests/test_app.py is flaky"),
        assistant(None, tool_calls=[call("c1", "read_file", '{"path": "tests/test_app.py"}')]),
        tool_result("c1", "read_file", "def test_app(): assert retry()"),
        assistant("it depends on the clock"),
        user("fix it"),
    ]
    store.open_session(session_id, user_id=user_id, model="m", title="flaky")
    store.append_messages(session_id, messages, token_counts=[1, 2, 3, 4, 5, 6])
    return messages
