"""SKILL.md's YAML front matter: found, parsed with bounds, validated into a :class:`SkillMeta`.

Why so defensive: the front matter of every skill is read at every session start (its
description goes into the system prompt), and a model or a hand edit can write anything. So
the YAML is short (:data:`MAX_FRONT_MATTER_CHARS`), has no anchors, aliases or explicit tags
(no "billion laughs", no constructed objects), is a mapping without duplicate keys (the
scanner and the parser must not see different names), and holds only plain values.
"""

from __future__ import annotations

import datetime
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from hermes_core.skills.layout import (
    MAX_SKILL_CHARS,
    describe,
    has_controls,
    has_invisible,
    name_problem,
)

__all__ = [
    "MAX_DESCRIPTION_CHARS",
    "MAX_FRONT_MATTER_CHARS",
    "ParsedSkill",
    "SkillMeta",
    "invisible_problem",
    "parse_skill",
]

MAX_DESCRIPTION_CHARS: Final = 1024
MAX_FRONT_MATTER_CHARS: Final = 16_384
_MAX_TAGS: Final = 32
_MAX_WORD_CHARS: Final = 64
_MAX_NESTING: Final = 8
_PLATFORM: Final = re.compile(r"[a-z0-9_-]{1,32}")
_PLAIN: Final = (str, int, float, bool, type(None), datetime.date)


@dataclass(frozen=True)
class SkillMeta:
    """What the front matter says, plus where the skill was found (``path``: the folder
    relative to the skills root, ``category/name`` or ``name``)."""

    name: str
    description: str
    version: str | None = None
    tags: tuple[str, ...] = ()
    platforms: tuple[str, ...] = ()
    category: str | None = None
    path: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "category": self.category,
            "description": self.description,
            "version": self.version,
            "tags": list(self.tags),
            "platforms": list(self.platforms),
            "path": self.path,
        }


@dataclass(frozen=True)
class ParsedSkill:
    meta: SkillMeta
    front_matter: Mapping[str, Any] = field(default_factory=dict)
    body: str = ""


def parse_skill(text: str, expected_name: str | None = None) -> ParsedSkill | str:
    """The parsed SKILL.md, or what is wrong with it. ``expected_name``: the skill's folder
    name, which the front matter's ``name`` must equal."""
    if not isinstance(text, str) or not text.strip():
        return "SKILL.md is empty: give the full text, front matter and instructions."
    if len(text) > MAX_SKILL_CHARS:
        return (
            f"SKILL.md would be {len(text):,} characters; at most {MAX_SKILL_CHARS:,} are "
            "allowed. Move details into references/ files and keep SKILL.md to the procedure."
        )
    split = _split(text)
    if isinstance(split, str):
        return split
    yaml_text, body = split
    data = _load(yaml_text)
    if isinstance(data, str):
        return data
    meta = _meta(data, expected_name)
    if isinstance(meta, str):
        return meta
    if not body.strip():
        return "SKILL.md has no instructions after its front matter; add the procedure."
    return ParsedSkill(meta, data, body)


def _split(text: str) -> tuple[str, str] | str:
    """``(yaml, body)``: the text between a first line ``---`` and the next ``---`` line."""
    lines = text.removeprefix("\ufeff").split("\n")
    if lines[0].rstrip("\r \t") != "---":
        return (
            "SKILL.md must start with YAML front matter: a line '---', then 'name: ...' and "
            "'description: ...', then a closing '---', then the instructions."
        )
    size = 0
    for i, line in enumerate(lines[1:], 1):
        if line.rstrip("\r \t") == "---":
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1 :])
        size += len(line) + 1
        if size > MAX_FRONT_MATTER_CHARS:
            break
    if size > MAX_FRONT_MATTER_CHARS:
        return (
            f"the front matter is longer than {MAX_FRONT_MATTER_CHARS:,} characters (or its "
            "closing '---' line is missing); keep it to name, description and a few fields."
        )
    return "the front matter is not closed: add a line '---' after its last field."


