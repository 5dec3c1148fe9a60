"""Test helpers for plugin authors: an opt-in pytest plugin and the conformance suites.

Enable the fixtures in a ``conftest.py`` with ``pytest_plugins = ["hermes_core.testing"]``:
a fresh host in a temporary home, register/undo of plugin objects, and a record of every hook
call, so a plugin is tested against the real plugin host rather than a mock.
:class:`ProviderConformance` is the suite every memory provider is held to.
"""

from __future__ import annotations

from hermes_core.testing.fixtures import (
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
from hermes_core.testing.provider_conformance import ProviderConformance

__all__ = [
    "HookCall",
    "HookRecorder",
    "ProviderConformance",
    "hermes_home",
    "hermes_host",
    "hook_recorder",
    "make_host",
    "plugin_context",
    "record_hooks",
    "register_plugin",
    "registered",
]
