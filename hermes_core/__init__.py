"""hermes-context: context compression and lasting memory for LLM-agent hosts.

Only public names live here. Heavy parts (tiktoken, httpx, YAML, provider SDKs) load on
first use, so ``import hermes_core`` stays fast and has no side effects.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hermes_core.errors import (
    ConfigError,
    HermesError,
    InvalidArgument,
    InvalidMessages,
    MemoryStoreError,
    MissingExtraError,
    PluginLoadError,
    ProviderError,
    SessionError,
    StaleSessionError,
    TokenizerError,
    TranscriptError,
)

__version__ = "0.1.0"

# public name -> module that defines it; loaded on first attribute access (PEP 562)
_LAZY = {
    "Hermes": "hermes_core.host.hermes",
    "Session": "hermes_core.host.session",
    "SessionEvent": "hermes_core.host.events",
    "PluginContext": "hermes_core.plugins.manager",
    "PluginHost": "hermes_core.plugins.manager",
    "Settings": "hermes_core.config.settings",
    "load_config": "hermes_core.config.loader",
    "count_tokens": "hermes_core.tokens.costs",
    "compress": "hermes_core.compression.oneshot",
    "Compressor": "hermes_core.compression.engine",
    "CompressionResult": "hermes_core.compression.result",
    "CompressionEvent": "hermes_core.compression.result",
    "validate_messages": "hermes_core.transcript.messages",
    "to_wire": "hermes_core.transcript.messages",
    "read_transcript": "hermes_core.transcript.files",
    "Finding": "hermes_core.types",
    "SessionInfo": "hermes_core.types",
    "SummaryContext": "hermes_core.types",
    "Turn": "hermes_core.types",
    "hookimpl": "hermes_core.markers",
    "hookspec": "hermes_core.markers",
}

__all__ = [
    "CompressionEvent",
    "CompressionResult",
    "Compressor",
    "ConfigError",
    "Finding",
    "Hermes",
    "HermesError",
    "InvalidArgument",
    "InvalidMessages",
    "MemoryStoreError",
    "MissingExtraError",
    "PluginContext",
    "PluginHost",
    "PluginLoadError",
    "ProviderError",
    "Session",
    "SessionError",
    "SessionEvent",
    "SessionInfo",
    "Settings",
    "StaleSessionError",
    "SummaryContext",
    "TokenizerError",
    "TranscriptError",
    "Turn",
    "__version__",
    "compress",
    "count_tokens",
    "hookimpl",
    "hookspec",
    "load_config",
    "memory",
    "read_transcript",
    "to_wire",
    "validate_messages",
]

if TYPE_CHECKING:
    from hermes_core import memory
    from hermes_core.compression.engine import Compressor
    from hermes_core.compression.oneshot import compress
    from hermes_core.compression.result import CompressionEvent, CompressionResult
    from hermes_core.config.loader import load_config
    from hermes_core.config.settings import Settings
    from hermes_core.host.events import SessionEvent
    from hermes_core.host.hermes import Hermes
    from hermes_core.host.session import Session
    from hermes_core.markers import hookimpl, hookspec
    from hermes_core.plugins.manager import PluginContext, PluginHost
    from hermes_core.tokens.costs import count_tokens
    from hermes_core.transcript.files import read_transcript
    from hermes_core.transcript.messages import to_wire, validate_messages
    from hermes_core.types import Finding, SessionInfo, SummaryContext, Turn


_SUBMODULES = frozenset({"memory"})  # ``hc.memory.MemoryStore`` without an explicit import


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"hermes_core.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
