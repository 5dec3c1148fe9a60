"""Honcho memory provider (``memory.provider: honcho``, extra ``honcho``).

See ``docs/providers/honcho.md``. Importing this package imports the ``honcho`` SDK, so a
missing extra fails at load with the install line.
"""

from __future__ import annotations

from hermes_plugins.honcho.provider import HonchoProvider
from hermes_plugins.honcho.settings import HonchoSettings, parse_settings

__all__ = ["HonchoProvider", "HonchoSettings", "parse_settings"]
