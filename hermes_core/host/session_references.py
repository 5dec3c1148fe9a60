"""A session's @-references: the API copy of a user's new message with its attachment.

Why apart from :class:`~hermes_core.host.session.Session`: expanding is I/O on the user's
behalf (files of the workspace, git, the web) under guards of its own
(:mod:`hermes_core.references`); the session only decides where it applies: the newest real
user message, once, in the copy sent to the model. The stored message keeps the user's words.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.config.settings import ReferencesSettings
from hermes_core.references import expand_references
from hermes_core.references.screen import Scan
from hermes_core.transcript.messages import message_text

if TYPE_CHECKING:
    from hermes_core.compression.engine import Compressor

__all__ = ["SessionReferences", "with_references"]

Message = dict[str, Any]


def with_references(
    message: Message,
    *,
    workspace: Path | None,
    context_length: int,
    count_tokens: Callable[[str], int],
    settings: ReferencesSettings,
    hermes_home: Path | None,
    scan: Scan | None = None,
) -> tuple[Message, list[str]]:
    """``message`` with the attachment of its references appended (text content as text, a
    list of parts gets one more text part), and the warnings to show the user. ``scan``
    screens every attached section (default: the built-in scanner, ``context`` scope)."""
    if not settings.enabled:
        return message, []
    expansion = expand_references(
        message_text(message),
        workspace=workspace,
        context_length=context_length,
        count_tokens=count_tokens,
        settings=settings,
        hermes_home=hermes_home,
        scan=scan,
    )
    if not expansion.attached:
        return message, expansion.warnings
    out = dict(message)
    content = message.get("content")
    if isinstance(content, str):
        out["content"] = expansion.apply(content)
    elif isinstance(content, list):
        out["content"] = [*content, {"type": "text", "text": expansion.attached.lstrip("\n")}]
    else:
        out["content"] = expansion.attached.lstrip("\n")
    return out, expansion.warnings


class SessionReferences:
    """The references of one session: its workspace, the window its budget rules use (the
    compressor's, which follows a model switch), the threat scanner every attachment passes
    (the host's ``scan_threat`` hook in the ``context`` scope), and each warning as a
    ``reference_warning`` event."""

    def __init__(
        self,
        workspace: Path | None,
        *,
        settings: ReferencesSettings,
        compressor: Compressor,
        hermes_home: Path | None,
        emit: Callable[[str, dict[str, Any]], None],
        scan: Scan | None = None,
    ) -> None:
        self.workspace = workspace
        self.settings = settings
        self.compressor = compressor
        self.hermes_home = hermes_home
        self.emit = emit
        self.scan = scan

    def attach(self, message: Message) -> Message:
        """The user's ``message`` with its attachment (the API copy)."""
        attached, warnings = with_references(
            message,
            workspace=self.workspace,
            context_length=self.compressor.context_length,
            count_tokens=self.compressor.counter.count_text,
            settings=self.settings,
            hermes_home=self.hermes_home,
            scan=self.scan,
        )
        for warning in warnings:
            self.emit("reference_warning", {"warning": warning})
        return attached
