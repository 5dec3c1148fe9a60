"""A Session in the host's format: Anthropic and Responses lists in, the same format out;
what a compaction kept comes back as the host's own objects (ids, cache_control, thinking
signatures intact); usage in the format's own keys anchors the count."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import hermes_core as hc
from hermes_core.config.loader import load_config
from hermes_core.formats import to_openai


def make_hermes(home: Path, config: dict[str, Any]) -> hc.Hermes:
    return hc.Hermes(load_config(config, home=home, environ={}))


def big_file(n: int, lines: int = 120) -> str:
    return "\n".join(f"def f{n}_{i}(x):\n    return x * {i}  # line {i}" for i in range(lines))


SMALL = {"model": {"context_length": 8_000}}
LONG = "The change keeps the parser pure and the tests deterministic. " * 40  # no pruning helps


def anthropic_round(n: int) -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": f"task {n}", "cache_control": {"type": "ephemeral"}}
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": f"plan {n}", "signature": f"sig-{n}=="},
                {
                    "type": "tool_use",
                    "id": f"toolu_{n}",
                    "name": "read_file",
                    "input": {"path": f"f{n}.py"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": big_file(n)}
            ],
        },
        {"role": "assistant", "content": f"done {n}. " + LONG},
    ]


def responses_round(n: int) -> list[dict[str, Any]]:
    return [
        {"type": "message", "role": "user", "content": f"task {n}"},
        {"type": "reasoning", "id": f"rs_{n}", "summary": [], "encrypted_content": f"enc-{n}"},
        {
            "type": "function_call",
            "id": f"fc_{n}",
            "call_id": f"call_{n}",
            "name": "read_file",
            "arguments": f'{{"path": "f{n}.py"}}',
        },
        {"type": "function_call_output", "call_id": f"call_{n}", "output": big_file(n)},
        {
            "type": "message",
            "role": "assistant",
            "id": f"msg_{n}",
            "content": [{"type": "output_text", "text": f"done {n}. " + LONG, "annotations": []}],
        },
    ]


@pytest.mark.parametrize("fmt", ["anthropic", "responses"])
@pytest.mark.parametrize("keeps_own_list", [True, False])
def test_formats_a_session_speaks_the_hosts_format(
    tmp_path: Path, fmt: str, keeps_own_list: bool
) -> None:
    make = anthropic_round if fmt == "anthropic" else responses_round
    events: list[hc.SessionEvent] = []
    with make_hermes(tmp_path, SMALL) as host:
        session = host.session("s1", on_event=events.append, message_format=fmt)
        history: list[dict[str, Any]] = []
        sent: list[Any] = []
        mine = {}
        for n in range(10):
            new = make(n)
            for item in new:
                mine[id(item)] = item
            history = history + new if keeps_own_list else [*sent, *new]
            sent = session.prepare(history)
            assert isinstance(sent, list)
            to_openai(sent, fmt)  # valid in the host's format, tool pairs included
            session.end_turn(history if keeps_own_list else sent)
            real = hc.count_tokens(to_openai(sent, fmt).messages)
            usage = (
                {"input_tokens": real}
                if fmt == "responses"
                else {"input_tokens": 10, "cache_read_input_tokens": real - 10}
            )
            session.record_usage(usage)
        assert "compaction_committed" in [e.kind for e in events]
        finished = [e.data.get("status") for e in events if e.kind == "compression_finished"]
        assert "compressed" in finished  # a summary replaced messages, in the host's format
        assert len(sent) < len(history) or not keeps_own_list
        own = [item for item in sent if id(item) in mine]
        assert own and own[-1] is history[-1]  # the newest turn is the host's own object
        assert any(id(item) not in mine for item in sent)  # rewritten by the compaction
        for item in sent:
            if (
                fmt == "anthropic"
                and item["role"] == "assistant"
                and isinstance(item["content"], list)
            ):
                assert item["content"][0]["type"] == "thinking"
                assert item["content"][0]["signature"].startswith("sig-")
            if fmt == "responses" and item.get("type") == "reasoning":
                assert item["encrypted_content"].startswith("enc-")
        session.close()
    assert session.compressor.last_prompt_tokens == real


def test_formats_a_session_refuses_an_unknown_format_and_a_system_object(tmp_path: Path) -> None:
    with make_hermes(tmp_path, SMALL) as host:
        with pytest.raises(hc.HermesError, match="message_format must be"):
            host.session("s1", message_format="gemini")
        session = host.session("s2", message_format="anthropic")
        with pytest.raises(hc.HermesError, match="system_prompt"):
            session.prepare({"system": "x", "messages": []})  # type: ignore[arg-type]
        with pytest.raises(hc.InvalidMessages, match="tool_use"):
            session.prepare(
                [
                    {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}],
                    }
                ]
            )
        assert session.messages == []  # nothing was stored


def _cache_marks(messages: list[Any]) -> int:
    return sum(
        1
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if "cache_control" in b
    )


def test_formats_a_host_that_rebuilds_its_list_gets_its_current_objects_back(
    tmp_path: Path,
) -> None:
    """Each turn the host rebuilds every message (new dicts), moves its one cache_control
    breakpoint to the newest user message and strips the thinking of older assistant
    messages: what prepare() returns is the host's current objects, compactions or not."""
    events: list[hc.SessionEvent] = []
    long = "The change keeps the parser pure and the tests deterministic. " * 25
    with make_hermes(tmp_path, SMALL) as host:
        session = host.session("s1", on_event=events.append, message_format="anthropic")
        session.system_prompt("sys")
        history: list[dict[str, Any]] = []
        earlier: list[list[dict[str, Any]]] = []  # every list the host held (kept alive)
        for n in range(24):
            history = [_rebuilt(m) for m in history]
            history.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": f"q{n} " + long, "cache_control": {"type": "x"}}
                    ],
                }
            )
            sent = session.prepare(history)
            assert _cache_marks(sent) == 1  # the host's one breakpoint, not stale ones
            current = {id(m) for m in history}
            stale = {id(m) for old in earlier for m in old} - current
            assert not [m for m in sent if id(m) in stale]  # never an object of an older turn
            assert sent[-1] is history[-1]
            assert sent[0]["role"] == "user"
            thinking = [m for m in sent if "thinking" in str(m["content"])]
            assert all(id(m) in current for m in thinking)
            earlier.append(history)
            history = [
                *history,
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": f"plan {n}", "signature": f"sig{n}"},
                        {"type": "text", "text": f"a{n} " + long},
                    ],
                },
            ]
            session.end_turn(history)
        commits = [e for e in events if e.kind == "compaction_committed"]
        assert len(commits) >= 2
        session.close()


