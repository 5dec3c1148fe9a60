"""The default threat-scanner plugin: :func:`hermes_core.threats.scan` as the ``scan_threat`` hook.

Thin on purpose: the patterns, scopes and normalisation live in :mod:`hermes_core.threats`
so they can be used and tested without a host. The hook runs last, after any third-party
scanner; every scanner's findings are collected (policy ``fail_closed``), so adding a
scanner can only add findings.

The catalog and its model load on the first scan, not on import: registering the default
plugins (every host, every ``compress``) must not pay for a scanner it may never call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core.markers import hookimpl
from hermes_core.plugins import PluginContext

if TYPE_CHECKING:
    from hermes_core.types import Finding

PLUGIN_NAME = "threat_scanner"


class ThreatScannerPlugin:
    """Built-in ``threat_scanner``: injection, exfiltration, persistence, C2 and secrets."""

    def __init__(self, context: PluginContext) -> None:
        self.context = context

    @hookimpl(trylast=True)
    def scan_threat(self, content: str, scope: str) -> list[Finding]:
        """The built-in findings for ``content`` in ``scope``; an unknown scope raises."""
        from hermes_core.threats import scan  # first scan: compress never pays for the catalog

        return scan(content, scope, plugin=PLUGIN_NAME)
