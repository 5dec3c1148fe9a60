"""The plugin host: loading plugins, the one-external-provider rule, isolated hook calls.

:mod:`~hermes_core.plugins.loading` finds built-ins and entry points (an import failure becomes
an install line); :mod:`~hermes_core.plugins.calls` calls a hook one implementation at a time
with the hook's policy; :mod:`~hermes_core.plugins.manager` holds :class:`PluginHost`, which
registers plugins and applies the rules.
"""

from __future__ import annotations

from hermes_core.plugins.loading import ENTRY_POINT_GROUP, PluginSpec
from hermes_core.plugins.manager import PluginContext, PluginHost, PluginRecord

__all__ = ["ENTRY_POINT_GROUP", "PluginContext", "PluginHost", "PluginRecord", "PluginSpec"]