def _rebuilt(message: dict[str, Any]) -> dict[str, Any]:
    blocks = [
        {k: v for k, v in b.items() if k != "cache_control"}
        for b in message["content"]
        if b["type"] != "thinking"
    ]
    return {**message, "content": blocks}


def test_formats_a_leading_summary_sent_back_is_not_a_rewritten_history(tmp_path: Path) -> None:
    """A compaction that keeps no head leads with its summary; prepare() writes it as a user
    message (Anthropic's first message must be the user's), and a host that sends that list
    back is going on, not rewriting its history."""
    events: list[hc.SessionEvent] = []
    long = "The change keeps the parser pure and the tests deterministic. " * 60
    with make_hermes(tmp_path, SMALL) as host:
        session = host.session("s1", on_event=events.append, message_format="anthropic")
        session.system_prompt("sys")
        sent: list[Any] = []
        firsts = []
        for n in range(14):
            sent = session.prepare([*sent, {"role": "user", "content": f"q{n} " + long}])
            firsts.append(session.messages[0]["role"])
            assert sent[0]["role"] == "user"
            sent = [*sent, {"role": "assistant", "content": f"a{n} " + long}]
            session.end_turn(sent)
        kinds = [e.kind for e in events]
        assert "compaction_committed" in kinds
        assert "assistant" in firsts  # the session's view did lead with the summary
        assert "transcript_replaced" not in kinds
        session.close()
