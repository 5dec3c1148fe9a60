"""What a plugin is built with: its name, its own config section, the home, a logger.

Why apart from the host: the loader builds plugins with it (plugins/loading.py) and the host
fills it in (plugins/manager.py); a module of its own lets both import it, neither the other.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_core.config.settings import Settings
from hermes_core.types import Finding

__all__ = ["PluginContext"]


@dataclass(frozen=True)
class PluginContext:
    """What a plugin is built with: its name, its own config section, the home, a logger."""

    name: str
    config: dict[str, Any]
    home: Path
    logger: logging.Logger
    settings: Settings = field(default_factory=Settings)
    #: Every registered ``scan_threat`` (fail closed), for plugins that must scan text they
    #: store; None outside a host (a plugin then uses the built-in scanner).
    scan_threat: Callable[[str, str], list[Finding]] | None = None
    #: Opens where a home's memory blocks are kept (the ``memory_documents`` hook, raising
    #: its reason when nobody answers), for plugins that serve memory; None outside a host.
    memory_documents: Callable[[Path], Any] | None = None
