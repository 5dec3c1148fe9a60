"""What one ``skill_manage`` write would do, worked out against the disk without changing it.

Why a plan first: every write is validated (names, paths, sizes, front matter) and its new
text threat-scanned *before* anything is written, then planned again under the lock against
what is on disk by then, and only that plan is carried out. The same plan judges a write
that is staged for approval, so a staged write is one that would have succeeded.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from hermes_core.skills.catalog import (
    Location,
    linked_files,
    locate,
    locations,
    support_usage,
)
from hermes_core.skills.files import SkillError, digest, guarded, read_bytes
from hermes_core.skills.frontmatter import ParsedSkill, invisible_problem, parse_skill
from hermes_core.skills.layout import (
    MAX_SKILL_CHARS,
    MAX_SUPPORT_BYTES,
    MAX_SUPPORT_FILES,
    MAX_SUPPORT_TOTAL_BYTES,
    SKILL_FILE,
    category_problem,
    describe,
    file_path_parts,
    name_problem,
)

__all__ = [
    "WRITE_ACTIONS",
    "Change",
    "Result",
    "SkillRequest",
    "failure",
    "plan",
    "request_problem",
]

Result = dict[str, Any]
WRITE_ACTIONS: Final = ("create", "edit", "patch", "write_file", "remove_file", "delete")


@dataclass(frozen=True)
class SkillRequest:
    """One write as asked, with hermes-agent's argument names."""

    action: str
    name: str
    content: str | None = None
    category: str | None = None
    file_path: str | None = None
    file_content: str | None = None
    old_string: str | None = None
    new_string: str | None = None


@dataclass(frozen=True)
class Change:
    """What a write does: files to write, a file to remove or a skill folder to delete;
    ``base`` is the digest of the file it starts from (None: a new file); ``result`` is
    what the caller is told once it is done."""

    result: Result
    writes: tuple[tuple[Path, str], ...] = ()
    remove: Path | None = None
    delete_dir: Path | None = None
    skill_dir: Path | None = None
    base: str | None = None
    new_file: bool = False

    @property
    def texts(self) -> list[str]:
        """The new text this change writes (what the threat scan must see)."""
        return [text for _, text in self.writes]


