"""The session protocol's edges: bad input from a host is a clear error raised before anything
changes (never a traceback from deep inside), a usage record we cannot read never fails the
turn, ``pop_item`` and ``clear_session`` archive rather than delete, ``limit`` reads the tail."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from agents_sdk_support import WINDOW, host_config, make_agent, require_agents

require_agents()

from agents import RunConfig, Runner  # noqa: E402
from agents.memory import Session as SDKSession  # noqa: E402
from fake_openai import FakeLLM  # noqa: E402
from fake_responses import RESPONSES, AgentModel  # noqa: E402

import hermes_core as hc  # noqa: E402
from hermes_plugins.openai_agents import HermesSession  # noqa: E402

USER = {"role": "user", "content": "where is the config file?"}
REPLY = {
    "type": "message",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "In ~/.app/config.yaml.", "annotations": []}],
}


@pytest.fixture
def host(tmp_path: Path) -> Iterator[hc.Hermes]:
    made = hc.Hermes.from_config(host_config(), home=tmp_path / "home")
    yield made
    made.close()


def rows(host: hc.Hermes, session: HermesSession, *, archived: bool = False) -> list[Any]:
    store = host.session_store
    assert store is not None
    return store.messages(session.hermes.session_id, include_archived=archived)


def test_it_is_the_sdks_session(host: hc.Hermes) -> None:
    session = HermesSession("p-0", host=host, user_id="u")
    assert isinstance(session, SDKSession)
    session.close()


def test_bad_input_is_a_clear_error_and_changes_nothing(
    host: hc.Hermes, caplog: pytest.LogCaptureFixture
) -> None:
    async def run() -> None:
        session = HermesSession("p-1", host=host, user_id="u")
        await session.add_items([USER])
        with pytest.raises(hc.InvalidMessages, match=r"item 1: .*got object"):
            await session.add_items([REPLY, object()])
        with pytest.raises(hc.InvalidArgument, match="items"):
            await session.add_items("hello")  # type: ignore[arg-type]
        with pytest.raises(hc.InvalidArgument, match="limit"):
            await session.get_items(limit="3")  # type: ignore[arg-type]
        with pytest.raises(hc.InvalidMessages):  # an output for no call: refused, not stored
            await session.add_items(
                [{"type": "function_call_output", "call_id": "x", "output": ""}]
            )
        assert len(rows(host, session)) == 1
        # a usage record with strings: refused when handed in, skipped (logged) in a run
        with pytest.raises(hc.HermesError, match="input_tokens must be a whole number"):
            await session.arecord_usage({"input_tokens": "12", "output_tokens": 3})
        run_usage = SimpleNamespace(request_usage_entries=[{"input_tokens": "12"}])
        with caplog.at_level(logging.WARNING, logger="hermes_context.openai_agents"):
            await session.add_items([REPLY], wrapper=SimpleNamespace(usage=run_usage))
        assert "usage not recorded" in caplog.text
        assert len(rows(host, session)) == 2
        # the wrong state: every call after close says so
        await session.aclose()
        for call in (session.get_items(), session.add_items([USER]), session.pop_item()):
            with pytest.raises(hc.SessionError, match="closed HermesSession"):
                await call
        with pytest.raises(hc.SessionError, match="closed"):
            await session.clear_session()

    asyncio.run(run())


def test_a_bad_tool_call_is_an_answer_for_the_model_not_a_failed_turn(
    host: hc.Hermes,
) -> None:
    async def run() -> None:
        with FakeLLM() as llm:
            llm.add_route(RESPONSES)
            llm.responder = AgentModel(window=WINDOW)
            session = HermesSession("p-2", host=host, user_id="u")
            agent = make_agent(session, llm.base_url)
            config = session.run_config(RunConfig(tracing_disabled=True))
            text = 'remember this [tool memory {"action": "explode"}]'
            result = await Runner.run(agent, text, session=session, run_config=config)
            assert str(result.final_output).startswith("Answer ")
            outputs = [i.output for i in result.new_items if i.type == "tool_call_output_item"]
            assert len(outputs) == 1 and '"success": false' in str(outputs[0])
            await session.aclose()

    asyncio.run(run())


def test_pop_and_clear_archive_rows_never_delete_them(host: hc.Hermes) -> None:
    async def run() -> None:
        session = HermesSession("p-3", host=host, user_id="u")
        assert await session.pop_item() is None
        await session.add_items([USER])
        await session.add_items([REPLY])
        popped = await session.pop_item()
        assert popped == REPLY
        assert [i.get("role") for i in await session.get_items()] == ["user"]
        assert len(rows(host, session)) == 1
        assert len(rows(host, session, archived=True)) == 2  # the reply is archived, kept
        await session.add_items([REPLY])
        assert len(await session.get_items(limit=1)) == 1
        await session.clear_session()
        assert await session.get_items() == []
        assert rows(host, session) == []
        assert len(rows(host, session, archived=True)) == 3
        # the conversation goes on under the same id, from nothing
        await session.add_items([USER])
        assert [i.get("role") for i in await session.get_items()] == ["user"]
        await session.aclose()
        again = HermesSession("p-3", host=host, user_id="u")
        assert [i.get("role") for i in await again.get_items()] == ["user"]
        again.close()

    asyncio.run(run())


def test_run_sync_runs_each_call_on_a_fresh_loop(host: hc.Hermes) -> None:
    """``Runner.run_sync`` makes a new event loop per call: the session works on each."""
    with FakeLLM() as llm:
        llm.add_route(RESPONSES)
        llm.responder = AgentModel(window=WINDOW)
        session = HermesSession("p-4", host=host, user_id="u")
        agent = make_agent(session, llm.base_url)
        config = session.run_config(RunConfig(tracing_disabled=True))
        for text in ("first question", "second question", "third question"):
            result = Runner.run_sync(agent, text, session=session, run_config=config)
            assert str(result.final_output).startswith("Answer ")
        assert [i.get("role") for i in asyncio.run(session.get_items())] == [
            "user",
            "assistant",
        ] * 3
        session.close()


def test_without_the_sdk_the_error_is_the_pip_line(
    host: hc.Hermes, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = HermesSession("p-5", host=host, user_id="u")
    monkeypatch.setitem(sys.modules, "agents", None)  # as if not installed
    for call in (session.tools, session.run_config, session.run_hooks):
        with pytest.raises(hc.MissingExtraError, match=r"pip install '[^']*\[openai-agents\]'"):
            call()
    session.close()


def test_sdk_model_objects_are_taken_as_their_json_form(host: hc.Hermes) -> None:
    """A host may hand the SDK's (openai's) pydantic items rather than dicts."""
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage

    call = ResponseFunctionToolCall(
        type="function_call", call_id="c1", name="lookup", arguments='{"q": "a"}', id="fc_1"
    )
    reply = ResponseOutputMessage.model_validate({**REPLY, "id": "msg_1", "status": "completed"})

    async def run() -> None:
        session = HermesSession("p-6", host=host, user_id="u")
        await session.add_items([USER, call])
        await session.add_items([{"type": "function_call_output", "call_id": "c1", "output": "ok"}])
        await session.add_items([reply])
        items = await session.get_items()
        assert [i.get("type", "message") for i in items] == [
            "message",
            "function_call",
            "function_call_output",
            "message",
        ]
        assert [r.message["role"] for r in rows(host, session)] == [
            "user",
            "assistant",
            "tool",
            "assistant",
        ]
        await session.aclose()

    asyncio.run(run())


def test_a_limited_read_loses_nothing_with_the_input_filter(host: hc.Hermes) -> None:
    """``SessionSettings(limit=2)``: the SDK reads the newest two items; the input filter
    puts the older ones back in front, so nothing is archived as a rewritten history."""
    memory = pytest.importorskip("agents.memory")
    events: list[str] = []

    async def run() -> None:
        with FakeLLM() as llm:
            llm.add_route(RESPONSES)
            llm.responder = AgentModel(window=WINDOW)
            session = HermesSession(
                "p-7", host=host, user_id="u", on_event=lambda e: events.append(e.kind)
            )
            agent = make_agent(session, llm.base_url)
            plain = session.run_config(RunConfig(tracing_disabled=True))
            limited = session.run_config(
                RunConfig(tracing_disabled=True, session_settings=memory.SessionSettings(limit=2))
            )
            for text, config in (("one", plain), ("two", plain), ("three", limited)):
                await Runner.run(agent, text, session=session, run_config=config)
            last = llm.requests[-1].json["input"]
            asked = [i["content"] for i in last if i.get("role") == "user"]
            assert asked == ["one", "two", "three"]
            assert len(rows(host, session)) == 6
            await session.aclose()

    asyncio.run(run())
    assert "transcript_replaced" not in events


def test_threads_sharing_a_session_lose_nothing(host: hc.Hermes) -> None:
    """``Runner.run_sync`` in two threads: each call runs on its own event loop, so the lock
    must hold across loops; every turn is stored once, none overwritten by the other."""
    import threading

    session = HermesSession("p-threads", host=host, user_id="u")

    def turn(text: str) -> list[dict[str, Any]]:
        reply = {**REPLY, "content": [{**REPLY["content"][0], "text": f"re {text}"}]}
        return [{"role": "user", "content": text}, reply]

    def worker(name: str) -> None:
        for index in range(8):
            asyncio.run(session.add_items(turn(f"{name}-{index}")))

    threads = [threading.Thread(target=worker, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stored = rows(host, session)
    users = sorted(str(row.message["content"]) for row in stored if row.message["role"] == "user")
    assert users == sorted(f"{n}-{i}" for n in ("a", "b") for i in range(8))
    assert len(stored) == 32
    assert rows(host, session, archived=True) == stored  # nothing archived, nothing rewritten
    session.close()
