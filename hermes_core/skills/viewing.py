"""Showing a skill to the model: ``view`` of a SKILL.md or a support file, withheld when it
matches a threat pattern.

Why apart from :mod:`~hermes_core.skills.library`: reading for the model has its own rules
(bounded reads, binary files described, threat matches withheld with a pointer for a person),
and the library's module keeps to writing and approving.
"""

from __future__ import annotations

from pathlib import Path

from hermes_core.skills.catalog import Location, linked_files, locate, read_skill
from hermes_core.skills.changes import Result, failure
from hermes_core.skills.dates import SkillDates
from hermes_core.skills.files import SkillError, guarded, read_bytes
from hermes_core.skills.frontmatter import ParsedSkill
from hermes_core.skills.layout import (
    MAX_SKILL_CHARS,
    MAX_SUPPORT_BYTES,
    SKILL_FILE,
    file_path_parts,
)
from hermes_core.skills.screening import Scan, findings

__all__ = ["SkillViews"]


class SkillViews:
    """``view`` and its helpers (mixed into :class:`~hermes_core.skills.library.SkillLibrary`)."""

    scan: Scan
    dates: SkillDates

    def real_root(self) -> Path:
        raise NotImplementedError

    def view(self, name: str, file_path: str | None = None) -> Result:
        """A skill's SKILL.md with its metadata and support files, or one support file; text
        that matches a threat pattern is withheld."""
        try:
            root = self.real_root()
            location = locate(root, name)
            if isinstance(location, str):
                reason = "not_found" if location.startswith("no skill") else "invalid"
                return failure(reason, location)
            if file_path not in (None, "", SKILL_FILE):
                return self._view_file(root, location, file_path)
            text = self._read_text(location.skill_md, MAX_SKILL_CHARS * 4)
        except SkillError as exc:
            return failure("unsafe_path", str(exc))
        if refusal := self._withheld(text, location, SKILL_FILE):
            return refusal
        parsed = read_skill(location)
        files = linked_files(location)
        result: Result = {"success": True, "name": location.name, "category": location.category}
        if isinstance(parsed, ParsedSkill):
            meta = parsed.meta
            result |= {
                "description": meta.description,
                "version": meta.version,
                "tags": list(meta.tags),
                "platforms": list(meta.platforms),
            }
        else:
            result["problem"] = parsed
        result |= {"path": location.relative, "content": text, "linked_files": files or None}
        self.dates.used(location.relative)  # a view is a use: what `skills list --dates` shows
        if files:
            result["usage_hint"] = (
                "Read a support file with action 'view', this name and file_path, e.g. "
                f"{next(iter(files.values()))[0]!r}."
            )
        return result

    def _view_file(self, root: Path, location: Location, file_path: str) -> Result:
        parts = file_path_parts(file_path)
        if isinstance(parts, str):
            return failure("invalid", parts)
        shown = "/".join(parts)
        prefix = [location.category, location.name] if location.category else [location.name]
        path = guarded(root, [*prefix, *parts])
        data = read_bytes(path, MAX_SUPPORT_BYTES)
        if data is None:
            return failure(
                "not_found",
                f"{shown} does not exist in skill {location.relative!r}.",
                available_files=linked_files(location) or None,
            )
        if len(data) > MAX_SUPPORT_BYTES:
            return failure("too_large", f"{shown} is larger than 1 MiB; it is not shown.")
        base = {"success": True, "name": location.name, "file": shown}
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            note = f"[binary file: {path.name}, {len(data):,} bytes]"
            return base | {"content": note, "is_binary": True, "size": len(data)}
        if refusal := self._withheld(text, location, shown):
            return refusal
        return base | {"content": text}

    def _read_text(self, path: Path, limit: int) -> str:
        data = read_bytes(path, limit)
        if data is None:
            raise SkillError(f"{path.name} is missing.")
        if len(data) > limit:
            raise SkillError(f"{path} is too large to show; trim it by hand.")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SkillError(f"{path} is not valid UTF-8 (byte {exc.start}).") from exc

    def _withheld(self, text: str, location: Location, shown: str) -> Result | None:
        """The refusal to show text that matches a threat pattern (a skill planted by hand
        or installed from elsewhere would otherwise reach the context), or None."""
        found = findings(self.scan, [text])
        if not found:
            return None
        ids = list(dict.fromkeys(f.pattern_id for f in found))
        return failure(
            "threat",
            f"{shown} of skill {location.relative!r} matches threat pattern(s) "
            f"{', '.join(ids)}, so it is not shown. A person can read it with `hermes-context "
            f"skills show {location.relative}`; fix it (edit, write_file) or remove it.",
            patterns=ids,
        )
