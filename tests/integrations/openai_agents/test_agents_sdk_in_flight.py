"""The Agents SDK input filter between tool calls (issue 24 item 3): a request whose last
function calls are not all answered yet is compacted around them; the call items and the
outputs that arrived stay verbatim at the end, and the outputs still running pair with them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from agents_sdk_support import host_config, pair_problems, require_agents

require_agents()

import hermes_core as hc  # noqa: E402
from hermes_plugins.openai_agents import HermesSession  # noqa: E402

Item = dict[str, Any]


def _call(call_id: str) -> Item:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": "lookup",
        "arguments": json.dumps({"q": call_id}),
    }


def _output(call_id: str, text: str) -> Item:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def _history(rounds: int) -> list[Item]:
    items: list[Item] = [{"role": "user", "content": "Measure every sensor, then report."}]
    for n in range(rounds):
        items += [_call(f"h{n}"), _output(f"h{n}", f"sensor h{n}: " + "steady reading; " * 120)]
    return items


def test_the_input_filter_compacts_around_function_calls_in_flight(tmp_path: Path) -> None:
    live = [_call("live0"), _call("live1"), _call("live2")]  # one parallel batch
    arrived, later = (
        [_output("live1", "sensor live1: hot")],
        [
            _output("live0", "sensor live0: ok"),
            _output("live2", "sensor live2: ok"),
        ],
    )
    given = [*_history(40), *live, *arrived]
    events: list[str] = []

    async def run() -> list[Any]:
        with hc.Hermes.from_config(host_config(), home=tmp_path / "home") as host:
            session = HermesSession("f-1", host=host, on_event=lambda e: events.append(e.kind))
            data = SimpleNamespace(
                model_data=SimpleNamespace(input=given, instructions="You are careful."),
                agent=None,
                context=None,
            )
            out = await session.model_input_filter(data)
            await session.aclose()
            return list(out.input)

    sent = asyncio.run(run())
    assert "compaction_committed" in events
    assert sent[:-4] != given[:-4]  # compacted before the batch
    assert sent[-4:] == given[-4:]  # the calls in flight and the output that arrived, verbatim
    assert pair_problems([*sent, *later]) == []  # the outputs still running pair with them
