"""The skills library: ``$HERMES_HOME/skills/[<category>/]<name>/SKILL.md`` with support
files, the ``skill_manage`` tool, the system-prompt index and write approval.

``hermes_core.skills.SkillLibrary`` is the entry point (see ``docs/skills.md``).
"""

from __future__ import annotations

from hermes_core.skills.changes import SkillRequest
from hermes_core.skills.frontmatter import SkillMeta
from hermes_core.skills.library import SkillLibrary
from hermes_core.skills.tool import SKILL_MANAGE_SCHEMA, SkillTool

__all__ = ["SKILL_MANAGE_SCHEMA", "SkillLibrary", "SkillMeta", "SkillRequest", "SkillTool"]
