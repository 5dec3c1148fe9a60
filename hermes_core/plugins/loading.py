"""Finding and importing plugins: built-in specs and the ``hermes_context.plugins`` group.

Kept apart from the host so that the rules for turning an import failure into an
actionable message ("needs its extra: pip install ...") live in one place. The
entry-point scan (:mod:`importlib.metadata`, tens of milliseconds cold) runs only when a
setting names a plugin beyond the built-ins or a command lists what is installed: the
default host never pays for it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_core.errors import MissingExtraError, PluginLoadError

if TYPE_CHECKING:
    from importlib import metadata

    from hermes_core.plugins.context import PluginContext

ENTRY_POINT_GROUP = "hermes_context.plugins"
OWN_DISTRIBUTION = "hermes-context"
#: where a clone of hermes-context sits, when this copy does not run from one
SOURCE_PLACEHOLDER = "/path/to/hermes-context"


def own_install_line(extras: str = "", *, reinstall: bool = False) -> str:
    """The pip line that installs hermes-context with ``extras``: from source, since the
    package is not on an index (installing it by name would fail). Names this
    copy's own checkout when it runs from one, else the placeholder docs use too."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    source = root if (root / "pyproject.toml").is_file() else Path(SOURCE_PLACEHOLDER)
    target = f"{source.as_posix()}[{extras}]" if extras else source.as_posix()
    return f"pip install {'--force-reinstall ' if reinstall else ''}'{target}'"


@dataclass(frozen=True)
class PluginSpec:
    """How to build one plugin: a name and a factory taking a :class:`PluginContext`."""

    name: str
    factory: Callable[[PluginContext], object]
    builtin: bool = False
    distribution: str = OWN_DISTRIBUTION
    version: str = ""

    def build(self, context: PluginContext) -> object:
        plugin = self.factory(context)
        if plugin is None:
            raise PluginLoadError(f"plugin '{self.name}': its factory returned None")
        return plugin


def installed_entry_points() -> list[metadata.EntryPoint]:
    """Every entry point of the plugin group, de-duplicated by name (first wins)."""
    from importlib import metadata

    seen: dict[str, metadata.EntryPoint] = {}
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        seen.setdefault(entry_point.name, entry_point)
    return list(seen.values())


def find_entry_point(name: str) -> metadata.EntryPoint | None:
    for entry_point in installed_entry_points():
        if entry_point.name == name:
            return entry_point
    return None


@functools.lru_cache(maxsize=1)
def own_extras() -> frozenset[str]:
    """The extras hermes-context declares, e.g. ``mem0``; empty when not installed."""
    from importlib import metadata

    try:
        extras = metadata.metadata(OWN_DISTRIBUTION).get_all("Provides-Extra") or []
    except metadata.PackageNotFoundError:
        return frozenset()
    return frozenset(extras)


def extra_installed(extra: str) -> bool:
    """Whether every requirement of hermes-context's ``extra`` is installed."""
    import re
    from importlib import metadata

    try:
        requirements = metadata.requires(OWN_DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return False
    marker = re.compile(rf"""extra\s*==\s*["']{re.escape(extra)}["']""")
    names = [
        re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0]
        for requirement in requirements
        if marker.search(requirement)
    ]
    for name in names:
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            return False
    return True


def spec_from_entry_point(entry_point: metadata.EntryPoint, *, role: str) -> PluginSpec:
    """Import an entry point; an ImportError becomes the install line the user needs."""
    dist = getattr(entry_point, "dist", None)
    dist_name = getattr(dist, "name", "") or ""
    version = getattr(dist, "version", "") or ""
    try:
        target: Any = entry_point.load()
    except ImportError as exc:
        raise _missing_dependency(entry_point, dist_name, role, exc) from exc
    except Exception as exc:
        raise PluginLoadError(
            f"{role} '{entry_point.name}' failed to import ({entry_point.value}): {exc}"
        ) from exc
    if not callable(target) or inspect.ismodule(target):
        raise PluginLoadError(
            f"{role} '{entry_point.name}': entry point {entry_point.value} must name a plugin "
            "class (or a callable taking a PluginContext)"
        )
    return PluginSpec(
        name=entry_point.name, factory=target, distribution=dist_name, version=version
    )


def _missing_dependency(
    entry_point: metadata.EntryPoint, dist_name: str, role: str, exc: ImportError
) -> PluginLoadError:
    missing = getattr(exc, "name", None) or str(exc)
    extras = list(entry_point.extras)
    own = dist_name.lower().replace("_", "-") == OWN_DISTRIBUTION
    if own and not extras:
        extras = [entry_point.name] if entry_point.name in own_extras() else []
    if extras:
        joined = ",".join(extras)
        hint = own_install_line(joined) if own else f"pip install '{dist_name}[{joined}]'"
        return MissingExtraError(
            f"{role} '{entry_point.name}' needs its extra: {hint}", install_hint=hint
        )
    hint = f"pip install --force-reinstall '{dist_name}'" if dist_name else "pip install it"
    if own:
        hint = own_install_line(reinstall=True)
    return MissingExtraError(
        f"{role} '{entry_point.name}' cannot import '{missing}'; its dependencies are missing: "
        f"{hint}",
        install_hint=hint,
    )


def first_party_extras() -> set[str]:
    """The extras that are first-party plugins (``mem0``: ``hermes_plugins.mem0``), not
    bundles or tools (``all``, ``dev``)."""
    import importlib.util

    found = set()
    for extra in own_extras():
        try:
            if extra.isidentifier() and importlib.util.find_spec(f"hermes_plugins.{extra}"):
                found.add(extra)
        except (ImportError, ValueError):
            continue
    return found


def not_installed(name: str, role: str) -> PluginLoadError:
    if name in own_extras():
        if extra_installed(name):
            return PluginLoadError(
                f"{role} '{name}' is not part of this hermes-context installation (its SDK is "
                "installed, but no plugin registers the name); upgrade or reinstall "
                f"hermes-context, or pick another memory.provider"
            )
        hint = own_install_line(name)
        return MissingExtraError(f"{role} '{name}' needs its extra: {hint}", install_hint=hint)
    installed = ", ".join(sorted(ep.name for ep in installed_entry_points())) or "none"
    return PluginLoadError(
        f"{role} '{name}' is not installed: no '{name}' in the '{ENTRY_POINT_GROUP}' entry "
        f"points (installed: {installed}); install the package that provides it or fix the name"
    )
