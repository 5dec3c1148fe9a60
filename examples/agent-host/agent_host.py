"""A complete agent host on hermes-context, against a loopback model (no network, no key).

Run it:  python examples/agent-host/agent_host.py [--home DIR] [--turns 60]

It is written from docs/hosts.md alone: one ``Hermes`` per process, one ``Session`` per
conversation, and around every model request ``prepare`` -> request -> ``record_usage``,
tools through ``handle_tool_call``, ``end_turn`` when the reply is delivered. The model's
window is 16,000 tokens and every turn reads a ~1,300-token file, so the conversation is
compacted many times on the way; the host never counts a token itself.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loopback_model import LoopbackModel

import hermes_core as hc

READ_FILE = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file of the project.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
}


def read_file(arguments: str) -> str:
    """The host's own tool: a made-up source file of about 1,300 tokens."""
    path = json.loads(arguments).get("path", "?")
    lines = [f"# {path}"]
    lines += [
        f"def handler_{n}(request):\n    return respond(request, code={n})" for n in range(90)
    ]
    return "\n".join(lines)


def run_conversation(
    host: hc.Hermes,
    model_url: str,
    session_id: str,
    user_id: str,
    prompts: list[str],
    *,
    system: str = "You are a helpful coding agent.",
) -> dict[str, Any]:
    """One conversation; returns what the host saw (replies, events)."""
    events: list[hc.SessionEvent] = []
    replies: list[str] = []
    with host.session(session_id, user_id=user_id, on_event=events.append) as session:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": session.system_prompt(system)}
        ]
        tools = [READ_FILE, *session.tools()]
        ours = {t["function"]["name"] for t in session.tools()}
        with httpx.Client(base_url=model_url, timeout=30) as client:
            for prompt in prompts:
                messages.append({"role": "user", "content": prompt})
                for _round in range(6):  # tool rounds, and one retry after an overflow
                    request = {"model": "main", "messages": session.prepare(messages)}
                    response = client.post("/chat/completions", json={**request, "tools": tools})
                    body = response.json()
                    if response.status_code != 200:
                        session.on_overflow(response.status_code, body["error"]["message"])
                        continue
                    session.record_usage(body["usage"])
                    reply = body["choices"][0]["message"]
                    messages.append(reply)
                    calls = reply.get("tool_calls") or []
                    for call in calls:
                        name, arguments = call["function"]["name"], call["function"]["arguments"]
                        result = (
                            session.handle_tool_call(name, arguments)
                            if name in ours
                            else read_file(arguments)
                        )
                        messages.append(
                            {"role": "tool", "tool_call_id": call["id"], "content": result}
                        )
                    if not calls:
                        replies.append(reply.get("content") or "")
                        break
                session.end_turn(messages)
        final_id = session.session_id
        first_system = messages[0]["content"]
    return {"replies": replies, "events": events, "session_id": final_id, "system": first_system}


def write_config(home: Path, model_url: str, context_length: int) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        "model:\n"
        "  name: gpt-4o\n"
        f"  context_length: {context_length}\n"
        "auxiliary:\n"
        "  compression:\n"
        f"    base_url: {model_url}\n"
        "    model: summariser\n",
        encoding="utf-8",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--context-length", type=int, default=16_000)
    args = parser.parse_args(argv)
    home = args.home or Path(tempfile.mkdtemp(prefix="hermes-example-"))
    model = LoopbackModel(context_length=args.context_length)
    try:
        write_config(home, model.base_url, args.context_length)
        host = hc.Hermes.from_config(home=home)
        prompts = ["remember: I prefer tabs over spaces"]
        prompts += [f"read: src/module_{n}.py" for n in range(1, args.turns)]
        with host:
            first = run_conversation(host, model.base_url, "alice-1", "alice", prompts)
            second = run_conversation(host, model.base_url, "alice-2", "alice", ["search: tabs"])
        compactions = sum(e.kind == "compaction_committed" for e in first["events"])
        print(f"home: {home}")
        print(f"requests: {len(model.prompt_tokens)}, largest prompt {max(model.prompt_tokens):,}")
        print(f"window: {args.context_length:,}; refused as too long: {model.refused}")
        print(f"compactions committed: {compactions}; summaries written: {model.summaries}")
        print(f"memory in the next session's prompt: {'tabs over spaces' in second['system']}")
        print(f"second session's search: {second['replies'][-1][:70]}")
    finally:
        model.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
