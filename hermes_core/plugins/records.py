"""One row of ``hermes-context plugins``: a plugin's name, version, hooks and status."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hermes_core.plugins.loading import PluginSpec

__all__ = ["PluginRecord", "record_of"]


@dataclass
class PluginRecord:
    """One row of ``hermes-context plugins``."""

    name: str
    version: str = ""
    distribution: str = ""
    hooks: list[str] = field(default_factory=list)
    status: str = "active"
    builtin: bool = False
    external_provider: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "distribution": self.distribution,
            "hooks": list(self.hooks),
            "status": self.status,
            "builtin": self.builtin,
            "external_provider": self.external_provider,
        }


def record_of(spec: PluginSpec, *, status: str) -> PluginRecord:
    return PluginRecord(
        name=spec.name,
        version=spec.version,
        distribution=spec.distribution,
        status=status,
        builtin=spec.builtin,
    )
