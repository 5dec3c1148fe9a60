"""A long conversation through the Agents SDK's own ``Runner`` with our session: 60+ turns with
tool calls in a 16K window, against a loopback model that refuses anything over the window.

What must hold: compaction happens through our code several times, no request exceeds the
window, every request and the history the host keeps are valid for the provider (each
function_call_output after its function_call), our memory tool works from inside the run,
and our store holds the transcript.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agents_sdk_support import (
    WINDOW,
    converse,
    host_config,
    make_agent,
    pair_problems,
    require_agents,
)

require_agents()

from fake_openai import FakeLLM  # noqa: E402
from fake_responses import AgentModel  # noqa: E402

import hermes_core as hc  # noqa: E402
from hermes_plugins.openai_agents import HermesSession  # noqa: E402

TURNS = 64


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_sixty_turns_with_tools_stay_under_a_16k_window(
    llm: FakeLLM, tmp_path: Path, api: str
) -> None:
    asyncio.run(_sixty_turns(llm, tmp_path, api))


async def _sixty_turns(llm: FakeLLM, tmp_path: Path, api: str) -> None:
    model = llm.responder
    assert isinstance(model, AgentModel)
    events: list[str] = []
    host = hc.Hermes.from_config(host_config(), home=tmp_path / "home")
    session = HermesSession(
        "long-1", host=host, user_id="alice", on_event=lambda e: events.append(e.kind)
    )
    agent = make_agent(session, llm.base_url, api)
    results = await converse(session, agent, 0, TURNS)

    # the SDK's own loop ran every turn to a text reply, calling tools on the way
    assert len(results) == TURNS
    assert all(str(r.final_output).startswith("Answer ") for r in results)
    calls = [i for r in results for i in r.new_items if i.type == "tool_call_item"]
    names = {getattr(i.raw_item, "name", None) for i in calls}
    assert {"lookup", "memory", "session_search"} <= names
    assert len(model.prompts) > TURNS + 30  # tool rounds are requests of their own

    # compaction through our code, several times; never a request over the window
    assert session.compactions >= 3, session.compactions
    assert events.count("compaction_committed") >= 3
    assert model.refused == [] and max(model.prompts) <= WINDOW
    assert sum(model.cached) > sum(model.prompts) // 2  # stable prefixes: the cache is hit
    assert "transcript_replaced" not in events and "store_error" not in events
    # every request carried valid tool pairs, and so does the history the host keeps
    assert model.broken == []
    history = await session.get_items()
    assert pair_problems(history) == []
    assert pair_problems(results[-1].to_input_list()) == []
    # the history is what we compacted: far shorter than the conversation
    assert len(history) < TURNS

    # our memory tool wrote the user's facts from inside the run
    user_md = (tmp_path / "home" / "memories" / "users").rglob("USER.md")
    assert any("prefers green tea" in p.read_text() for p in user_md)
    # the store holds every message: the active view plus the archived rows
    store = host.session_store
    assert store is not None
    rows = store.messages(session.hermes.session_id, include_archived=True)
    users = [r for r in rows if r.message.get("role") == "user"]
    assert len(users) >= TURNS
    assert any(not r.active for r in rows)
    # our count was anchored on the real usage of every request, each once
    record = store.get_session(session.hermes.session_id, user_id="alice")
    assert record is not None
    assert record.counters.get("requests") == len(model.prompts)
    await session.aclose()
    host.close()


def test_without_the_filter_the_session_alone_compacts_between_runs(
    llm: FakeLLM, tmp_path: Path
) -> None:
    asyncio.run(_plain(llm, tmp_path))


async def _plain(llm: FakeLLM, tmp_path: Path) -> None:
    """``Runner.run(agent, input, session=...)`` and nothing else: each run starts from our
    compacted view, so a conversation of short turns stays under the window."""
    model = llm.responder
    assert isinstance(model, AgentModel)
    host = hc.Hermes.from_config(host_config(), home=tmp_path / "home")
    session = HermesSession("plain-1", host=host, user_id="alice")
    agent = make_agent(session, llm.base_url)
    results = await converse(session, agent, 0, 60, filtered=False)
    assert len(results) == 60
    assert session.compactions >= 2
    assert model.refused == [] and max(model.prompts) <= WINDOW
    assert model.broken == []
    await session.aclose()
    host.close()


@pytest.mark.parametrize("filtered", [True, False])
def test_one_run_of_many_tool_calls_needs_the_input_filter(
    llm: FakeLLM, tmp_path: Path, filtered: bool
) -> None:
    """Within a run the SDK grows its list in memory without asking the session: only the
    input filter (``session.run_config()``) compacts between those requests. Without it, a
    run of 45 tool calls goes over the window (the reason the filter is part of the setup)."""
    asyncio.run(_sweep(llm, tmp_path, filtered))


async def _sweep(llm: FakeLLM, tmp_path: Path, filtered: bool) -> None:
    from agents import RunConfig, Runner
    from openai import BadRequestError

    model = llm.responder
    assert isinstance(model, AgentModel)
    host = hc.Hermes.from_config(host_config(), home=tmp_path / "home")
    session = HermesSession("sweep-1", host=host, user_id="alice")
    agent = make_agent(session, llm.base_url)
    await converse(session, agent, 1, 3, filtered=filtered)
    base = RunConfig(tracing_disabled=True)
    config = session.run_config(base) if filtered else base
    sweep = 'run the sweep [tool lookup {"q": "s"} x45]'
    if filtered:  # the usage hooks too (needed before SDK 0.20; each response counted once)
        hooks = session.run_hooks()
        result = await Runner.run(
            agent, sweep, session=session, run_config=config, hooks=hooks, max_turns=60
        )
        assert str(result.final_output).startswith("Answer ")
        assert model.refused == [] and max(model.prompts) <= WINDOW
        assert session.compactions >= 1
        store = host.session_store
        assert store is not None
        record = store.get_session(session.hermes.session_id, user_id="alice")
        assert record is not None and record.counters.get("requests") == len(model.prompts)
    else:
        with pytest.raises(BadRequestError, match="maximum context length"):
            await Runner.run(agent, sweep, session=session, run_config=config, max_turns=60)
        assert model.refused
    assert model.broken == []
    await session.aclose()
    host.close()


def test_streamed_runs_use_the_same_session(llm: FakeLLM, tmp_path: Path) -> None:
    """``Runner.run_streamed`` (server-sent events from the loopback model) goes through the
    same session calls: 40 turns with tools, compacted, never over the window."""
    asyncio.run(_streamed(llm, tmp_path))


async def _streamed(llm: FakeLLM, tmp_path: Path) -> None:
    from agents import RunConfig, Runner
    from agents_sdk_support import turn_text, usage_reaches_the_session

    model = llm.responder
    assert isinstance(model, AgentModel)
    host = hc.Hermes.from_config(host_config(), home=tmp_path / "home")
    session = HermesSession("stream-1", host=host, user_id="alice")
    agent = make_agent(session, llm.base_url)
    config = session.run_config(RunConfig(tracing_disabled=True))
    hooks = None if usage_reaches_the_session() else session.run_hooks()
    finals = []
    for number in range(40):
        text = turn_text(number)
        result = Runner.run_streamed(agent, text, session=session, run_config=config, hooks=hooks)
        kinds = {event.type async for event in result.stream_events()}
        assert "run_item_stream_event" in kinds
        finals.append(str(result.final_output))
    assert all(text.startswith("Answer ") for text in finals)
    assert all((r.json or {}).get("stream") is True for r in llm.requests)
    assert session.compactions >= 1
    assert model.refused == [] and model.broken == [] and max(model.prompts) <= WINDOW
    assert pair_problems(await session.get_items()) == []
    store = host.session_store
    assert store is not None
    record = store.get_session(session.hermes.session_id, user_id="alice")
    assert record is not None and record.counters.get("requests") == len(model.prompts)
    await session.aclose()
    host.close()
