"""First-party plugins of hermes-context.

Built-in defaults (compressor, file memory, threat scanner, session store) are listed by
:func:`builtin_plugins` and registered directly by the host; external memory providers
(honcho, mem0, retaindb, supermemory) are reached through the ``hermes_context.plugins``
entry-point group and their pip extras.
"""

from __future__ import annotations

from hermes_core.plugins import PluginSpec


def builtin_plugins() -> list[PluginSpec]:
    """The default plugins, registered before any third-party one so that they run last.

    Order matters only for ``first_result`` hooks, where built-ins answer last anyway.
    """
    from hermes_core import __version__
    from hermes_plugins.compressor import CompressorPlugin
    from hermes_plugins.file_memory import FileMemoryPlugin
    from hermes_plugins.session_store import SessionStorePlugin
    from hermes_plugins.threat_scanner import ThreatScannerPlugin

    return [
        PluginSpec("compressor", CompressorPlugin, builtin=True, version=__version__),
        PluginSpec("file_memory", FileMemoryPlugin, builtin=True, version=__version__),
        PluginSpec("threat_scanner", ThreatScannerPlugin, builtin=True, version=__version__),
        PluginSpec("session_store", SessionStorePlugin, builtin=True, version=__version__),
    ]
