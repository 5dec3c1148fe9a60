"""What a plugin object must look like before it is registered: no hook wrappers (each
implementation is called in isolation), no misspelled hook names, no hook-named methods
without ``@hookimpl`` (silently inert otherwise)."""

from __future__ import annotations

import difflib

import pluggy

from hermes_core import hookspecs
from hermes_core.errors import PluginLoadError
from hermes_core.markers import PROJECT_NAME

__all__ = ["reject_wrappers", "unknown_hooks", "unmarked_hooks"]


def reject_wrappers(plugin: object, name: str) -> None:
    for attr in dir(plugin):
        opts = getattr(getattr(plugin, attr, None), f"{PROJECT_NAME}_impl", None)
        if isinstance(opts, dict) and (opts.get("hookwrapper") or opts.get("wrapper")):
            raise PluginLoadError(
                f"plugin '{name}': {attr} is a hook wrapper; hermes-context calls each "
                "implementation in isolation, so wrappers are not supported"
            )


def unknown_hooks(pm: pluggy.PluginManager, plugin: object) -> list[str]:
    problems = []
    for caller in pm.get_hookcallers(plugin) or []:
        if caller.spec is None:
            close = difflib.get_close_matches(caller.name, list(hookspecs.HOOK_POLICIES), n=1)
            hint = f"did you mean '{close[0]}'?" if close else "see docs/hooks.md"
            problems.append(f"'{caller.name}' is not a hermes-context hook ({hint})")
    return problems


def unmarked_hooks(pm: pluggy.PluginManager, plugin: object) -> list[str]:
    """Methods named exactly like a hook but missing ``@hookimpl``: silently inert otherwise."""
    marked = {caller.name for caller in pm.get_hookcallers(plugin) or []}
    return [
        f"method '{name}' has a hook's name but no @hookimpl marker; add @hermes_core.hookimpl"
        for name in hookspecs.HOOK_POLICIES
        if name not in marked and callable(getattr(plugin, name, None))
    ]
