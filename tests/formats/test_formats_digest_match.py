"""Messages that lost their hidden key (a list that went through ``to_wire`` or JSON) find
the host's items of their own turn again, never another turn's: identical OpenAI messages
(the same text, different thinking signatures or reasoning items) are told apart by order,
and what cannot be told apart is rebuilt fresh."""

from __future__ import annotations

from typing import Any

import hermes_core as hc
from hermes_core.formats import from_openai, to_openai
from hermes_core.formats.model import match_by_digest

LONG = "The change keeps the parser pure and the tests deterministic. " * 60


def _anthropic_turns() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for n in range(12):
        messages += [
            {"role": "user", "content": "continue. " + LONG},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": f"thought {n}: " + LONG, "signature": f"S{n}"},
                    {"type": "text", "text": "Done."},
                ],
            },
        ]
    return messages


def test_formats_anthropic_identical_messages_keep_their_own_turns_signatures() -> None:
    turns = _anthropic_turns()
    converted = to_openai({"system": "sys", "messages": turns}, "anthropic")
    result = hc.compress(
        converted.messages, context_length=3_000, summarizer="fallback", force=True
    )
    assert result.status == "compressed"
    with_keys = from_openai(result.messages, converted)["messages"]
    without = from_openai(hc.to_wire(result.messages), converted)["messages"]
    assert [id(m) for m in without] == [id(m) for m in with_keys] or without == with_keys
    signatures = [
        [b["signature"] for b in m["content"] if b["type"] == "thinking"]
        for m in without
        if m["role"] == "assistant" and isinstance(m["content"], list)
    ]
    assert signatures == [["S10"], ["S11"]]
    assert without[-1] is turns[-1] and without[-3] is turns[-3]


def test_formats_responses_identical_messages_keep_their_own_turns_reasoning() -> None:
    items: list[dict[str, Any]] = []
    for n in range(12):
        items += [
            {"role": "user", "content": "continue. " + LONG},
            {"type": "reasoning", "id": f"rs_{n}", "summary": [], "encrypted_content": f"E{n}"},
            {
                "type": "message",
                "role": "assistant",
                "id": f"msg_{n}",
                "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
            },
        ]
    converted = to_openai({"input": items}, "responses")
    result = hc.compress(
        converted.messages, context_length=3_000, summarizer="fallback", force=True
    )
    assert result.status == "compressed"
    back = from_openai(hc.to_wire(result.messages), converted)["input"]
    assert [i["id"] for i in back if "id" in i] == ["rs_10", "msg_10", "rs_11", "msg_11"]
    assert back[-1] is items[-1]


def test_formats_an_ambiguous_message_is_rebuilt_not_guessed() -> None:
    a, b, c, x = b"a", b"b", b"c", b"summary"
    wanted = [a, b, a, b, c]
    index: list[int | None] = [None, None, None]
    match_by_digest([x, a, c], index, wanted)  # which "a" is it? Two are left between
    assert index == [None, None, 4]
    index = [None, None, None, None]
    match_by_digest([a, x, b, c], index, wanted)  # a head, a summary, a tail
    assert index == [0, None, 3, 4]
    index = [None, 1, None]
    match_by_digest([a, b, a], index, wanted)  # a hidden key bounds the runs around it
    assert index == [0, 1, 2]
    index = [None, None]
    match_by_digest([c, a], index, wanted)  # c occurs once: found; an "a" after it: none left
    assert index == [4, None]


def test_formats_a_new_message_like_an_old_one_takes_no_source() -> None:
    turns = [
        {"role": "user", "content": "continue."},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}, {"type": "x"}]},
    ]
    converted = to_openai({"messages": turns}, "anthropic")
    later = [*hc.to_wire(converted.messages), {"role": "user", "content": "continue."}]
    back = from_openai(later, converted)["messages"]
    assert back[0] is turns[0] and back[1] is turns[1]
    assert back[2] is not turns[0] and back[2] == {"role": "user", "content": "continue."}
