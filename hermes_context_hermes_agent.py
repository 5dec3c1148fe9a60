"""The door hermes-agent opens to our plugins (entry point and memory shim), kept outside the
``hermes_plugins`` package on purpose.

hermes-agent 0.19 loads its own directory plugins as ``hermes_plugins.<name>`` and, when no
``hermes_plugins`` module is loaded yet, registers an empty stand-in package of that name;
after that, ``import hermes_plugins.hermes_agent`` (ours) cannot be found. This module puts
our package back in the stand-in's place, keeping hermes-agent's already loaded plugins
reachable under it, and only then imports the plugin. The code lives in
``hermes_plugins/hermes_agent``.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["memory_provider", "register", "register_memory"]


def _reclaim_namespace() -> None:
    found = sys.modules.get("hermes_plugins")
    if found is None or getattr(found, "__file__", None):
        return  # not loaded yet, or ours: nothing to do
    del sys.modules["hermes_plugins"]
    ours = importlib.import_module("hermes_plugins")
    for name, module in list(sys.modules.items()):
        head, _, child = name.partition(".")
        if head == "hermes_plugins" and child and "." not in child and not hasattr(ours, child):
            setattr(ours, child, module)


_reclaim_namespace()

from hermes_plugins.hermes_agent import memory_provider, register, register_memory  # noqa: E402
