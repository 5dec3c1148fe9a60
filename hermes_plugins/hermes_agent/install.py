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

__all__ = [
    "CONFIG_LINES",
    "MARKER",
    "OUR_CONFIG",
    "SHIM_NAME",
    "InstallError",
    "Installed",
    "install",
]

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

#: our own config.yaml in ``<hermes home>/hermes-context``, written once (never over an
#: existing one, which is the user's to edit): the defaults that differ inside hermes-agent,
#: stated so that the ``hermes-context`` commands read the home as the plugin does
OUR_CONFIG = (
    "# hermes-context inside hermes-agent (written once by `hermes-context hermes-agent "
    "install`;\n# yours to edit: docs/integrations.md lists every key)\n"
    "memory:\n"
    "  per_user_memory: true   # a gateway serves many users: each gets their own MEMORY.md\n"
    "  nudge_interval: 0       # hermes-agent runs its own background review\n"
    "  flush_min_turns: 0\n"
    "skills:\n"
    "  creation_nudge_interval: 0\n"
)

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
    config: Path | None = None  # our config.yaml when this run wrote it


def hermes_home(given: str | os.PathLike[str] | None) -> Path:
    """``--home``, else ``$HERMES_HOME``, else ``~/.hermes`` (hermes-agent's own rule)."""
    if given:
        return Path(given).expanduser()
    raw = os.environ.get("HERMES_HOME", "").strip()
    return Path(raw).expanduser() if raw else Path.home() / ".hermes"


def install(home: str | os.PathLike[str] | None = None) -> Installed:
    """Write the shim (idempotent: the same bytes again are reported, not rewritten) and our
    config.yaml when there is none."""
    base = hermes_home(home)
    shim = _shim(base / "plugins" / SHIM_NAME)
    config = _our_config(base / "hermes-context" / "config.yaml")
    status = "updated" if shim == "already installed" and config is not None else shim
    return Installed(base / "plugins" / SHIM_NAME, status, config)


def _our_config(path: Path) -> Path | None:
    if path.exists() or path.is_symlink():
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write(path, OUR_CONFIG)
    except OSError as exc:
        raise InstallError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return path


def _shim(target: Path) -> str:
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
            return "already installed"
        status = "updated"
    else:
        status = "installed"
    try:
        target.mkdir(parents=True, exist_ok=True)
        for name, text in FILES.items():
            _write(target / name, text)
    except OSError as exc:
        raise InstallError(f"cannot write {target}: {exc.strerror or exc}") from exc
    return status


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
