#!/usr/bin/env python3
"""Our per-turn overhead inside the OpenAI Agents SDK, against the SDK's own default session.

The same scripted conversation (tests/integrations/openai_agents: text turns, our memory tool,
a host tool called twice in a row, session_search) runs through ``Runner.run`` twice in one
process, turn by turn alternately: once with the SDK's ``SQLiteSession`` (a file in a temporary
folder), once with ``HermesSession`` and its input filter (``session.run_config()``), our
store in a temporary home, the window ``--window`` tokens. Each session talks to its own
loopback model (tests/support/fake_responses.py: deterministic answers, usage priced from
the request, cached tokens = the prefix shared with the previous request); the model refuses
nothing here, so the SDK's session grows without bound while ours compacts.

Reported per session: the median and p90 wall time of a turn (``Runner.run`` from call to
result, the HTTP round trips to the loopback model included), the median over the turns before
our first compaction (both sessions send the same prompts there, so it is our overhead at equal
prompt sizes; afterwards ours sends less), the median time spent inside the
session's own calls per turn (``get_items``, ``add_items``, ``pop_item``, and for ours the
input filter), and the prompt tokens billed (all input, the cached part, and billed-equivalent =
uncached + 0.1 x cached). Ratios are ours / SQLiteSession.

    python bench/agents_sdk_overhead.py [--turns 60] [--window 16384]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [
    str(ROOT),
    str(ROOT / "tests" / "support"),
    str(ROOT / "tests" / "integrations" / "openai_agents"),
]


class Clock:
    """Time spent inside a session's calls, per turn."""

    def __init__(self) -> None:
        self.current = 0.0

    def wrap(self, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)  # keeps the signature: the SDK looks for ``wrapper``
        async def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await method(*args, **kwargs)
            finally:
                self.current += time.perf_counter() - start

        return timed

    def take(self) -> float:
        spent, self.current = self.current, 0.0
        return spent


def instrument(session: Any, clock: Clock, names: tuple[str, ...]) -> None:
    for name in names:
        setattr(session, name, clock.wrap(getattr(session, name)))


async def run(turns: int, window: int) -> dict[str, dict[str, Any]]:
    from agents import RunConfig, Runner, SQLiteSession, set_tracing_disabled
    from agents_sdk_support import host_config, make_agent, turn_text
    from fake_openai import FakeLLM
    from fake_responses import RESPONSES, AgentModel

    import hermes_core as hc
    from hermes_plugins.openai_agents import HermesSession

    set_tracing_disabled(True)
    protocol = ("get_items", "add_items", "pop_item")
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as sdk_llm, FakeLLM() as our_llm:
        models = {}
        for name, llm in (("sqlite", sdk_llm), ("hermes", our_llm)):
            llm.add_route(RESPONSES)
            models[name] = AgentModel(window=10**9)
            llm.responder = models[name]
        host = hc.Hermes.from_config(host_config(window), home=Path(tmp) / "home")
        ours = HermesSession("bench-1", host=host, user_id="bench")
        theirs = SQLiteSession("bench-1", str(Path(tmp) / "sdk.db"))
        clocks = {"sqlite": Clock(), "hermes": Clock()}
        instrument(theirs, clocks["sqlite"], protocol)
        instrument(ours, clocks["hermes"], (*protocol, "model_input_filter"))
        base = RunConfig(tracing_disabled=True)
        setups = {
            "sqlite": (theirs, make_agent(ours, sdk_llm.base_url), base),
            "hermes": (ours, make_agent(ours, our_llm.base_url), ours.run_config(base)),
        }
        same = 0  # turns before our first compaction: both sessions sent the same prompts
        walls: dict[str, list[float]] = {"sqlite": [], "hermes": []}
        inside: dict[str, list[float]] = {"sqlite": [], "hermes": []}
        for number in range(turns):
            for name, (session, agent, config) in setups.items():
                start = time.perf_counter()
                await Runner.run(agent, turn_text(number), session=session, run_config=config)
                walls[name].append(time.perf_counter() - start)
                inside[name].append(clocks[name].take())
            if ours.compactions == 0:
                same = number + 1
        compactions = ours.compactions
        await ours.aclose()
        host.close()
        theirs.close()
    report = {}
    for name, model in models.items():
        cached = sum(model.cached)
        total = sum(model.prompts)
        report[name] = {
            "turn_median_ms": 1000 * statistics.median(walls[name]),
            "turn_p90_ms": 1000 * statistics.quantiles(walls[name], n=10)[-1],
            "same_median_ms": 1000 * statistics.median(walls[name][: max(same, 1)]),
            "session_median_ms": 1000 * statistics.median(inside[name]),
            "requests": len(model.prompts),
            "prompt_tokens": total,
            "cached_tokens": cached,
            "billed_eq": total - cached + 0.1 * cached,
            "largest_prompt": max(model.prompts),
        }
    report["hermes"]["compactions"] = compactions
    report["hermes"]["same"] = same
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--window", type=int, default=16_384)
    args = parser.parse_args(argv)
    report = asyncio.run(run(args.turns, args.window))
    sdk, ours = report["sqlite"], report["hermes"]
    print(f"{args.turns} turns, window {args.window:,} (ours: {ours['compactions']} compactions)")
    print(f"{'':22}{'SQLiteSession':>15}{'HermesSession':>15}{'ratio':>8}")
    rows = [
        ("turn median ms", "turn_median_ms", ".1f"),
        ("turn p90 ms", "turn_p90_ms", ".1f"),
        (f"  first {ours['same']} turns", "same_median_ms", ".1f"),
        ("in session ms/turn", "session_median_ms", ".2f"),
        ("requests", "requests", ",d"),
        ("prompt tokens", "prompt_tokens", ",d"),
        ("cached tokens", "cached_tokens", ",d"),
        ("billed-eq tokens", "billed_eq", ",.0f"),
        ("largest prompt", "largest_prompt", ",d"),
    ]
    for label, key, spec in rows:
        ratio = ours[key] / sdk[key] if sdk[key] else float("nan")
        print(f"{label:22}{format(sdk[key], spec):>15}{format(ours[key], spec):>15}{ratio:>8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
