"""A Session in the host's format rebuilds a message its compaction rewrote (here: the
summary merged in front of the first kept message, an assistant turn) on the host objects
it came from, as the library path does: the thinking block with its signature (Anthropic),
the reasoning item with its encrypted_content (Responses) stay, and so the cache prefix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from refs import has_refs, without_refs
from test_formats_session import anthropic_round, big_file, responses_round

import hermes_core as hc
from hermes_core.compression.assemble import MERGED_KEY, is_summary_message
from hermes_core.compression.engine import Compressor
from hermes_core.formats import dump_payload, load_payload, payload_problems
from hermes_core.formats.rewrites import is_rewrite_of, rewritten_from

ASKS = "Please look at the files and tell me what they do. " * 8


def anthropic_turn(t: int, lines: int) -> list[dict[str, Any]]:
    """A user question, then (after the first turn) two tool rounds and an answer."""
    out: list[dict[str, Any]] = [{"role": "user", "content": f"Turn {t}. {ASKS}"}]
    for k in range(2 if t else 0):
        out.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": f"think {t}.{k}", "signature": f"sig-{t}-{k}"},
                    {"type": "text", "text": f"Reading file {t}.{k}."},
                    {"type": "tool_use", "id": f"tu_{t}_{k}", "name": "read", "input": {"k": k}},
                ],
            }
        )
        result = {"type": "tool_result", "tool_use_id": f"tu_{t}_{k}", "content": "code\n" * lines}
        out.append({"role": "user", "content": [result]})
    thinking = {"type": "thinking", "thinking": f"sum up {t}", "signature": f"sig-{t}"}
    out.append({"role": "assistant", "content": [thinking, {"type": "text", "text": f"Done {t}."}]})
    return out


def responses_turn(t: int, lines: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": f"Turn {t}. {ASKS}"}
    ]
    for k in range(2 if t else 0):
        out.append(
            {
                "type": "reasoning",
                "id": f"rs_{t}_{k}",
                "summary": [],
                "encrypted_content": f"enc-{t}-{k}",
            }
        )
        out.append(
            {
                "type": "function_call",
                "id": f"fc_{t}_{k}",
                "call_id": f"call_{t}_{k}",
                "name": "read",
                "arguments": json.dumps({"k": k}),
            }
        )
        out.append(
            {"type": "function_call_output", "call_id": f"call_{t}_{k}", "output": "code\n" * lines}
        )
    out.append(
        {"type": "reasoning", "id": f"rs_{t}", "summary": [], "encrypted_content": f"enc-{t}"}
    )
    out.append(
        {
            "type": "message",
            "role": "assistant",
            "id": f"msg_{t}",
            "content": [{"type": "output_text", "text": f"Done {t}.", "annotations": []}],
        }
    )
    return out


def merged_entry(session: hc.Session) -> dict[str, Any]:
    merged = [m for m in session.messages if m.get(MERGED_KEY)]
    assert len(merged) == 1 and merged[0]["role"] == "assistant"  # the case under test
    return merged[0]


def first_merge(tmp_path: Path, fmt: str, lines: int) -> tuple[list[Any], list[Any], hc.Session]:
    """Turns until the session's first compaction (which merges its summary into an
    assistant message): the host's list given to that prepare(), what it returned, the
    session. The host sends back what it got, plus the turn's new messages."""
    config = tmp_path / "config.yaml"
    config.write_text("model: {context_length: 8000}\n")
    hermes = hc.Hermes.from_config(config, home=tmp_path)
    events: list[hc.SessionEvent] = []
    session = hermes.session("s1", message_format=fmt, on_event=events.append)
    session.system_prompt("You are a bot.")
    make = anthropic_turn if fmt == "anthropic" else responses_turn
    host: list[Any] = []
    for t in range(30):
        turn = make(t, lines)
        host = [*host, turn[0]]
        sent = session.prepare(host)
        assert payload_problems(sent, fmt) == []
        if any(e.kind == "compaction_committed" for e in events):
            return host, sent, session
        host = [*sent, *turn[1:]]
        session.end_turn(host)
    raise AssertionError("no compaction in 30 turns")


