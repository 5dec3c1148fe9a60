"""Fixtures and helpers for testing a plugin against the real plugin host.

Enable it in a ``conftest.py`` with ``pytest_plugins = ["hermes_core.testing"]``. It gives a
fresh host in a temporary home, register/undo of plugin objects, and a record of every hook
call, so a plugin can be tested against the real plugin host rather than a mock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hermes_core.config.loader import load_config
from hermes_core.host.hermes import Hermes
from hermes_core.plugins.loading import PluginSpec
from hermes_core.plugins.manager import PluginContext

__all__ = [
    "HookCall",
    "HookRecorder",
    "make_host",
    "plugin_context",
    "record_hooks",
    "registered",
]


@dataclass(frozen=True)
class HookCall:
    """One observed hook call."""

    hook: str
    kwargs: dict[str, Any]
    result: Any


@dataclass
class HookRecorder:
    """Every hook call made through a host while recording."""

    calls: list[HookCall] = field(default_factory=list)

    def __call__(self, hook: str, kwargs: dict[str, Any], result: Any) -> None:
        self.calls.append(HookCall(hook, kwargs, result))

    def named(self, hook: str) -> list[HookCall]:
        return [call for call in self.calls if call.hook == hook]


def make_host(
    home: Path,
    config: Mapping[str, Any] | None = None,
    *,
    builtins: Sequence[PluginSpec] | None = (),
    environ: Mapping[str, str] | None = None,
) -> Hermes:
    """A host for ``home`` built from a config mapping; no built-ins unless asked for.

    ``builtins=None`` loads the real default plugins; the default ``()`` gives a bare host
    so a test sees only the plugins it registers.
    """
    loaded = load_config(dict(config or {}), home=home, environ=dict(environ or {}))
    return Hermes(loaded, builtins=builtins)


def plugin_context(name: str, home: Path, config: Mapping[str, Any] | None = None) -> PluginContext:
    """The context a host would build for plugin ``name`` with this ``plugin_config`` section."""
    return PluginContext(
        name=name,
        config=dict(config or {}),
        home=home,
        logger=logging.getLogger(f"hermes_context.plugins.{name}"),
    )


@contextmanager
def registered(host: Hermes, plugin: object, name: str = "") -> Iterator[str]:
    """Register ``plugin`` for the duration of a ``with`` block, then undo it."""
    plugin_name = host.plugins.register(plugin, name=name)
    try:
        yield plugin_name
    finally:
        host.plugins.unregister(plugin_name)


@contextmanager
def record_hooks(host: Hermes) -> Iterator[HookRecorder]:
    """Record every hook call the host makes inside the ``with`` block."""
    recorder = HookRecorder()
    undo = host.plugins.add_listener(recorder)
    try:
        yield recorder
    finally:
        undo()


@pytest.fixture
def hermes_home(tmp_path: Path) -> Path:
    """An empty home directory."""
    home = tmp_path / "hermes-home"
    home.mkdir()
    return home


@pytest.fixture
def hermes_host(hermes_home: Path) -> Iterator[Hermes]:
    """A bare host (no built-ins, default config) in a fresh home, closed afterwards."""
    host = make_host(hermes_home)
    yield host
    host.close()


@pytest.fixture
def hook_recorder(hermes_host: Hermes) -> Iterator[HookRecorder]:
    """Records the hook calls ``hermes_host`` makes during the test."""
    with record_hooks(hermes_host) as recorder:
        yield recorder


@pytest.fixture
def register_plugin(hermes_host: Hermes) -> Iterator[Callable[..., str]]:
    """``register_plugin(obj, name="")`` registers on ``hermes_host``; undone after the test."""
    names: list[str] = []

    def register(plugin: object, name: str = "") -> str:
        plugin_name = hermes_host.plugins.register(plugin, name=name)
        names.append(plugin_name)
        return plugin_name

    yield register
    for plugin_name in reversed(names):
        hermes_host.plugins.unregister(plugin_name)
