"""``Hermes``: one home's configuration and plugins, from which sessions are made.

A process may hold several ``Hermes`` objects (several homes, several tenants); nothing here
is global. Sessions, memory and compression build on this object in later modules.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from hermes_core.config.loader import LoadedConfig, load_config
from hermes_core.config.settings import Settings
from hermes_core.plugins.loading import PluginSpec
from hermes_core.plugins.manager import PluginHost


def default_builtins() -> list[PluginSpec]:
    """The first-party default plugins, registered directly (not through entry points)."""
    from hermes_plugins import builtin_plugins

    return builtin_plugins()


class Hermes:
    """Configuration plus plugin host for one home directory."""

    def __init__(self, config: LoadedConfig, *, builtins: Sequence[PluginSpec] | None = None):
        self.config = config
        self.plugins = PluginHost(config)
        self._closed = False
        try:
            self.plugins.load(default_builtins() if builtins is None else builtins)
        except BaseException:
            self.close()  # plugins built before the failure still get their shutdown
            raise

    @classmethod
    def from_config(
        cls,
        path_or_dict: str | os.PathLike[str] | Mapping[str, Any] | None = None,
        *,
        home: str | os.PathLike[str] | None = None,
        builtins: Sequence[PluginSpec] | None = None,
    ) -> Hermes:
        """Load and validate the config, then load plugins; raises ``ConfigError`` early."""
        return cls(load_config(path_or_dict, home=home), builtins=builtins)

    @property
    def settings(self) -> Settings:
        return self.config.settings

    @property
    def home(self) -> Path:
        return self.config.home

    def close(self) -> None:
        """Shut plugins down in reverse order; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self.plugins.call("memory_shutdown")

    def __enter__(self) -> Hermes:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
