"""The skills index in the system prompt: one line per skill, ``name: description``.

Why short and bounded: the index rides in every request of every session, so each
description is cut to one line of :data:`MAX_INDEX_DESCRIPTION` characters and the block to
:data:`MAX_INDEX_CHARS`; a skill for another platform (its ``platforms`` front matter) is
left out, as hermes-agent does. The host renders it once at session start and keeps the
bytes, so the provider's prompt cache stays valid while skills change on disk.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from hermes_core.skills.frontmatter import SkillMeta
from hermes_core.skills.layout import without_invisible

__all__ = [
    "INDEX_HEADER",
    "MAX_INDEX_CHARS",
    "MAX_INDEX_DESCRIPTION",
    "one_line",
    "render_index",
    "runs_on",
]

INDEX_HEADER: Final = (
    "SKILLS (procedures saved for recurring tasks; before a task one of them fits, load it "
    "with skill_manage action 'view')"
)
#: The block holds at most this many characters.
MAX_INDEX_CHARS: Final = 8_000
#: Characters of one description the index shows.
MAX_INDEX_DESCRIPTION: Final = 200
_PLATFORMS: Final = {"macos": "darwin", "windows": "win32"}
_MORE_ROOM: Final = 80  # kept free for the "... and N more" line


def runs_on(platforms: Sequence[str], platform: str) -> bool:
    """Whether a skill for ``platforms`` (none: every one) runs on ``sys.platform`` value
    ``platform`` (``macos`` is ``darwin``, ``windows`` is ``win32``)."""
    return not platforms or any(platform.startswith(_PLATFORMS.get(p, p)) for p in platforms)


def one_line(description: str) -> str:
    """``description`` on one line, cut at :data:`MAX_INDEX_DESCRIPTION` characters, without
    invisible characters or controls (a description written by hand may hold them; writes
    refuse them)."""
    line = " ".join(without_invisible(description).split())
    if len(line) > MAX_INDEX_DESCRIPTION:
        line = line[: MAX_INDEX_DESCRIPTION - 1].rstrip() + "…"
    return line


def render_index(
    skills: Sequence[SkillMeta], description_of: Callable[[SkillMeta], str], platform: str
) -> str:
    """The header and one line per skill that runs on ``platform``, sorted by name, within
    :data:`MAX_INDEX_CHARS`; "" when no skill is shown."""
    shown = sorted((s for s in skills if runs_on(s.platforms, platform)), key=lambda s: s.name)
    if not shown:
        return ""
    lines = [INDEX_HEADER]
    size = len(INDEX_HEADER)
    for n, skill in enumerate(shown):
        line = f"{skill.name}: {description_of(skill)}"
        if size + len(line) + 1 > MAX_INDEX_CHARS - _MORE_ROOM:
            lines.append(f"… and {len(shown) - n} more (skill_manage action 'list').")
            break
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)
