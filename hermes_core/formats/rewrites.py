"""Which message of the view before a compaction each rewritten message was made from.

Why: the library path knows it from the hidden key the compressor carries over
(:mod:`.model`); a :class:`~hermes_core.host.session.Session` stores its view without hidden
keys, so a message the compaction rewrote (a summary merged in front, a pruned tool result,
shortened call arguments, an image replaced by a note) is a new dict with nothing naming its
original. It is found again from what a compaction does: it keeps the order of what it keeps,
it rewrites a message as a copy of it with only some fields changed, and it drops a middle
run. So between two messages it kept as they are, each new message is matched, from the end
(the tail, where a summary is merged into the first message), with a dropped-or-rewritten
original of the same role, tool call id and call ids whose other fields are equal and whose
changed fields changed the way a compaction changes them. A message that matches none (the
summary itself, which carries a key no original has) has no original: it is written fresh.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["is_rewrite_of", "rewritten_from"]

Message = Mapping[str, Any]
_CHANGED = ("content", "tool_calls")
_IMAGES = ("image_url", "input_image", "image")


def rewritten_from(
    view: Sequence[Message], before: Sequence[Message], *, merged_key: str
) -> dict[int, Message]:
    """``id(entry)`` -> the entry of ``before`` it was rewritten from, for each entry of
    ``view`` that is not an entry of ``before`` but a compaction's rewrite of one. Empty when
    the entries ``view`` kept are not in ``before``'s order (not a compaction's output).
    ``merged_key``: the key the compressor marks a message with when it merged its summary in
    front (passed in: the compressor is a floor above this package)."""
    position = {id(entry): n for n, entry in enumerate(before)}
    present = {id(entry) for entry in view}
    found: dict[int, Message] = {}
    run: list[Message] = []
    low = -1
    for n in range(len(view) + 1):
        at = len(before) if n == len(view) else position.get(id(view[n]))
        if at is None:
            run.append(view[n])
            continue
        if at <= low:
            return {}
        if run:
            gone = [before[k] for k in range(low + 1, at) if id(before[k]) not in present]
            found.update(_match(run, gone, merged_key))
        run, low = [], at
    return found


def _match(run: list[Message], gone: list[Message], merged_key: str) -> dict[int, Message]:
    """Each message of ``run`` with the latest original of ``gone`` it is a rewrite of,
    before the one the next message took (from the end: both keep their order)."""
    by_key: dict[tuple[Any, ...], list[int]] = {}
    for n, original in enumerate(gone):
        by_key.setdefault(_key(original), []).append(n)
    out: dict[int, Message] = {}
    bound = len(gone)
    for message in reversed(run):
        places = by_key.get(_key(message), [])
        for k in range(bisect_left(places, bound) - 1, -1, -1):
            if is_rewrite_of(message, gone[places[k]], merged_key=merged_key):
                bound = places[k]
                out[id(message)] = gone[bound]
                break
    return out


def _key(message: Message) -> tuple[Any, ...]:
    calls = message.get("tool_calls")
    ids = (
        tuple(c.get("id") if isinstance(c, Mapping) else None for c in calls)
        if isinstance(calls, list)
        else None
    )
    return (message.get("role"), message.get("tool_call_id"), ids)


def is_rewrite_of(message: Message, original: Message, *, merged_key: str) -> bool:
    """Whether ``message`` is what a compaction can make of ``original``: the same fields,
    equal but for the content (any change for a tool result; a summary put in front when it
    is marked merged; images replaced by notes) and the call arguments."""
    if set(message) - {merged_key} != set(original) - {merged_key}:
        return False
    if any(message[k] != original[k] for k in message if k not in (*_CHANGED, merged_key)):
        return False
    if not _calls_kept(message.get("tool_calls"), original.get("tool_calls")):
        return False
    new, old = message.get("content"), original.get("content")
    if new == old or message.get("role") == "tool":
        return True
    if message.get(merged_key) and not original.get(merged_key):
        return _merged(new, old)
    return _images_noted(new, old)


def _calls_kept(new: Any, old: Any) -> bool:
    """The same calls, in order (ids, names), whatever their arguments became."""
    if new == old:
        return True
    if not isinstance(new, list) or not isinstance(old, list) or len(new) != len(old):
        return False
    return all(
        isinstance(a, Mapping)
        and isinstance(b, Mapping)
        and a.get("id") == b.get("id")
        and _name(a) == _name(b)
        for a, b in zip(new, old, strict=True)
    )


def _name(call: Mapping[str, Any]) -> Any:
    function = call.get("function")
    return function.get("name") if isinstance(function, Mapping) else None


def _merged(new: Any, old: Any) -> bool:
    """``new`` is a text put in front of ``old`` (see compression/assemble.py)."""
    if isinstance(old, list):
        return isinstance(new, list) and len(new) == len(old) + 1 and new[1:] == old
    if isinstance(old, str) and old:
        return isinstance(new, str) and new.endswith(f"\n\n{old}")
    return isinstance(new, str)


def _images_noted(new: Any, old: Any) -> bool:
    """The same parts but for images that became text notes."""
    if not isinstance(new, list) or not isinstance(old, list) or len(new) != len(old):
        return False
    return all(
        a == b
        or (
            isinstance(a, Mapping)
            and isinstance(b, Mapping)
            and a.get("type") == "text"
            and b.get("type") in _IMAGES
        )
        for a, b in zip(new, old, strict=True)
    )
