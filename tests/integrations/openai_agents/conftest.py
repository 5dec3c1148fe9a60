"""The loopback model every Agents SDK test talks to: Responses and chat completions, the
scripted agent model answering what it is sent, a 16K window it enforces."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from agents_sdk_support import WINDOW
from fake_openai import FakeLLM
from fake_responses import RESPONSES, AgentModel


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        server.add_route(RESPONSES)
        server.responder = AgentModel(window=WINDOW)
        yield server
