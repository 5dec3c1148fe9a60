"""The skills library as bundle entries, and the checks that decide whether they can go back.

Why file by file: a skill is a folder (``SKILL.md`` and support files under
``references/``, ``templates/``, ``scripts/``, ``assets/``), found by the library's own
discovery (:func:`~hermes_core.skills.catalog.locations`: links and hidden names are never
followed nor exported). Each file is one entry: the skill (``name`` or ``category/name``),
the path inside it, its bytes as UTF-8 text or, when they are not text, base64, and whether
it is executable (a script keeps its bit; no other mode travels).

Why every check here runs before an import writes anything: a bundle that names a file
twice, a skill without its ``SKILL.md``, or a skill folder inside another skill (``brew``
and ``brew/references``: the library would read the second as the first one's support
folder) is refused whole; and a skill that would land inside a skill of the target, or where
a file or link stands, is a collision named with the others. The writes are in
:mod:`.bundle_skill_write`.
"""

from __future__ import annotations

import base64
import binascii
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from hermes_core.lifecycle.bundle_format import BundleError
from hermes_core.skills.catalog import locations
from hermes_core.skills.files import guarded, read_bytes, real_root
from hermes_core.skills.layout import (
    MAX_SKILL_CHARS,
    MAX_SUPPORT_BYTES,
    SKILL_FILE,
    SUPPORT_DIRS,
    category_problem,
    file_path_parts,
    name_problem,
)

__all__ = [
    "SkillFile",
    "checked_entries",
    "skill_conflicts",
    "skill_entries",
]

_MAX_FILE: Final = max(MAX_SKILL_CHARS * 4, MAX_SUPPORT_BYTES)


@dataclass(frozen=True)
class SkillFile:
    """One file to restore: its skill (``name`` or ``category/name``), its path inside the
    skill, its bytes, and whether it is executable."""

    skill: str
    path: tuple[str, ...]
    data: bytes
    executable: bool = False

    @property
    def parts(self) -> tuple[str, ...]:
        """The path below the skills root."""
        return tuple(self.skill.split("/")) + self.path


def skill_entries(root: Path) -> list[dict[str, Any]]:
    """Every file of every skill under ``root`` (none when there is no library)."""
    if not os.path.isdir(root):
        return []
    found, _ = locations(real_root(root))
    entries: list[dict[str, Any]] = []
    for location in found:
        for relative in [SKILL_FILE, *_support_files(location.directory)]:
            path = guarded(location.directory, relative.split("/"))
            data = read_bytes(path, _MAX_FILE)
            if data is None:
                continue
            entry: dict[str, Any] = {
                "skill": location.relative,
                "file": relative,
                **_encoded(data),
            }
            if os.lstat(path).st_mode & 0o111:
                entry["executable"] = True
            entries.append(entry)
    return entries


