"""Settings whose summariser is the loopback fake LLM (tests/support/fake_openai.py)."""

from __future__ import annotations

from typing import Any

from fake_openai import FakeLLM

from hermes_core.config.settings import Settings


def llm_settings(server: FakeLLM, **compression: Any) -> Settings:
    """Defaults, with ``auxiliary.compression`` pointed at ``server`` (model ``aux-model``,
    a 2 s timeout) and ``compression`` settings overridden by keyword."""
    settings = Settings()
    settings.auxiliary.compression.base_url = server.base_url
    settings.auxiliary.compression.model = "aux-model"
    settings.auxiliary.compression.timeout = 2.0
    for key, value in compression.items():
        setattr(settings.compression, key, value)
    return settings
