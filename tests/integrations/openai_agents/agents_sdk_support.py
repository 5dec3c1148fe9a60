"""What the Agents SDK tests share: the skip-or-fail rule, a host on the loopback model, the
scripted conversation and the checks a provider would make of a transcript.

Also a script: ``python agents_sdk_support.py BASE_URL HOME SESSION USER FIRST LAST`` is a
host process that talks turns FIRST..LAST-1 and exits (the restart test runs it twice).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

WINDOW = 16_384
TOOL_TEXT = "measurement {q}: " + "reading steady within tolerance; " * 40


def require_agents() -> None:
    """Skip without the SDK, unless OPENAI_AGENTS_REQUIRED=1 (the tox environment): then a
    missing SDK fails loudly."""
    if os.environ.get("OPENAI_AGENTS_REQUIRED") != "1":
        pytest.importorskip("agents")
    from agents import set_tracing_disabled

    set_tracing_disabled(True)  # no trace export: nothing leaves the loopback


def host_config(window: int = WINDOW) -> dict[str, Any]:
    return {"model": {"context_length": window, "name": "gpt-4o"}}


def turn_text(number: int) -> str:
    """The user's words of turn ``number``: tool calls on some turns (our memory tool, the
    host's own tool, twice in a row), text on the others."""
    text = f"turn {number}: tell me about topic {number}, keep the details."
    if number % 10 == 4:
        fact = f"user fact {number}: prefers green tea"
        text += f' [tool memory {{"action": "add", "target": "user", "content": "{fact}"}}]'
    elif number % 3 == 0:
        text += f' [tool lookup {{"q": "sensor-{number}"}} x2]'
    elif number % 7 == 5:
        text += ' [tool session_search {"query": "topic"}]'
    return text


def lookup_tool() -> Any:
    from agents import function_tool

    @function_tool
    def lookup(q: str) -> str:
        """Read a measurement by name."""
        return TOOL_TEXT.format(q=q)

    return lookup


def make_agent(session: Any, base_url: str, api: str = "responses") -> Any:
    """An agent on the loopback model with the host's tool and ours."""
    from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)
    model: Any
    if api == "chat":
        model = OpenAIChatCompletionsModel(model="gpt-4o", openai_client=client)
    else:
        model = OpenAIResponsesModel(model="gpt-4o", openai_client=client)
    return Agent(
        name="assistant",
        instructions="You are a careful assistant.",
        model=model,
        tools=[lookup_tool(), *session.tools()],
    )


def usage_reaches_the_session() -> bool:
    """SDK 0.20 and later hand the run's usage to a session whose methods take ``wrapper``;
    before, the host passes ``hooks=session.run_hooks()``."""
    from agents.memory import session

    return hasattr(session, "_session_accepts_wrapper")


async def converse(
    session: Any, agent: Any, first: int, last: int, *, filtered: bool = True
) -> list[Any]:
    """Turns ``first``..``last - 1`` through ``Runner.run``; the results."""
    from agents import RunConfig, Runner

    kwargs: dict[str, Any] = {}
    if filtered:
        kwargs["run_config"] = session.run_config(RunConfig(tracing_disabled=True))
    if not usage_reaches_the_session():
        kwargs["hooks"] = session.run_hooks()
    results = []
    for number in range(first, last):
        results.append(await Runner.run(agent, turn_text(number), session=session, **kwargs))
    return results


def pair_problems(items: list[dict[str, Any]]) -> list[str]:
    """A provider's tool-pair checks of a list of Responses items."""
    from fake_responses import pair_problems as problems
    from fake_responses import responses_units

    return problems(responses_units({"input": items}))


def _main(argv: list[str]) -> int:
    """One host process: open the session, talk, close, print what it saw."""
    from agents import set_tracing_disabled

    import hermes_core as hc
    from hermes_plugins.openai_agents import HermesSession

    base_url, home, session_id, user, first, last = argv
    set_tracing_disabled(True)

    async def run() -> dict[str, Any]:
        host = hc.Hermes.from_config(host_config(), home=home)
        session = HermesSession(session_id, host=host, user_id=user)
        history = await session.get_items()
        agent = make_agent(session, base_url)
        await converse(session, agent, int(first), int(last))
        await session.aclose()
        host.close()
        return {"history": len(history), "compactions": session.compactions}

    print(json.dumps(asyncio.run(run())))
    return 0


if __name__ == "__main__":
    sys.path[:0] = [str(Path(__file__).resolve().parents[2] / "support")]
    raise SystemExit(_main(sys.argv[1:]))
