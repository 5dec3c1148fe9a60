"""What the Agents SDK hands a session, checked before anything changes: its input items and
its usage records.

Why apart: the SDK is not the only caller (a host may call ``add_items`` itself), so every
shape we cannot read becomes one clear error naming the item and the type, raised before the
store or the session's list is touched, never an ``AttributeError`` from deep inside.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.errors import HermesError, InvalidArgument, InvalidMessages

__all__ = ["ends_reply", "input_items", "usage_record"]

Item = dict[str, Any]


def input_items(items: object, what: str = "items") -> list[Item]:
    """The SDK's input items as dicts: a dict stays the same object (the formats glue gives the
    host's own objects back), an SDK model (``model_dump``) becomes its JSON form."""
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence):
        raise InvalidArgument.of(what, "a list of input items (dicts)", items)
    out: list[Item] = []
    problems: list[str] = []
    for index, item in enumerate(items):
        if isinstance(item, dict):
            out.append(item)
            continue
        if isinstance(item, Mapping):
            out.append(dict(item))
            continue
        dump = getattr(item, "model_dump", None)
        if callable(dump):
            try:
                dumped = dump(mode="json", exclude_none=True)
            except Exception as exc:  # noqa: BLE001 - any model's failure: one clear error
                problems.append(f"item {index}: {type(item).__name__}.model_dump() failed: {exc}")
                continue
            if isinstance(dumped, dict):
                out.append(dumped)
                continue
        problems.append(
            f"item {index}: expected an input item (a dict or an SDK model), "
            f"got {type(item).__name__}"
        )
    if problems:
        raise InvalidMessages(
            f"{what}: {len(problems)} item(s) this session cannot read: {problems[0]}", problems
        )
    return out


def ends_reply(items: Sequence[Item]) -> bool:
    """True when the batch ends with the model's own message (no call left to answer): the
    turn's reply was delivered."""
    if not items:
        return False
    last = items[-1]
    return last.get("role") == "assistant" and last.get("type", "message") == "message"


_FIELDS = {"input_tokens": ("input_tokens", "prompt_tokens"), "output_tokens": ("output_tokens",)}


def usage_record(usage: object) -> dict[str, int]:
    """A usage record (a mapping, the SDK's ``Usage``/``RequestUsage``, an openai model) as
    ``{"input_tokens": n, "output_tokens": m}``; ``HermesError`` naming a count that is not
    a whole number of tokens (a string, a float, a negative number)."""
    if usage is None:
        raise InvalidArgument.of("usage", "a usage record", usage)
    read: dict[str, int] = {}
    for ours, names in _FIELDS.items():
        for name in names:
            value = usage.get(name) if isinstance(usage, Mapping) else getattr(usage, name, None)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise HermesError(
                    f"usage {name} must be a whole number of tokens, got "
                    f"{type(value).__name__} {value!r}"
                )
            read[ours] = value
            break
    if "input_tokens" not in read:
        raise HermesError(
            f"usage record has no input_tokens (or prompt_tokens): got {type(usage).__name__}"
        )
    return read
