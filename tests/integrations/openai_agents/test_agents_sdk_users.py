"""Two users on one host: neither sees the other's sessions, search results or memory,
through the SDK's own loop and our tools."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from agents_sdk_support import host_config, make_agent, require_agents

require_agents()

from agents import RunConfig, Runner  # noqa: E402
from fake_openai import FakeLLM  # noqa: E402

import hermes_core as hc  # noqa: E402
from hermes_plugins.openai_agents import HermesSession  # noqa: E402

REMEMBER = '[tool memory {"action": "add", "target": "user", "content": "alice sails to Zanzibar"}]'
SEARCH = '[tool session_search {"query": "Zanzibar"}]'


async def ask(session: HermesSession, llm: FakeLLM, text: str) -> str:
    agent = make_agent(session, llm.base_url)
    config = session.run_config(RunConfig(tracing_disabled=True))
    result = await Runner.run(agent, text, session=session, run_config=config)
    return str(result.final_output)


def search_results(llm: FakeLLM, since: int) -> list[object]:
    """The results of the session_search calls answered since request ``since``."""
    found = []
    for request in llm.requests[since:]:
        items = (request.json or {}).get("input", [])
        ours = {i.get("call_id") for i in items if i.get("name") == "session_search"}
        last = items[-1] if items else {}
        if last.get("type") == "function_call_output" and last.get("call_id") in ours:
            found.append(json.loads(last["output"])["results"])
    return found


def test_two_users_never_see_each_others_memory_or_sessions(llm: FakeLLM, tmp_path: Path) -> None:
    asyncio.run(_two_users(llm, tmp_path))


async def _two_users(llm: FakeLLM, tmp_path: Path) -> None:
    host = hc.Hermes.from_config(host_config(), home=tmp_path / "home")
    alice = HermesSession("a-1", host=host, user_id="alice")
    bob = HermesSession("b-1", host=host, user_id="bob")
    await ask(alice, llm, f"planning the Zanzibar trip {REMEMBER}")
    await ask(bob, llm, "what is on my calendar?")
    await ask(alice, llm, "Zanzibar again: which harbour?")
    # bob's history is his own
    bob_items = json.dumps(await bob.get_items())
    assert "Zanzibar" not in bob_items and "calendar" in bob_items
    assert "Zanzibar" in json.dumps(await alice.get_items())
    # bob cannot open alice's session id
    with pytest.raises(hc.SessionError):
        HermesSession("a-1", host=host, user_id="bob")
    for session in (alice, bob):
        await session.aclose()
    # search reaches the user's earlier sessions: bob's finds nothing of alice's, hers does
    alice2 = HermesSession("a-2", host=host, user_id="alice")
    bob2 = HermesSession("b-2", host=host, user_id="bob")
    since = len(llm.requests)
    await ask(bob2, llm, f"search my past {SEARCH}")
    assert search_results(llm, since) == [[]]
    since = len(llm.requests)
    await ask(alice2, llm, f"search my past {SEARCH}")
    (found,) = search_results(llm, since)
    assert found and "Zanzibar" in json.dumps(found)
    # alice's instructions carry her USER.md fact, bob's do not
    since = len(llm.requests)
    await ask(alice2, llm, "hello again")
    await ask(bob2, llm, "hello again")
    alice_req, bob_req = (r.json for r in llm.requests[since:])
    assert "alice sails to Zanzibar" in alice_req["instructions"]
    assert "sails" not in json.dumps(bob_req)  # (bob typed "Zanzibar" in his search)
    for session in (alice2, bob2):
        await session.aclose()
    host.close()
