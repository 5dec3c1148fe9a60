"""A session's skills: the frozen index in the system prompt and the ``skill_manage`` tool.

Why apart from :class:`~hermes_core.host.session.Session`: the gate is policy of its own. A
bridge host's ``skip_memory`` session gets no skills unless it asks for the tool in
``toolsets`` (the same double gate as the memory tool); every write goes through the
library's scan (the host's threat scanners, strict) and ``skills.write_approval``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from hermes_core.skills import SKILL_MANAGE_SCHEMA, SkillTool
from hermes_core.skills.home import open_library
from hermes_core.types import Finding

if TYPE_CHECKING:
    from hermes_core.host.services import SessionHost

__all__ = ["SKILL_TOOL", "SessionSkills", "strict_scanner"]

SKILL_TOOL = "skill_manage"


def strict_scanner(host: SessionHost) -> Callable[[str], list[Finding]]:
    """The host's threat scanners in the ``strict`` scope (what a memory or skill write
    must pass)."""

    def scan(text: str) -> list[Finding]:
        return list(host.plugins.scan_threat(text, "strict"))

    return scan


class SessionSkills:
    """The skills library of one session's home, behind the session's gate."""

    def __init__(self, host: SessionHost, *, allowed: bool, shared: bool = False) -> None:
        del shared  # a multi-user home needs nothing more: the review's writes are all staged
        self.tool: SkillTool | None = None
        self.review_tool: SkillTool | None = None
        if allowed:
            scan = strict_scanner(host)
            library = open_library(host.home, host.settings, scan=scan)
            self.tool = SkillTool(library)
            # a review writes unasked, in any home: every skill write it makes waits for a
            # person (skills/pending.py must_stage), ``shared`` or not
            self.review_tool = SkillTool(library, origin="background_review")

    def system_block(self) -> str:
        """The index, one line per skill ("" when none): read once, frozen with the prompt."""
        return self.tool.library.index() if self.tool is not None else ""

    def tools(self) -> list[dict[str, Any]]:
        return [SKILL_MANAGE_SCHEMA] if self.tool is not None else []

    def handle(self, arguments: Mapping[str, Any] | str) -> str:
        if self.tool is None:
            return '{"success": false, "error": "skill_manage is not available in this session"}'
        return self.tool.handle(arguments)

    def for_review(self) -> tuple[Callable[[Mapping[str, Any] | str], str], dict[str, Any]] | None:
        """The review's ``skill_manage`` (origin ``background_review``) and its schema."""
        if self.review_tool is None:
            return None
        return self.review_tool.handle, SKILL_MANAGE_SCHEMA
