"""The skills library as bundle entries, and back.

Why file by file: a skill is a folder (``SKILL.md`` and support files under
``references/``, ``templates/``, ``scripts/``, ``assets/``), found by the library's own
discovery (:func:`~hermes_core.skills.catalog.locations`: links and hidden names are never
followed nor exported). Each file is one entry: the skill (``name`` or ``category/name``),
the path inside it, and its bytes as UTF-8 text or, when they are not text, base64.
Importing checks every name and path by the library's rules before writing one file, and
writes through the library's link-proof writer.
"""

from __future__ import annotations

import base64
import binascii
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from hermes_core.lifecycle.bundle_format import BundleError
from hermes_core.skills.catalog import locations
from hermes_core.skills.disk import write_file
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

__all__ = ["checked_entries", "existing_skills", "skill_entries", "write_skills"]

_MAX_FILE: Final = max(MAX_SKILL_CHARS * 4, MAX_SUPPORT_BYTES)


def skill_entries(root: Path) -> list[dict[str, Any]]:
    """Every file of every skill under ``root`` (none when there is no library)."""
    if not os.path.isdir(root):
        return []
    found, _ = locations(real_root(root))
    entries: list[dict[str, Any]] = []
    for location in found:
        for relative in [SKILL_FILE, *_support_files(location.directory)]:
            data = read_bytes(guarded(location.directory, relative.split("/")), _MAX_FILE)
            if data is None:
                continue
            entries.append({"skill": location.relative, "file": relative, **_encoded(data)})
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


def checked_entries(entries: Sequence[dict[str, Any]]) -> list[tuple[str, tuple[str, ...], bytes]]:
    """``(skill, path parts, bytes)`` of each entry, after the library's name and path rules;
    :class:`BundleError` naming the first entry that breaks one."""
    checked: list[tuple[str, tuple[str, ...], bytes]] = []
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
        checked.append((skill, tuple(skill.split("/")) + parts, _decoded(entry, where)))
    return checked


def _decoded(entry: dict[str, Any], where: str) -> bytes:
    data, encoding = entry.get("data"), entry.get("encoding")
    if not isinstance(data, str) or encoding not in ("utf-8", "base64"):
        raise BundleError(f"{where}: the file's data or encoding is missing")
    if encoding == "utf-8":
        return data.encode("utf-8", "surrogatepass")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BundleError(f"{where}: the file's base64 is broken ({exc})") from None


def existing_skills(root: Path, skills: Sequence[str]) -> list[str]:
    """The skills of ``skills`` whose folder exists under ``root`` already."""
    return sorted({s for s in skills if os.path.lexists(Path(root).joinpath(*s.split("/")))})


def write_skills(root: Path, files: Sequence[tuple[str, tuple[str, ...], bytes]]) -> int:
    """Write every file (folders made as needed, never through a link); returns how many."""
    if not files:
        return 0
    root.mkdir(parents=True, exist_ok=True)
    real = real_root(root)
    for _, parts, data in files:
        guarded(real, parts)  # a link planted in the way is refused, nothing followed
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            _write_binary(real, parts, data)
        else:
            write_file(real, parts, text)
    return len(files)


def _write_binary(root: Path, parts: tuple[str, ...], data: bytes) -> None:
    """A file that is not text: written as new (the skill folder is new), links refused."""
    target = guarded(root, parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