def _support_files(directory: Path) -> list[str]:
    files: list[str] = []
    for folder in SUPPORT_DIRS:
        top = directory / folder
        try:
            if not stat.S_ISDIR(os.lstat(top).st_mode):
                continue
        except OSError:
            continue
        for current, dirs, names in os.walk(top, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                path = Path(current) / name
                if name.startswith(".") or path.is_symlink() or not path.is_file():
                    continue
                files.append(path.relative_to(directory).as_posix())
    return files


def _encoded(data: bytes) -> dict[str, str]:
    try:
        return {"encoding": "utf-8", "data": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"encoding": "base64", "data": base64.b64encode(data).decode("ascii")}


def checked_entries(entries: Sequence[Mapping[str, Any]]) -> list[SkillFile]:
    """Each entry as a :class:`SkillFile`, after the library's name and path rules and the
    bundle's own: no file twice, no file where another needs a folder, a ``SKILL.md`` in
    every skill, no skill inside another. :class:`BundleError` names the first problem."""
    checked: list[SkillFile] = []
    seen: set[tuple[str, ...]] = set()
    for number, entry in enumerate(entries, 1):
        skill, file = entry.get("skill"), entry.get("file")
        where = f"skills.jsonl line {number}"
        if not isinstance(skill, str) or skill.count("/") > 1:
            raise BundleError(f"{where}: the skill {skill!r} is not a skill name")
        category, _, name = skill.rpartition("/")
        problem = category_problem(category or None) or name_problem(name)
        parts: tuple[str, ...] | str = (
            (SKILL_FILE,) if file == SKILL_FILE else file_path_parts(file)
        )
        if problem or isinstance(parts, str):
            raise BundleError(f"{where}: {problem or parts}")
        executable = entry.get("executable", False)
        if not isinstance(executable, bool):
            raise BundleError(f"{where}: 'executable' is not true or false")
        item = SkillFile(skill, parts, _decoded(entry, where), executable)
        if item.parts in seen:
            raise BundleError(
                f"{where}: {skill}/{file} is in the bundle twice; nothing was imported"
            )
        seen.add(item.parts)
        checked.append(item)
    _check_layout(checked, seen)
    return checked


def _check_layout(files: Sequence[SkillFile], paths: set[tuple[str, ...]]) -> None:
    for item in files:
        for cut in range(1, len(item.parts)):
            if item.parts[:cut] in paths:
                shown = "/".join(item.parts[:cut])
                raise BundleError(
                    f"the bundle's skills.jsonl has {shown} as a file and as a folder (of "
                    f"{'/'.join(item.parts)}); nothing was imported"
                )
    skills = {item.skill for item in files}
    for skill in sorted(skills):
        if (*skill.split("/"), SKILL_FILE) not in paths:
            raise BundleError(
                f"the bundle's skill {skill} has no {SKILL_FILE} (the library would never "
                "see it); nothing was imported"
            )
        if "/" in skill and skill.split("/")[0] in skills:
            raise BundleError(
                f"the bundle's skill {skill} lies inside its skill {skill.split('/')[0]} "
                "(the library reads a skill's folders as its support folders); nothing was "
                "imported"
            )


def _decoded(entry: Mapping[str, Any], where: str) -> bytes:
    data, encoding = entry.get("data"), entry.get("encoding")
    if not isinstance(data, str) or encoding not in ("utf-8", "base64"):
        raise BundleError(f"{where}: the file's data or encoding is missing")
    if encoding == "utf-8":
        return data.encode("utf-8", "surrogatepass")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BundleError(f"{where}: the file's base64 is broken ({exc})") from None


def skill_conflicts(root: Path, skills: Iterable[str]) -> dict[str, str]:
    """The skills of ``skills`` that cannot be written under ``root``, each shown with why:
    its folder exists already, its category folder is a skill of its own (the new skill
    would be read as a support folder), a skill of the same name stands in another category
    (names are unique in a library: the model views a skill by name), or a file or link stands
    where a folder must be."""
    found: dict[str, str] = {}
    named = _names_in(root)
    for skill in sorted(set(skills)):
        parts = skill.split("/")
        if os.path.lexists(Path(root).joinpath(*parts)):
            found[skill] = skill
        elif parts[-1] in named:  # the library refuses two skills of one name
            found[skill] = f"{skill} (a skill called {parts[-1]} exists: {named[parts[-1]]})"
        elif len(parts) == 2 and os.path.lexists(Path(root) / parts[0] / SKILL_FILE):
            found[skill] = f"{skill} (inside the skill {parts[0]})"
        elif len(parts) == 2 and _not_a_folder(Path(root) / parts[0]):
            found[skill] = f"{skill} ({parts[0]} is a file or a link)"
    return found


def _names_in(root: Path) -> dict[str, str]:
    """Each skill name already in the library under ``root``, with its path."""
    from hermes_core.skills.catalog import locations

    if not Path(root).is_dir():
        return {}
    found, _ = locations(Path(root).resolve())
    return {location.name: location.relative for location in found}


def _not_a_folder(path: Path) -> bool:
    try:
        return not stat.S_ISDIR(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False