class _Refused(Exception):
    def __init__(self, reason: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.result = failure(reason, message, **extra)


def failure(reason: str, message: str, **extra: Any) -> Result:
    return {"success": False, "reason": reason, "error": message, **extra}


def plan(root: Path, request: SkillRequest) -> Change | Result:
    """The change ``request`` makes under the real skills root ``root``, or its refusal."""
    planner = _PLANNERS.get(request.action)
    if planner is None:
        return failure(
            "invalid", f"action must be one of {', '.join(WRITE_ACTIONS)}, got {request.action!r}."
        )
    try:
        return planner(root, request)
    except _Refused as refused:
        return refused.result
    except SkillError as exc:
        return failure("unsafe_path", str(exc))


def _found(root: Path, name: object) -> Location:
    found = locate(root, name)
    if isinstance(found, str):
        raise _Refused("not_found" if found.startswith("no skill") else "invalid", found)
    return found


def _parts(location: Location) -> list[str]:
    return [location.category, location.name] if location.category else [location.name]


def _skill_text(content: object, action: str, name: str) -> str:
    if not isinstance(content, str) or not content.strip():
        raise _Refused(
            "invalid",
            f"{action} needs content: the full SKILL.md text (front matter with name and "
            "description, then the instructions).",
        )
    parsed = parse_skill(content, expected_name=name)
    if isinstance(parsed, str):
        reason = "too_large" if len(content) > MAX_SKILL_CHARS else "invalid"
        raise _Refused(reason, parsed)
    _check_visible(parsed)
    return content


def _check_visible(parsed: ParsedSkill) -> None:
    if problem := invisible_problem(parsed.meta):
        raise _Refused("invalid", problem)


def _done(message: str, location: Location | None = None, **extra: Any) -> Result:
    where = {"name": location.name, "path": location.relative} if location else {}
    return {"success": True, "done": True, "message": message, **where, **extra}


def _create(root: Path, request: SkillRequest) -> Change:
    name, category = request.name, request.category
    if problem := name_problem(name) or category_problem(category):
        raise _Refused("invalid", problem)
    content = _skill_text(request.content, "create", name)
    existing = [loc for loc in locations(root)[0] if loc.name == name]
    if existing:
        raise _Refused(
            "exists",
            f"a skill called {name!r} already exists ({existing[0].relative}); change it with "
            "edit or patch, or choose another name.",
        )
    if category and os.path.lexists(root / category / SKILL_FILE):
        raise _Refused(
            "invalid",
            f"{category!r} is a skill, not a category folder; choose another category or none.",
        )
    location = Location(name, category, root.joinpath(*([category] if category else []), name))
    if _has_entries(location.directory):
        raise _Refused(
            "exists",
            f"the folder {location.relative} already exists and is not a skill (it holds other "
            "files or skills); choose another name.",
        )
    path = guarded(root, [*_parts(location), SKILL_FILE])
    hint = (
        f"Add support files with action 'write_file', name {name!r}, file_path "
        "'references/<file>.md' and file_content."
    )
    result = _done(f"Skill {location.relative!r} created.", location, category=category, hint=hint)
    return Change(result, ((path, content),), skill_dir=location.directory, new_file=True)


def _has_entries(directory: Path) -> bool:
    try:
        with os.scandir(directory) as scan:
            return any(not e.name.startswith(".") for e in scan)
    except (FileNotFoundError, NotADirectoryError):
        return os.path.lexists(directory)


def _edit(root: Path, request: SkillRequest) -> Change:
    location = _found(root, request.name)
    content = _skill_text(request.content, "edit", location.name)
    path = guarded(root, [*_parts(location), SKILL_FILE])
    old = read_bytes(path, MAX_SKILL_CHARS * 4)
    result = _done(f"Skill {location.relative!r} rewritten.", location)
    return Change(result, ((path, content),), skill_dir=location.directory, base=digest(old))


def _support_path(root: Path, location: Location, file_path: object) -> tuple[Path, str]:
    parts = file_path_parts(file_path)
    if isinstance(parts, str):
        raise _Refused("invalid", parts)
    return guarded(root, [*_parts(location), *parts]), "/".join(parts)


def _missing(location: Location, shown: str) -> _Refused:
    return _Refused(
        "not_found",
        f"{shown} does not exist in skill {location.relative!r}.",
        available_files=linked_files(location) or None,
    )


def _patch(root: Path, request: SkillRequest) -> Change:
    old_string, new_string = request.old_string, request.new_string
    if not isinstance(old_string, str) or not old_string:
        raise _Refused("invalid", "patch needs old_string: the exact text to find.")
    if not isinstance(new_string, str):
        raise _Refused(
            "invalid", "patch needs new_string: the replacement ('' deletes old_string)."
        )
    location = _found(root, request.name)
    if request.file_path in (None, "", SKILL_FILE):
        path, shown, limit = guarded(root, [*_parts(location), SKILL_FILE]), SKILL_FILE, 0
    else:
        path, shown = _support_path(root, location, request.file_path)
        limit = MAX_SUPPORT_BYTES
    read_limit = limit or MAX_SKILL_CHARS * 4
    data = read_bytes(path, read_limit)
    if data is None:
        raise _missing(location, shown)
    too_large = _Refused("too_large", f"{shown} is over its size limit already; edit it by hand.")
    if len(data) > read_limit:
        raise too_large
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Refused(
            "invalid", f"{shown} is not UTF-8 text; replace it whole with write_file."
        ) from None
    if not limit and len(text) > MAX_SKILL_CHARS:
        raise too_large
    count = text.count(old_string)
    if count == 0:
        raise _Refused(
            "no_match",
            f"old_string was not found in {shown}; view the skill and copy the text exactly "
            "(spaces and line breaks count).",
        )
    if count > 1:
        raise _Refused(
            "multiple",
            f"old_string matches {count} places in {shown}; include more of the surrounding "
            "text so that it matches exactly one.",
            match_count=count,
        )
    new_text = text.replace(old_string, new_string, 1)
    if limit:
        _check_room(location, path, shown, _check_support_size(new_text, shown))
    else:
        parsed = parse_skill(new_text, expected_name=location.name)
        if isinstance(parsed, str):
            reason = "too_large" if len(new_text) > MAX_SKILL_CHARS else "invalid"
            raise _Refused(reason, f"the patched SKILL.md would be invalid: {parsed}")
        _check_visible(parsed)
    result = _done(f"Patched {shown} in skill {location.relative!r}.", location)
    return Change(result, ((path, new_text),), skill_dir=location.directory, base=digest(data))


def _check_support_size(text: str, shown: str) -> int:
    """The size of a support file's new text in bytes, which must be within the limit."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_SUPPORT_BYTES:
        raise _Refused(
            "too_large",
            f"{shown} would be {size:,} bytes; a support file holds at most "
            f"{MAX_SUPPORT_BYTES:,} bytes (1 MiB). Split it into several files.",
        )
    return size


def _check_room(location: Location, path: Path, shown: str, new_size: int) -> None:
    """A write of ``new_size`` bytes to support file ``path`` must keep the skill within
    :data:`MAX_SUPPORT_FILES` files and :data:`MAX_SUPPORT_TOTAL_BYTES` bytes; a skill over a
    limit already (filled by hand) may still shrink."""
    files, total = support_usage(location, MAX_SUPPORT_FILES)
    try:
        old_size: int | None = os.lstat(path).st_size
    except FileNotFoundError:
        old_size = None
    if old_size is None and files + 1 > MAX_SUPPORT_FILES:
        raise _Refused(
            "too_large",
            f"skill {location.relative!r} has {MAX_SUPPORT_FILES} support files already, the "
            f"most one skill holds; {shown} was not written. Add to an existing file, or "
            "remove one (remove_file) first.",
        )
    after = total - (old_size or 0) + new_size
    if after > MAX_SUPPORT_TOTAL_BYTES and after > total:
        raise _Refused(
            "too_large",
            f"the support files of skill {location.relative!r} would hold {after:,} bytes; "
            f"at most {MAX_SUPPORT_TOTAL_BYTES:,} (10 MiB) in all. {shown} was not written: "
            "shorten it, or remove files the skill no longer needs.",
        )


def _write_file(root: Path, request: SkillRequest) -> Change:
    location = _found(root, request.name)
    path, shown = _support_path(root, location, request.file_path)
    content = request.file_content
    if not isinstance(content, str):
        raise _Refused("invalid", "write_file needs file_content: the file's text.")
    size = _check_support_size(content, shown)
    if path.is_dir():
        raise _Refused("invalid", f"{shown} is a folder; give a file name below it.")
    old = read_bytes(path, MAX_SUPPORT_BYTES)
    _check_room(location, path, shown, size)
    verb = "written" if old is None else "replaced"
    result = _done(f"File {shown!r} {verb} in skill {location.relative!r}.", location, file=shown)
    return Change(
        result,
        ((path, content),),
        skill_dir=location.directory,
        base=digest(old),
        new_file=old is None,
    )


def _remove_file(root: Path, request: SkillRequest) -> Change:
    location = _found(root, request.name)
    path, shown = _support_path(root, location, request.file_path)
    old = read_bytes(path, MAX_SUPPORT_BYTES, linked_ok=True)  # unlinking one link is safe
    if old is None:
        raise _missing(location, shown)
    result = _done(f"File {shown!r} removed from skill {location.relative!r}.", location)
    return Change(result, remove=path, skill_dir=location.directory, base=digest(old))


def _delete(root: Path, request: SkillRequest) -> Change:
    location = _found(root, request.name)
    directory = guarded(root, _parts(location))
    try:
        old = read_bytes(directory / SKILL_FILE, MAX_SKILL_CHARS * 4)
    except SkillError:
        old = None
    result = _done(f"Skill {location.relative!r} deleted.", location)
    return Change(result, delete_dir=directory, skill_dir=directory, base=digest(old))


_PLANNERS = {
    "create": _create,
    "edit": _edit,
    "patch": _patch,
    "write_file": _write_file,
    "remove_file": _remove_file,
    "delete": _delete,
}


def request_problem(request: SkillRequest) -> str | None:
    """A type error in the request's fields (each must be a string or None)."""
    for field in ("content", "category", "file_path", "file_content", "old_string", "new_string"):
        value = getattr(request, field)
        if value is not None and not isinstance(value, str):
            return f"{field} must be a string, got {describe(value)}."
    return None
