"""Test helpers for plugin authors: an opt-in pytest plugin and the conformance suites.

Enable the fixtures in a ``conftest.py`` with ``pytest_plugins = ["hermes_core.testing"]``:
a fresh host in a temporary home, register/undo of plugin objects, and a record of every hook
call, so a plugin is tested against the real plugin host rather than a mock.
:class:`ProviderConformance` is the suite every memory provider is held to,
:class:`SessionStoreConformance` the one every session-store backend is, and
:class:`MemoryDocumentsConformance` the one every memory backend (``MemoryDocuments``) is.
"""

from __future__ import annotations

import pytest

# the suites' checks are plain ``assert`` statements: have pytest rewrite them (values shown
# on failure) even when this package is imported by a test module, not as a pytest plugin
pytest.register_assert_rewrite(
    "hermes_core.testing.memory_checks",
    "hermes_core.testing.memory_conformance",
    "hermes_core.testing.provider_conformance",
    "hermes_core.testing.store_checks_messages",
    "hermes_core.testing.store_checks_search",
    "hermes_core.testing.store_checks_sessions",
    "hermes_core.testing.store_kit",
)

from hermes_core.testing.fixtures import (  # noqa: E402 - after the rewrite registration
    HookCall,
    HookRecorder,
    hermes_home,
    hermes_host,
    hook_recorder,
    make_host,
    plugin_context,
    record_hooks,
    register_plugin,
    registered,
)
from hermes_core.testing.memory_conformance import MemoryDocumentsConformance  # noqa: E402
from hermes_core.testing.provider_conformance import ProviderConformance  # noqa: E402
from hermes_core.testing.store_conformance import SessionStoreConformance  # noqa: E402

__all__ = [
    "HookCall",
    "HookRecorder",
    "MemoryDocumentsConformance",
    "ProviderConformance",
    "SessionStoreConformance",
    "hermes_home",
    "hermes_host",
    "hook_recorder",
    "make_host",
    "plugin_context",
    "record_hooks",
    "register_plugin",
    "registered",
]
