"""Fixtures for the review tests: the loopback OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_openai import FakeLLM


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server
