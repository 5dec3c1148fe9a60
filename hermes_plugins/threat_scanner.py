"""The default threat-scanner plugin: :func:`hermes_core.threats.scan` as the ``scan_threat`` hook.

Thin on purpose: the patterns, scopes and normalisation live in :mod:`hermes_core.threats`
so they can be used and tested without a host. The hook runs last, after any third-party
scanner; every scanner's findings are collected (policy ``fail_closed``), so adding a
scanner can only add findings.
"""

from __future__ import annotations

from hermes_core.markers import hookimpl
from hermes_core.plugins import PluginContext
from hermes_core.threats import scan
from hermes_core.types import Finding

PLUGIN_NAME = "threat_scanner"


class ThreatScannerPlugin:
    """Built-in ``threat_scanner``: injection, exfiltration, persistence, C2 and secrets."""

    def __init__(self, context: PluginContext) -> None:
        self.context = context

    @hookimpl(trylast=True)
    def scan_threat(self, content: str, scope: str) -> list[Finding]:
        """The built-in findings for ``content`` in ``scope``; an unknown scope raises."""
        return scan(content, scope, plugin=PLUGIN_NAME)
