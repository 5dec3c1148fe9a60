"""The plugin host: loading plugins, the one-external-provider rule, isolated hook calls.

:mod:`~hermes_core.plugins.loading` finds built-ins and entry points (an import failure becomes
an install line); :mod:`~hermes_core.plugins.calls` calls a hook one implementation at a time
with the hook's policy; :mod:`~hermes_core.plugins.manager` holds :class:`PluginHost`, which
registers plugins and applies the rules; :mod:`~hermes_core.plugins.context` is what a plugin
is built with and :mod:`~hermes_core.plugins.records` a row of the `plugins` listing.
"""

from __future__ import annotations

from hermes_core.plugins.context import PluginContext
from hermes_core.plugins.loading import ENTRY_POINT_GROUP, PluginSpec
from hermes_core.plugins.manager import PluginHost
from hermes_core.plugins.records import PluginRecord

__all__ = ["ENTRY_POINT_GROUP", "PluginContext", "PluginHost", "PluginRecord", "PluginSpec"]
