"""Issue 27 item 9a: an answer that opens with our own summary header is a failure
(docs/compression.md: a summary containing the summary markers), whatever label it carries."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hermes_core.compression.assemble import END_MARKER, SUMMARY_PREFIX, is_summary_message
from hermes_core.compression.oneshot import compress
from hermes_core.config.settings import Settings


def rounds(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(n):
        args = json.dumps({"command": f"make step{i}"})
        call = {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": args}}
        out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        out.append({"role": "tool", "tool_call_id": f"c{i}", "content": "x" * 3000})
    return out


@pytest.mark.parametrize(
    "reply",
    [
        f"{SUMMARY_PREFIX}\n\n## Goal\nShip the release.",
        f"  {SUMMARY_PREFIX}\n## Goal\nShip the release.",
        f"## Goal\nShip the release.\n\n{SUMMARY_PREFIX}\nmore",
    ],
    ids=["opens-with-header", "indented-header", "header-inside"],
)
def test_an_answer_carrying_our_summary_header_falls_back(reply: str) -> None:
    settings = Settings()
    settings.model.tokenizer = "estimate"
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "go"},
        *rounds(30),
        {"role": "user", "content": "next"},
    ]
    result = compress(
        messages, context_length=8_192, config=settings, summarizer=lambda *_: reply, force=True
    )
    assert result.status == "compressed" and result.summarizer == "fallback"
    assert result.reason and "summary_marker" in result.reason
    summary = next(m for m in result.messages if is_summary_message(m))
    assert summary["content"].count(SUMMARY_PREFIX) == 1
    assert summary["content"].count(END_MARKER) == 1
