"""A compaction can rewrite the head's last message (its image becomes a note) and the
tail's first (the summary merged in) in one pass: both then sit in one gap between kept
messages. A Session in the host's format must rebuild each on its own original (the head's
from the gap's start, the tail's from its end), as the library path does, and never on a
dropped message of a later turn that reads the same; where two originals fit, it writes the
message fresh rather than pick one."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from refs import has_refs, without_refs

import hermes_core as hc
from hermes_core.compression.assemble import MERGED_KEY, is_summary_message
from hermes_core.compression.engine import Compressor
from hermes_core.formats import dump_payload, load_payload, payload_problems
from hermes_core.formats.rewrites import rewritten_from

ASK = "Please look at the files and tell me what they do. " * 8
QUESTION = "What is wrong here?"  # the same text on every image turn: the trap


def responses_history() -> list[dict[str, Any]]:
    """Twenty turns; every third user message an image with the same question."""
    items: list[dict[str, Any]] = []
    for t in range(20):
        if t % 3 == 1:
            image = {"type": "input_image", "image_url": f"data:image/png;base64,AAAA{t:04d}"}
            content: Any = [{"type": "input_text", "text": QUESTION}, image]
        else:
            content = f"Turn {t}. {ASK}"
        items.append({"type": "message", "role": "user", "id": f"u_{t}", "content": content})
        items.append(
            {"type": "reasoning", "id": f"rs_{t}", "summary": [], "encrypted_content": f"enc-{t}"}
        )
        text = {"type": "output_text", "text": f"Done {t}. " + "blah " * 60, "annotations": []}
        items.append({"type": "message", "role": "assistant", "id": f"msg_{t}", "content": [text]})
    return items[:-2]


def anthropic_history() -> list[dict[str, Any]]:
    """The same turns; every image turn but turn 1 tags its text with a cache breakpoint."""
    messages: list[dict[str, Any]] = []
    for t in range(20):
        if t % 3 == 1:
            text: dict[str, Any] = {"type": "text", "text": QUESTION}
            if t != 1:
                text["cache_control"] = {"type": "ephemeral"}
            data = base64.b64encode(bytes([t]) * 50).decode()
            source = {"type": "base64", "media_type": "image/png", "data": data}
            content: Any = [text, {"type": "image", "source": source}]
        else:
            content = f"Turn {t}. {ASK}"
        messages.append({"role": "user", "content": content})
        thinking = {"type": "thinking", "thinking": f"t{t}", "signature": f"sig-{t}"}
        answer = {"type": "text", "text": f"Done {t}. " + "blah " * 60}
        messages.append({"role": "assistant", "content": [thinking, answer]})
    return messages[:-1]


def session_and_library(tmp_path: Path, fmt: str, host: list[Any]) -> tuple[list[Any], list[Any]]:
    config = tmp_path / "config.yaml"
    config.write_text("model: {context_length: 8000}\n")
    with hc.Hermes.from_config(config, home=tmp_path) as hermes:
        session = hermes.session("s1", message_format=fmt)
        if fmt == "anthropic":
            session.system_prompt("bot")
        sent = session.prepare(host)
        session.close()
    converted = load_payload(host, fmt)
    compressor = Compressor(None, context_length=8000, summarizer="fallback")
    return sent, dump_payload(compressor.compress(converted.messages).messages, converted)


def turns_of(host: list[Any], fmt: str) -> dict[int, int]:
    """id(host object) -> its turn, for every item (Responses) or block (Anthropic)."""
    out: dict[int, int] = {}
    for n, item in enumerate(host):
        if fmt == "responses":
            out[id(item)] = int(item["id"].split("_")[1])
        elif isinstance(item["content"], list):
            out.update({id(block): n // 2 for block in item["content"]})
    return out


def host_turns(sent: list[Any], host: list[Any], fmt: str) -> list[set[int]]:
    """For each message sent, the turns of the host objects it is (or holds)."""
    turn = turns_of(host, fmt)
    if fmt == "responses":
        return [{turn[id(item)]} if id(item) in turn else set() for item in sent]
    return [
        {turn[id(b)] for b in m["content"] if id(b) in turn}
        if isinstance(m["content"], list)
        else set()
        for m in sent
    ]


def test_formats_a_responses_head_rewrite_keeps_its_own_turns_item(tmp_path: Path) -> None:
    host = responses_history()
    sent, library = session_and_library(tmp_path, "responses", host)
    assert payload_problems({"input": sent}, "responses") == []
    assert [i.get("id") for i in sent[:6]] == ["u_0", "rs_0", "msg_0", "u_1", "rs_16", "msg_16"]
    assert without_refs(sent) == library and has_refs(sent)  # the library has no store
    # the image-noted head message is turn 1's item (not turn 16's, dropped, which reads the same)
    assert sent[3]["content"][1]["type"] == "input_text"
    # every item, kept or rebuilt, carries its own turn's id, in order: no turn's twice
    turns = [int(i["id"].split("_")[1]) for i in sent if "id" in i]
    assert turns == sorted(turns) and "u_16" not in [i.get("id") for i in sent]
    kept = [t for each in host_turns(sent, host, "responses") for t in each]
    assert kept == sorted(kept) and 1 not in kept  # turn 1's item was rebuilt, not kept


def test_formats_an_anthropic_head_rewrite_gets_no_later_turns_breakpoint(tmp_path: Path) -> None:
    host = anthropic_history()
    sent, library = session_and_library(tmp_path, "anthropic", host)
    assert payload_problems(sent, "anthropic") == []
    assert without_refs(sent) == library and has_refs(sent)  # the library has no store
    assert sent[2]["content"][0] == {"type": "text", "text": QUESTION}  # no stray cache_control
    turns = host_turns(sent, host, "anthropic")
    assert all(len(t) <= 1 for t in turns)  # no message made of two turns' blocks
    order = [t for each in turns for t in each]
    assert order == sorted(order) and 16 not in [t for each in turns[:3] for t in each]


def test_formats_rewrites_match_each_side_of_the_summary_from_its_own_end() -> None:
    """Head side from the gap's start, tail side from its end; two fits or none: no match."""
    ask = {"role": "user", "content": [{"type": "text", "text": "Q"}, {"type": "image_url"}]}
    noted = {**ask, "content": [{"type": "text", "text": "Q"}, {"type": "text", "text": "[img]"}]}
    later = {**ask}  # a later turn, dropped, that reads the same as the head's last message
    first = {"role": "user", "content": "start"}
    said = [{"role": "assistant", "content": f"a{n}"} for n in range(4)]
    end = {"role": "user", "content": "now"}
    before = [first, ask, said[0], said[1], later, said[2], said[3], end]
    merged = {**said[3], "content": "S\n\na3", MERGED_KEY: True}
    new_noted = {**noted}
    view = [first, new_noted, merged, end]

    def found(view: list[Any], before: list[Any]) -> list[int | None]:
        """For each message of ``view``, the place in ``before`` of the original found."""
        got = rewritten_from(view, before, merged_key=MERGED_KEY, is_summary=is_summary_message)
        places = {id(m): n for n, m in enumerate(before)}
        return [places[id(got[id(m)])] if id(m) in got else None for m in view]

    assert found(view, before) == [None, 1, 6, None]  # not ``later`` (4)
    # a standalone summary: what follows it is the tail, matched from the end
    summary = {"role": "assistant", "content": "S", "_compressed_summary": True}
    tool = {"role": "tool", "tool_call_id": "c1", "content": "x" * 500}
    pruned = {**tool, "content": "[pruned]"}
    before = [first, ask, said[0], later, said[1], tool, end]
    got = found([first, {**noted}, summary, pruned, end], before)
    assert got == [None, 1, None, 5, None]
    # the first original on the head side does not fit: no later one is guessed at
    assert found([first, {**noted}, summary, end], [first, said[0], later, end])[1] is None
    # no summary in the gap and two originals fit: the walks from either end disagree
    assert found([first, {**noted}, end], [first, ask, later, end]) == [None, None, None]
    # no summary, one original each: matched in place
    assert found([first, {**noted}, end], [first, ask, end]) == [None, 1, None]
