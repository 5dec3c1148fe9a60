"""Which message of the view before a compaction each rewritten message was made from.

Why: the library path knows it from the hidden key the compressor carries over
(:mod:`.model`); a :class:`~hermes_core.host.session.Session` stores its view without hidden
keys, so a message the compaction rewrote (a summary merged in front, a pruned tool result,
shortened call arguments, an image replaced by a note) is a new dict with nothing naming its
original. It is found again from what a compaction does: it keeps a head (a prefix of the
view, less earlier summaries) and a tail (a suffix), its summary between them, and rewrites a
message as a copy of it with only some fields changed. So between two messages it kept as
they are, a new message before the summary is matched from the start of the gap, the summary
(when merged into the first tail message) and what follows from the end; each with the next
original there of the same fields whose changed fields changed the way a compaction changes
them. A message that fits no original there, or two, is not guessed at: it (and the rest of
its side) is written fresh, as is the summary itself (no original has its key). Matching from
the nearest end matters: the head's last message and the tail's first can both be rewritten
in one pass, and a dropped message of a later turn can read the same as the head's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["is_rewrite_of", "rewritten_from"]

Message = Mapping[str, Any]
Summary = Callable[[Message], bool]
_CHANGED = ("content", "tool_calls")
_IMAGES = ("image_url", "input_image", "image")


def rewritten_from(
    view: Sequence[Message], before: Sequence[Message], *, merged_key: str, is_summary: Summary
) -> dict[int, Message]:
    """``id(entry)`` -> the entry of ``before`` it was rewritten from, for each entry of
    ``view`` that is not an entry of ``before`` but a compaction's rewrite of one. Empty when
    the entries ``view`` kept are not in ``before``'s order (not a compaction's output).
    ``merged_key``: the key the compressor marks a message with when it merged its summary in
    front, and ``is_summary`` tells a compaction's summary, merged or not (both passed in: the
    compressor is a floor above this package)."""
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
            found.update(_match(run, gone, merged_key, is_summary))
        run, low = [], at
    return found


def _match(
    run: list[Message], gone: list[Message], merged_key: str, is_summary: Summary
) -> dict[int, Message]:
    """Each message of ``run`` with the original of ``gone`` it is a rewrite of. A compaction
    keeps a head (a prefix, less earlier summaries) and a tail (a suffix), with its summary
    between them: a message before the summary rewrites one from the start of the gap, the
    summary (when merged) and what follows rewrite the gap's end. With no summary in the run,
    a message is matched only where the walk from the start and the walk from the end agree."""

    def fits(message: Message, original: Message) -> bool:
        return is_rewrite_of(message, original, merged_key=merged_key)

    def never(_: Message) -> bool:
        return False

    last = len(gone) - 1
    mark = next((n for n, m in enumerate(run) if is_summary(m)), None)
    if mark is None:
        ahead = _walk(run, gone, fits, is_summary)
        behind = _walk(run[::-1], gone[::-1], fits, is_summary)
        back = {len(run) - 1 - n: last - k for n, k in enumerate(behind)}
        pairs = {n: k for n, k in enumerate(ahead) if back.get(n) == k}
        return {id(run[n]): gone[k] for n, k in pairs.items()}
    tail = run[mark:] if run[mark].get(merged_key) else run[mark + 1 :]
    behind = _walk(tail[::-1], gone[::-1], fits, never)  # the tail is a suffix: nothing skipped
    out = {id(tail[-1 - n]): gone[last - k] for n, k in enumerate(behind)}
    low = last - behind[-1] if behind else len(gone)
    ahead = _walk(run[:mark], gone[:low], fits, is_summary)
    out.update({id(run[n]): gone[k] for n, k in enumerate(ahead)})
    return out


def _walk(
    messages: Sequence[Message],
    originals: Sequence[Message],
    fits: Callable[[Message, Message], bool],
    droppable: Summary,
) -> list[int]:
    """For each message in turn, the place in ``originals`` of the one it rewrites: the next
    original, or one past originals a compaction drops there (``droppable``). Stops at the
    first message that fits none or fits two (no guess: the rest are written fresh)."""
    out: list[int] = []
    at = 0
    for message in messages:
        reach = at
        while reach < len(originals) and droppable(originals[reach]):
            reach += 1
        places = [
            k for k in range(at, min(reach + 1, len(originals))) if fits(message, originals[k])
        ]
        if len(places) != 1:
            break
        out.append(places[0])
        at = places[0] + 1
    return out


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
