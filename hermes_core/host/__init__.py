"""What a host holds: :class:`Hermes`, one home's configuration and plugins."""

from __future__ import annotations

from hermes_core.host.hermes import Hermes

__all__ = ["Hermes"]
