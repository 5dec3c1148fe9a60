"""First-party plugins of hermes-context.

Built-in defaults (compressor, file memory, threat scanner) are listed by
:func:`builtin_plugins` and registered directly by the host; external memory providers
(honcho, mem0, retaindb, supermemory) are reached through the ``hermes_context.plugins``
entry-point group and their pip extras.
"""

from __future__ import annotations

from hermes_core.plugin_loading import PluginSpec


def builtin_plugins() -> list[PluginSpec]:
    """The default plugins, built-ins first in call order terms (they run last).

    The compressor, file memory and threat scanner join this list as they land; until then
    the host runs with no built-in hook implementations.
    """
    return []
