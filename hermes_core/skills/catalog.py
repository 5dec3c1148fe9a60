"""Finding skills on disk: ``skills/<name>/SKILL.md`` or ``skills/<category>/<name>/SKILL.md``.

Why only two levels and no links: that is the layout a hermes-agent home uses, and it keeps
discovery cheap (two directory listings, no recursive walk) and predictable. A folder that
holds a SKILL.md is a skill (its sub-folders are its support folders, never more skills);
any other folder at the top is a category. Hidden names (``.lock``, ``.hub``, temp files)
are skipped; a symbolic link is reported and never followed. What is wrong with a skill a
person edited by hand is a :class:`Problem`, so one broken skill hides only itself.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from hermes_core.skills.files import SkillError, guarded, read_bytes
from hermes_core.skills.frontmatter import ParsedSkill, parse_skill
from hermes_core.skills.layout import (
    MAX_SKILL_CHARS,
    SKILL_FILE,
    SUPPORT_DIRS,
    category_problem,
    describe,
    name_problem,
)

__all__ = [
    "Location",
    "Problem",
    "linked_files",
    "locate",
    "locations",
    "read_skill",
    "support_usage",
]

#: Support files listed by ``view`` at most (a skill with more is listed in part).
MAX_LISTED_FILES: Final = 500


@dataclass(frozen=True)
class Location:
    """A skill folder (not yet read)."""

    name: str
    category: str | None
    directory: Path

    @property
    def relative(self) -> str:
        return f"{self.category}/{self.name}" if self.category else self.name

    @property
    def skill_md(self) -> Path:
        return self.directory / SKILL_FILE


@dataclass(frozen=True)
class Problem:
    """A skill that is left out, and why (``path`` relative to the skills root)."""

    path: str
    reason: str


def _entries(directory: Path) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as scan:
            found = sorted(scan, key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise SkillError(f"cannot list {directory}: {exc.strerror or exc}") from exc
    yield from (e for e in found if not e.name.startswith("."))


def _is_skill(directory: Path) -> bool:
    return os.path.lexists(directory / SKILL_FILE)


def locations(root: Path) -> tuple[list[Location], list[Problem]]:
    """Every skill folder under the real root ``root``, sorted, and the folders skipped."""
    found: list[Location] = []
    problems: list[Problem] = []
    for entry in _entries(root):
        path = Path(entry.path)
        if entry.is_symlink():
            problems.append(Problem(entry.name, "a symbolic link: not followed"))
        elif not entry.is_dir(follow_symlinks=False):
            continue
        elif _is_skill(path):
            _add(found, problems, entry.name, None, path)
        else:
            for child in _entries(path):
                relative = f"{entry.name}/{child.name}"
                if child.is_symlink():
                    problems.append(Problem(relative, "a symbolic link: not followed"))
                elif child.is_dir(follow_symlinks=False) and _is_skill(Path(child.path)):
                    _add(found, problems, child.name, entry.name, Path(child.path))
    return found, problems


def _add(
    found: list[Location],
    problems: list[Problem],
    name: str,
    category: str | None,
    path: Path,
) -> None:
    relative = f"{category}/{name}" if category else name
    problem = category_problem(category) or name_problem(name, "folder name")
    if problem:
        problems.append(Problem(relative, problem))
    else:
        found.append(Location(name, category, path))


def locate(root: Path, name: object) -> Location | str:
    """The one skill called ``name`` (or ``category/name``), or why there is none."""
    category: str | None = None
    if isinstance(name, str) and name.count("/") == 1:
        category, _, bare = name.partition("/")
        problem = category_problem(category) or name_problem(bare)
    else:
        problem = name_problem(name)
        bare = name if isinstance(name, str) else ""
    if problem:
        return problem
    found, _ = locations(root)
    hits = [
        loc for loc in found if loc.name == bare and (category is None or loc.category == category)
    ]
    if len(hits) == 1:
        return hits[0]
    if hits:
        places = ", ".join(repr(h.relative) for h in hits)
        return (
            f"{len(hits)} skills are called {describe(name)} ({places}); give the one you mean "
            "as 'category/name'."
        )
    names = sorted({loc.name for loc in found})
    listed = ", ".join(names[:20]) + (", …" if len(names) > 20 else "")
    available = f" Skills here: {listed}." if names else " There are no skills yet."
    return f"no skill called {describe(name)}.{available} Use action 'list' to see them."


def read_skill(location: Location) -> ParsedSkill | str:
    """The skill's SKILL.md parsed, or what is wrong with it."""
    try:
        path = guarded(location.directory, [SKILL_FILE])
        data = read_bytes(path, MAX_SKILL_CHARS * 4)
    except SkillError as exc:
        return str(exc)
    if data is None:
        return "SKILL.md is missing."
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return f"SKILL.md is not valid UTF-8 (byte {exc.start}); convert it to UTF-8."
    try:
        return parse_skill(text, expected_name=location.name)
    except Exception as exc:  # noqa: BLE001 - one bad file must leave the rest working
        return f"SKILL.md cannot be read: {type(exc).__name__}: {exc}"


def linked_files(location: Location) -> dict[str, list[str]]:
    """The support files of a skill by folder (paths relative to the skill), links and
    hidden names left out, at most :data:`MAX_LISTED_FILES` in all."""
    listed: dict[str, list[str]] = {}
    count = 0
    for folder in SUPPORT_DIRS:
        top = location.directory / folder
        try:
            if not stat.S_ISDIR(os.lstat(top).st_mode):
                continue
        except OSError:
            continue
        files: list[str] = []
        for current, dirs, names in os.walk(top, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for file_name in sorted(names):
                path = Path(current) / file_name
                if file_name.startswith(".") or not path.is_file() or path.is_symlink():
                    continue
                if count >= MAX_LISTED_FILES:
                    break
                files.append(path.relative_to(location.directory).as_posix())
                count += 1
        if files:
            listed[folder] = files
    return listed


def support_usage(location: Location, stop_after: int) -> tuple[int, int]:
    """``(files, bytes)`` of a skill's support files: regular files under its support
    folders, links and hidden names (temp files) left out. Counting stops after
    ``stop_after`` files (a folder filled by hand is not walked to its end)."""
    files = size = 0
    for folder in SUPPORT_DIRS:
        top = location.directory / folder
        try:
            if not stat.S_ISDIR(os.lstat(top).st_mode):
                continue  # missing, or a link (never followed, not even to count)
        except OSError:
            continue
        for current, dirs, names in os.walk(top, followlinks=False):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for file_name in names:
                if file_name.startswith("."):
                    continue
                try:
                    info = os.lstat(os.path.join(current, file_name))
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode):
                    files += 1
                    size += info.st_size
                    if files > stop_after:
                        return files, size
    return files, size
