#!/usr/bin/env python3
"""Our per-turn overhead inside hermes-agent 0.19, against its own default compressor.

The same scripted conversation (tests/support/agent_model.py: a ``read_file`` of a workspace
file of ``--file-lines`` lines every other turn, text answers between) runs through
hermes-agent's own loop (``AIAgent.run_conversation``) twice in one process, turn by turn
alternately: once with the host's defaults (its ``ContextCompressor``, its built-in memory),
once with our plugins (``context.engine: hermes-context``, ``memory.provider: hermes_context``,
the shim written by ``hermes-context hermes-agent install``), each in its own hermes home and
against its own loopback model (which refuses nothing: ``--window`` is what the host is told).
Both compact at their own default thresholds through an LLM summary from the same loopback
model (hermes-agent: ``auxiliary.compression``; ours: ``auxiliary.compression`` in our
config); both sides' background memory and skill reviews are off (hermes-agent's by config,
ours by the plugin's default), since their interleaved requests would be charged to the
conversation by the loopback model's one-slot prompt cache.

Reported per side: the median and p90 wall time of a turn (the HTTP round trips to the
loopback model included), the median time spent inside the engine's and memory provider's
methods per turn (``ENGINE_METHODS``, ``MEMORY_METHODS``), compactions, and the prompt tokens
billed (all input, the cached part: the prefix shared with the previous request, and
billed-equivalent = uncached + 0.1 x cached). Ratios are ours / hermes-agent's;
``median_paired_turn`` is the median over n of ours' turn n / the default's turn n.

    python bench/hermes_agent_overhead.py [--turns 60] [--window 65536] [--file-lines 200]
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]

from agent_model import AgentModel  # noqa: E402
from fake_openai import FakeLLM  # noqa: E402

ENGINE_METHODS = (
    "update_from_response",
    "should_compress",
    "should_compress_preflight",
    "should_defer_preflight_to_real_usage",
    "compress",
    "on_session_start",
)
MEMORY_METHODS = (
    "initialize",
    "prefetch",
    "queue_prefetch",
    "sync_turn",
    "on_pre_compress",
    "system_prompt_block",
    "on_turn_start",
)


class Clock:
    """Time spent inside the wrapped methods, per turn."""

    def __init__(self) -> None:
        self.current = 0.0

    def wrap(self, target: Any, names: tuple[str, ...]) -> None:
        for name in names:
            method = getattr(target, name, None)
            if callable(method):
                setattr(target, name, self._timed(method))

    def _timed(self, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.current += time.perf_counter() - start

        return timed

    def take(self) -> float:
        value, self.current = self.current, 0.0
        return value


def make_home(root: Path, base_url: str, *, ours: bool, window: int) -> Path:
    home = root / ("ours" if ours else "default")
    home.mkdir(parents=True)
    lines = [
        f"model:\n  context_length: {window}\n",
        "compression:\n  in_place: true\n",
        # no background memory/skill reviews: they interleave requests the loopback model's
        # one-slot prompt cache would charge to the conversation
        "memory:\n  nudge_interval: 0\n"
        + ("  provider: hermes_context\n" if ours else "")
        + "skills:\n  creation_nudge_interval: 0\n",
        "auxiliary:\n  compression:\n    provider: custom\n"
        f"    base_url: {base_url}\n    model: agent-model\n    api_key: sk-loopback\n",
    ]
    if ours:
        from hermes_core.cli import main

        assert main(["hermes-agent", "install", "--home", str(home)]) == 0
        lines.append("context:\n  engine: hermes-context\nplugins:\n  enabled: [hermes-context]\n")
        with (home / "hermes-context" / "config.yaml").open("a", encoding="utf-8") as config:
            config.write(
                f"auxiliary:\n  compression:\n    base_url: {base_url}\n    model: agent-model\n"
            )
    (home / "config.yaml").write_text("".join(lines), encoding="utf-8")
    return home


class Side:
    """One hermes-agent, its home, its loopback model and its clocks."""

    def __init__(self, root: Path, *, ours: bool, window: int) -> None:
        files = root / "ws"
        self.llm = FakeLLM()
        self.model = AgentModel(
            window=10 * window,
            tool_for_turn=lambda n: (
                ("read_file", {"path": str(files / f"f{n % 6 + 1}.txt")}) if n % 2 == 0 else None
            ),
        )
        self.llm.responder = self.model
        self.ours = ours
        self.home = make_home(root, self.llm.base_url, ours=ours, window=window)
        self.history: list[dict[str, Any]] = []
        self.turn_times: list[float] = []
        self.inside: list[float] = []
        self.clock = Clock()
        self.agent: Any = None

    def start(self) -> None:
        os.environ["HERMES_HOME"] = str(self.home)  # before the import: it discovers plugins
        from run_agent import AIAgent

        self.agent = AIAgent(
            base_url=self.llm.base_url,
            api_key="sk-loopback",
            model="agent-model",
            quiet_mode=True,
            enabled_toolsets=["file", "todo", "memory"],
            session_id="bench-ours" if self.ours else "bench-default",
            skip_context_files=True,
            max_iterations=8,
        )
        self.clock.wrap(self.agent.context_compressor, ENGINE_METHODS)
        manager = getattr(self.agent, "_memory_manager", None)
        for provider in getattr(manager, "providers", []) or []:
            self.clock.wrap(provider, MEMORY_METHODS)

    def turn(self, n: int) -> None:
        os.environ["HERMES_HOME"] = str(self.home)
        self.clock.take()
        start = time.perf_counter()
        result = self.agent.run_conversation(
            f"turn {n}: please continue", conversation_history=self.history
        )
        self.turn_times.append(time.perf_counter() - start)
        self.inside.append(self.clock.take())
        self.history = result["messages"]

    def report(self) -> dict[str, Any]:
        engine = self.agent.context_compressor
        billed = sum(self.model.sizes)
        cached = sum(self.model.cached)
        times = sorted(self.turn_times)
        return {
            "engine": type(engine).__name__,
            "threshold_tokens": engine.threshold_tokens,
            "median_turn_ms": round(statistics.median(times) * 1000, 2),
            "p90_turn_ms": round(times[int(0.9 * (len(times) - 1))] * 1000, 2),
            "median_inside_ms": round(statistics.median(self.inside) * 1000, 3),
            "compactions": engine.compression_count,
            "summaries": self.model.summaries,
            "requests": len(self.model.sizes),
            "prompt_tokens": billed,
            "cached_tokens": cached,
            "billed_eq": round(billed - cached + 0.1 * cached),
            "max_request": max(self.model.sizes),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--window", type=int, default=65_536)
    parser.add_argument("--file-lines", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    logging.disable(logging.WARNING if not os.environ.get("BENCH_DEBUG") else logging.NOTSET)
    if os.environ.get("BENCH_DEBUG"):
        logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ws").mkdir()
        for i in range(1, 7):
            lines = range(args.file_lines)
            body = "\n".join(f"line {j} of file {i}: notes about module {i}" for j in lines)
            (root / "ws" / f"f{i}.txt").write_text(body, encoding="utf-8")
        sides = [
            Side(root, ours=False, window=args.window),
            Side(root, ours=True, window=args.window),
        ]
        # ours first: hermes-agent discovers plugins once per process, with the config of the
        # home it sees then (ours enables the entry point; the default home selects its own)
        for side in reversed(sides):
            side.start()
        for n in range(1, args.turns + 1):
            for side in sides if n % 2 else reversed(sides):  # alternate who goes first
                side.turn(n)
        reports = [side.report() for side in sides]
        for side in sides:
            side.agent.shutdown_memory_provider(side.history)
            side.llm.close()
    default, ours = reports
    ratio = {
        key: round(ours[key] / default[key], 3) if default[key] else None
        for key in ("median_turn_ms", "p90_turn_ms", "prompt_tokens", "billed_eq")
    }
    # turn n of one side against turn n of the other: the same work, so a machine hiccup in
    # one turn moves one pair, not the whole median
    paired = [o / d for o, d in zip(sides[1].turn_times, sides[0].turn_times, strict=True) if d]
    ratio["median_paired_turn"] = round(statistics.median(paired), 3)
    out = {
        "turns": args.turns,
        "window": args.window,
        "default": default,
        "ours": ours,
        "ratio_ours_over_default": ratio,
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{args.turns} turns, window {args.window:,}, files of {args.file_lines} lines")
    for name, rep in (("hermes-agent default", default), ("hermes-context", ours)):
        print(
            f"{name:22} {rep['engine']} at {rep['threshold_tokens']:,}:"
            f" turn median {rep['median_turn_ms']:8.2f} ms  p90 {rep['p90_turn_ms']:8.2f} ms"
            f"  inside {rep['median_inside_ms']:7.3f} ms  compactions {rep['compactions']}"
            f"  prompt {rep['prompt_tokens']:,}  cached {rep['cached_tokens']:,}"
            f"  billed-eq {rep['billed_eq']:,}  max request {rep['max_request']:,}"
        )
    print("ours / default: " + ", ".join(f"{k} {v}" for k, v in ratio.items()))


if __name__ == "__main__":
    main()