def summary_at(sent: list[Any]) -> int:
    return next(i for i, m in enumerate(sent) if "CONTEXT SUMMARY" in json.dumps(m))


#: tool result sizes that put the tail's first message at an assistant turn with calls (the
#: reviewer's case) and at a final answer without them
CASES = [("anthropic", 30, True), ("anthropic", 45, False)]
CASES += [("responses", 30, True), ("responses", 45, False)]


@pytest.mark.parametrize(("fmt", "lines", "calls"), CASES)
def test_formats_a_merged_summary_keeps_the_turns_thinking_and_matches_the_library(
    tmp_path: Path, fmt: str, lines: int, calls: bool
) -> None:
    host, sent, session = first_merge(tmp_path, fmt, lines)
    assert bool(merged_entry(session).get("tool_calls")) is calls
    own = {id(item) for item in host}
    at = summary_at(sent)
    if fmt == "anthropic":
        merged = sent[at]["content"]
        original = next(m["content"] for m in host if m["content"][0] is merged[0])
        assert merged[0]["type"] == "thinking" and merged[0]["signature"].startswith("sig-")
        assert merged[1]["type"] == "text" and merged[1]["text"].startswith("[CONTEXT SUMMARY")
        others = [b for b in merged if b["type"] != "text"]
        assert len(others) == len([b for b in original if b["type"] != "text"])
        assert all(any(b is o for o in original) for b in others)  # the host's blocks
        assert ("tool_use" in [b["type"] for b in merged]) is calls
    else:
        side = ("reasoning", "function_call", "assistant")
        kind = [i.get("role") if i.get("type") == "message" else i.get("type") for i in sent]
        start = end = at
        while start > 0 and kind[start - 1] in side:
            start -= 1
        while end + 1 < len(sent) and kind[end + 1] in side:
            end += 1
        turn = [i for n, i in enumerate(sent[start : end + 1], start) if n != at]
        assert all(id(item) in own for item in turn)  # the turn's own items, ids and all
        reasoning = [i for i in turn if i["type"] == "reasoning"]
        assert reasoning and reasoning[0]["encrypted_content"].startswith("enc-")
        assert ("function_call" in kind[start : end + 1]) is calls
    # the CLI / library path on the same host list gives the same list
    converted = load_payload(host, fmt)
    result = Compressor(None, context_length=8_000, summarizer="fallback").compress(
        converted.messages
    )
    assert dump_payload(result.messages, converted) == without_refs(sent)
    assert has_refs(sent)  # the session has a store: its summary names the span it replaced
    session.close()


@pytest.mark.parametrize(("fmt", "lines", "calls"), CASES)
def test_formats_a_merged_message_stays_rebuilt_on_the_hosts_objects(
    tmp_path: Path, fmt: str, lines: int, calls: bool
) -> None:
    """The turns after the merge (the host sends back what it got): the merged message is
    the same bytes each turn, its thinking or reasoning with it, so the cache prefix holds."""
    _, sent, session = first_merge(tmp_path, fmt, lines)
    make = anthropic_turn if fmt == "anthropic" else responses_turn
    at = summary_at(sent)
    if fmt == "anthropic":
        assert sent[at]["content"][0]["type"] == "thinking"
    else:
        assert "reasoning" in [i.get("type") for i in sent[at - 1 : at + 2]]
    first = json.dumps(sent[at - 1 : at + 3])
    for t in range(100, 103):
        turn = make(t, lines)
        sent = session.prepare([*sent, turn[0]])
        assert payload_problems(sent, fmt) == []
        assert summary_at(sent) == at  # no second compaction in these turns
        assert json.dumps(sent[at - 1 : at + 3]) == first
        sent = [*sent, *turn[1:]]
        session.end_turn(sent)
    session.close()


