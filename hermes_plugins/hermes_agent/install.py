"""Writing the memory-provider shim into a hermes-agent home (no hermes-agent import).

hermes-agent finds user memory providers as folders ``$HERMES_HOME/plugins/<name>/`` whose
``__init__.py`` registers a provider; ours is three lines that import the provider from the
installed hermes-context, so an upgrade of hermes-context needs no reinstall. A marker file
says the folder is ours: a folder without it is someone else's and is never overwritten.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CONFIG_LINES", "MARKER", "SHIM_NAME", "InstallError", "Installed", "install"]

SHIM_NAME = "hermes_context"
MARKER = ".hermes-context-shim"
_MARKER_TEXT = "hermes-context memory provider shim, version 1\n"

FILES: dict[str, str] = {
    "plugin.yaml": (
        f"name: {SHIM_NAME}\n"
        "kind: exclusive\n"
        "description: hermes-context file memory, session search and external provider\n"
        "author: hermes-context (written by `hermes-context hermes-agent install`)\n"
    ),
    "__init__.py": (
        '"""hermes-context memory provider for hermes-agent: a loader only (the code is in the\n'
        "installed hermes-context). Written by `hermes-context hermes-agent install`; a re-run\n"
        'rewrites it, so do not edit."""\n\n'
        "from hermes_context_hermes_agent import register_memory\n\n\n"
        "def register(ctx):  # hermes-agent calls ctx.register_memory_provider through this\n"
        "    register_memory(ctx)\n"
    ),
    MARKER: _MARKER_TEXT,
}

#: what to put in hermes-agent's config.yaml (and the plugin to enable), shown after install
CONFIG_LINES = (
    "context:\n  engine: hermes-context\n"
    "memory:\n  provider: hermes_context\n"
    "plugins:\n  enabled: [hermes-context]\n"
)


class InstallError(Exception):
    """The shim cannot be written (a folder that is not ours, an unwritable home)."""


@dataclass(frozen=True)
class Installed:
    path: Path
    status: str  # "installed", "updated" or "already installed"


def hermes_home(given: str | os.PathLike[str] | None) -> Path:
    """``--home``, else ``$HERMES_HOME``, else ``~/.hermes`` (hermes-agent's own rule)."""
    if given:
        return Path(given).expanduser()
    raw = os.environ.get("HERMES_HOME", "").strip()
    return Path(raw).expanduser() if raw else Path.home() / ".hermes"


def install(home: str | os.PathLike[str] | None = None) -> Installed:
    """Write the shim (idempotent: the same bytes again are reported, not rewritten)."""
    target = hermes_home(home) / "plugins" / SHIM_NAME
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise InstallError(f"{target} exists and is not a folder; move it away first")
    if target.is_dir():
        marker = target / MARKER
        if not marker.is_file() or marker.is_symlink():
            raise InstallError(
                f"{target} exists and was not made by hermes-context (no {MARKER} in it); "
                "move it away or choose another --home"
            )
        if all(_same(target / name, text) for name, text in FILES.items()):
            return Installed(target, "already installed")
        status = "updated"
    else:
        status = "installed"
    try:
        target.mkdir(parents=True, exist_ok=True)
        for name, text in FILES.items():
            _write(target / name, text)
    except OSError as exc:
        raise InstallError(f"cannot write {target}: {exc.strerror or exc}") from exc
    return Installed(target, status)


def _same(path: Path, text: str) -> bool:
    try:
        return not path.is_symlink() and path.read_bytes() == text.encode()
    except OSError:
        return False


def _write(path: Path, text: str) -> None:
    """Atomically, so a half-written loader is never what hermes-agent imports."""
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_bytes(text.encode())
    os.replace(temp, path)
