"""The ``"type"`` of a content part (or block, or item), read so no value can break a lookup.

Why: a host may write any JSON value as a part's ``"type"``: a number, a list, an object,
``null``. Code that looks the type up in a set or a dict (format detection, token counting,
image handling) would meet a list or an object there and raise ``TypeError`` far from the
cause. Every such lookup goes through :func:`part_type`, which gives the type only when it is
a string; :func:`type_problem` is the one wording the validators report and the counters
refuse with (as they refuse values nested too deeply: an invalid transcript, not a guess).
"""

from __future__ import annotations

from collections.abc import Mapping

from hermes_core.errors import InvalidMessages

__all__ = ["counted_type", "kind_of", "part_type", "type_problem"]


def kind_of(value: object) -> str:
    """Name a value's type the way a reader of the JSON file sees it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def part_type(part: object) -> str | None:
    """``part["type"]`` when ``part`` is a mapping whose type is a string; else ``None``."""
    kind = part.get("type") if isinstance(part, Mapping) else None
    return kind if isinstance(kind, str) else None


def type_problem(part: object, where: str) -> str | None:
    """What is wrong when ``part`` has a ``"type"`` that is not a string (``where`` names the
    part, ``content[2]``); ``None`` when it is a string, absent, or ``part`` is no mapping."""
    if not isinstance(part, Mapping) or "type" not in part or isinstance(part["type"], str):
        return None
    return (
        f'{where} has a "type" that is {kind_of(part["type"])}, not a string such as "text"; '
        "fix or remove the part"
    )


def counted_type(part: Mapping[str, object], where: str) -> str | None:
    """:func:`part_type` for a counter, which refuses a part whose type is not a string with
    :class:`InvalidMessages` (``validate_messages`` reports the same problem)."""
    if problem := type_problem(part, where):
        raise InvalidMessages(f"cannot count tokens: {problem}", [problem])
    return part_type(part)