def test_formats_rewrites_are_told_from_a_summary_and_from_dropped_messages() -> None:
    """What the session's matching takes for a rewrite: a copy with a summary merged in
    front, a pruned tool result, shortened arguments; never the summary itself, nor a
    dropped message that reads the same as the kept one (the tail is matched from its end)."""
    call = {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    ask = {"role": "user", "content": "go on"}
    again = {"role": "user", "content": "go on"}
    said = {"role": "assistant", "content": "ok", "tool_calls": [call]}
    tool = {"role": "tool", "tool_call_id": "c1", "content": "x" * 500}
    head = {"role": "user", "content": "start"}
    before = [head, ask, said, tool, again]
    short = {**call, "function": {"name": "read", "arguments": "{...}"}}
    summary = {"role": "assistant", "content": "S", "_compressed_summary": True}
    merged = {**again, "content": "S\n\ngo on", MERGED_KEY: True}
    view = [head, summary, {**said, "tool_calls": [short]}, {**tool, "content": "[pruned]"}]
    found = rewritten_from(
        [*view, merged], before, merged_key=MERGED_KEY, is_summary=is_summary_message
    )
    assert [found.get(id(m)) for m in [*view, merged]][1:] == [None, said, tool, again]

    def rewrite(message: dict[str, Any], original: dict[str, Any]) -> bool:
        return is_rewrite_of(message, original, merged_key=MERGED_KEY)

    assert not rewrite({**said, "content": "other"}, said)  # an assistant's text stays
    assert not rewrite({**said, "tool_calls": [{**call, "id": "c2"}]}, said)
    assert not rewrite({**ask, "content": "S\n\ngo on"}, ask)  # not marked merged
    assert rewrite({**ask, "content": "S\n\ngo on", MERGED_KEY: True}, ask)
    # not in the order a compaction keeps what it keeps: no rewrite is guessed
    disordered = [again, head]
    assert rewritten_from(disordered, before, merged_key=MERGED_KEY, is_summary=bool) == {}


@pytest.mark.parametrize("fmt", ["anthropic", "responses"])
def test_formats_a_pruned_tool_result_keeps_the_hosts_keys(tmp_path: Path, fmt: str) -> None:
    """A tool result the compaction shortened comes back rebuilt on the host's block or item:
    its extra keys (``is_error``, ``cache_control``; an item ``id`` and ``status``) stay."""
    config = tmp_path / "config.yaml"
    config.write_text("model: {context_length: 8000}\n")
    make = anthropic_round if fmt == "anthropic" else responses_round
    pruned = 0
    with hc.Hermes.from_config(config, home=tmp_path) as hermes:
        session = hermes.session("s1", message_format=fmt)
        sent: list[Any] = []
        for n in range(8):
            new = make(n)
            for item in new:
                for block in item["content"] if isinstance(item.get("content"), list) else []:
                    if block["type"] == "tool_result":
                        block.update(is_error=False, cache_control={"type": "ephemeral"})
                if item.get("type") == "function_call_output":
                    item.update(id=f"fco_{n}", status="completed")
            sent = session.prepare([*sent, *new])
            assert payload_problems(sent, fmt) == []
            for item in sent:
                if fmt == "anthropic" and isinstance(item["content"], list):
                    for block in item["content"]:
                        if block["type"] == "tool_result":
                            assert block["is_error"] is False and "cache_control" in block
                            pruned += block["content"] != big_file(int(block["tool_use_id"][6:]))
                if item.get("type") == "function_call_output":
                    assert item["id"] == f"fco_{item['call_id'][5:]}"
                    assert item["status"] == "completed"
                    pruned += item["output"] != big_file(int(item["call_id"][5:]))
            session.end_turn(sent)
        session.close()
    assert pruned  # some results were shortened, and rebuilt on the host's