def _load(yaml_text: str) -> dict[str, Any] | str:
    """The front matter as a plain mapping, or what is wrong with it."""
    import yaml

    try:
        for token in yaml.scan(yaml_text, Loader=yaml.SafeLoader):
            if isinstance(token, (yaml.AnchorToken, yaml.AliasToken)):
                return (
                    "the front matter uses YAML anchors or aliases ('&', '*'); write the values "
                    "out."
                )
            if isinstance(token, yaml.TagToken):
                return "the front matter uses an explicit YAML tag ('!'); write plain values."
        node = yaml.compose(yaml_text, Loader=yaml.SafeLoader)
        if node is not None and (duplicate := _duplicate_key(node)):
            return f"the front matter has the key {describe(duplicate)} twice; keep one."
        data = yaml.safe_load(yaml_text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return f"the front matter is not valid YAML{where}: {problem}."
    except RecursionError:
        return "the front matter is nested too deeply; write plain key: value lines."
    except (ValueError, ArithmeticError) as exc:
        # a value YAML reads but cannot build: an impossible date (2024-02-30), a time
        # zone past 24 hours; one hand-edited skill must not break every session
        return f"the front matter holds a value YAML cannot read ({exc}); quote it or fix it."
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return (
            f"the front matter must be a YAML mapping (key: value lines), not a "
            f"{type(data).__name__}."
        )
    if problem := _plain_problem(data, 0):
        return problem
    return data


def _duplicate_key(node: Any) -> str | None:
    import yaml

    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                if key.value in seen:
                    return str(key.value)
                seen.add(key.value)
            if found := _duplicate_key(value):
                return found
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            if found := _duplicate_key(item):
                return found
    return None


def _plain_problem(value: object, depth: int) -> str | None:
    """Anything in the front matter that is not plain YAML data (string keys, scalars,
    lists and mappings, at most :data:`_MAX_NESTING` deep)."""
    if depth > _MAX_NESTING:
        return f"the front matter is nested more than {_MAX_NESTING} levels deep."
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"front matter keys must be text, got {describe(key)}."
            if problem := _plain_problem(item, depth + 1):
                return problem
        return None
    if isinstance(value, list):
        for item in value:
            if problem := _plain_problem(item, depth + 1):
                return problem
        return None
    if isinstance(value, _PLAIN):
        return None
    return f"the front matter holds a {type(value).__name__} value; use text, numbers or lists."


def invisible_problem(meta: SkillMeta) -> str | None:
    """What a write must not save: an invisible character (zero-width, a direction mark, a
    bidi control, a tag character) in the description, version or tags. Checked at write
    time only; a skill planted by hand keeps its place and the index removes them."""
    fields = [("description", meta.description), ("version", meta.version or "")]
    fields += [("tags", tag) for tag in meta.tags]
    for what, text in fields:
        if has_invisible(text):
            return (
                f"the front matter's {what} holds the invisible character "
                f"{_first(text, has_invisible)}: zero-width characters, direction marks and "
                "bidi controls can hide or reorder text in the system prompt. Remove it and "
                "try again."
            )
    return None


def _first(text: str, bad: Callable[[str], bool]) -> str:
    """The first character of ``text`` that is ``bad``, named, with its position."""
    n, char = next(((i, c) for i, c in enumerate(text, 1) if bad(c)), (0, "?"))
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" ({name})" if name else "") + f" at character {n}"


class _Invalid(Exception):
    """A field is wrong; the message says how to fix it."""


def _meta(data: Mapping[str, Any], expected_name: str | None) -> SkillMeta | str:
    try:
        name = _name(data, expected_name)
        description = _description(data.get("description"))
        version = _version(data.get("version"))
        tags = _words(_tags_value(data), "tags")
        platforms = _words(data.get("platforms"), "platforms")
    except _Invalid as exc:
        return str(exc)
    if bad := [p for p in platforms if not _PLATFORM.fullmatch(p)]:
        return f"platform {describe(bad[0])} is not a platform name (macos, linux, windows)."
    return SkillMeta(name, description, version, tags, platforms)


def _name(data: Mapping[str, Any], expected_name: str | None) -> str:
    name = data.get("name")
    if "name" not in data:
        raise _Invalid("the front matter has no 'name' field; add 'name: <the skill name>'.")
    if problem := name_problem(name):
        raise _Invalid("front matter: " + problem)
    assert isinstance(name, str)
    if expected_name is not None and name != expected_name:
        raise _Invalid(
            f"the front matter name {describe(name)} does not match the skill's name "
            f"{describe(expected_name)}; make them the same."
        )
    return name


def _description(value: object) -> str:
    if value is None:
        raise _Invalid(
            "the front matter has no 'description' field; add one line saying when to use it."
        )
    if not isinstance(value, str) or not value.strip():
        raise _Invalid(f"the description must be non-empty text, got {describe(value)}.")
    text = value.strip()
    if len(text) > MAX_DESCRIPTION_CHARS:
        raise _Invalid(
            f"the description is {len(text):,} characters; at most {MAX_DESCRIPTION_CHARS:,} "
            "are allowed (it goes into every system prompt: say when to use the skill)."
        )
    if has_controls(text):
        raise _Invalid(
            f"the description holds the control character {_first(text, has_controls)}: "
            "control codes and bidi overrides can hide or reorder text in the system prompt. "
            "Remove it and try again."
        )
    return text


def _version(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise _Invalid(f"the version must be text such as '1.0.0', got {describe(value)}.")
    text = str(value).strip()
    if not text or len(text) > _MAX_WORD_CHARS or has_controls(text):
        raise _Invalid(
            f"the version must be short plain text such as '1.0.0', got {describe(value)}."
        )
    return text


def _tags_value(data: Mapping[str, Any]) -> object:
    """Top-level ``tags``, else hermes-agent's ``metadata.hermes.tags``."""
    if "tags" in data:
        return data["tags"]
    metadata = data.get("metadata")
    hermes = metadata.get("hermes") if isinstance(metadata, dict) else None
    return hermes.get("tags") if isinstance(hermes, dict) else None


def _words(value: object, what: str) -> tuple[str, ...]:
    """A list of short strings (a comma-separated string is accepted too)."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [part.strip() for part in value.strip("[]").split(",") if part.strip()]
    if not isinstance(value, list):
        raise _Invalid(f"{what} must be a list of short strings, got {describe(value)}.")
    if len(value) > _MAX_TAGS:
        raise _Invalid(f"{what} has {len(value)} items; at most {_MAX_TAGS}.")
    words = []
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise _Invalid(f"every item of {what} must be non-empty text, got {describe(item)}.")
        word = item.strip()
        if len(word) > _MAX_WORD_CHARS or has_controls(word):
            raise _Invalid(
                f"{what} item {describe(word)} must be plain text of at most 64 characters."
            )
        words.append(word.lower() if what == "platforms" else word)
    return tuple(words)
