"""A session in the host's own message format (Anthropic Messages, OpenAI Responses).

Why apart from :class:`~hermes_core.host.session.Session`: the session works on OpenAI chat
messages (store, compressor, recall); this glue converts the host's list on the way in and
the list to send on the way out. What it remembers between the two is the conversion of the
host's latest list and, for each message of the session's view, which of the host's items
it was made from: keyed by the identity of the view's entry, which a compaction keeps for
every message it does not rewrite. So the messages a compaction kept come back as the
host's own objects, byte for byte (ids, ``cache_control``, thinking blocks and their
signatures, unknown blocks and keys). A message the compaction rewrote (a summary merged in
front, a pruned tool result, shortened arguments) is a new entry: it takes the origin of the
entry it was made from (:mod:`hermes_core.formats.rewrites`) and is rebuilt on those host
objects, as the library path does; only a message with no original (a summary of its own) is
written fresh in the host's format. Each call follows the origins to the host's current list
(a host may rebuild its objects every turn), so what comes back is always the host's objects
of this turn.

The host passes its messages without the system text: for Anthropic that goes through
``Session.system_prompt`` into the request's top-level ``system``; a Responses host sends it
as ``instructions`` (or keeps system/developer items in its input, as with OpenAI).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hermes_core.compression.assemble import MERGED_KEY, is_summary_message
from hermes_core.errors import HermesError
from hermes_core.formats.convert import from_openai, to_openai
from hermes_core.formats.model import (
    HIDDEN_KEY,
    SYSTEM_ITEM,
    Converted,
    Source,
    check_format,
    stamp,
)
from hermes_core.formats.rewrites import rewritten_from
from hermes_core.transcript.identity import message_digest

__all__ = ["HostFormat", "host_format"]

Message = dict[str, Any]


def host_format(message_format: object) -> HostFormat | None:
    """The glue for ``message_format``; ``None`` for ``"openai"`` (nothing to convert)."""
    if message_format == "openai":
        return None
    if message_format not in ("anthropic", "responses"):
        raise HermesError(
            f"message_format must be 'openai', 'anthropic' or 'responses', got {message_format!r}"
        )
    return HostFormat(check_format(message_format))


@dataclass(frozen=True)
class _Origin:
    """The host's side of one view entry, independent of any one conversion: the host
    objects it was made from, the units of them it carries, and (Anthropic) every OpenAI
    message made from the same host message, so a message split in several comes back whole
    only when all of them are kept unchanged."""

    entry: Message
    objects: tuple[Any, ...]
    units: tuple[int, ...] | None
    digest: bytes
    siblings: tuple[tuple[tuple[int, ...] | None, bytes], ...] = ()
    part: int = 0
    #: where it sat in the host's list: the host item its source is made from (``item``) and
    #: that item's object, to find the host's current object for it in the next list
    item: int = 0
    anchor: Any = None


class HostFormat:
    """Conversion in and out for one session (used under the session's lock)."""

    def __init__(self, fmt: str) -> None:
        self.format = check_format(fmt)
        self._converted: Converted | None = None
        self._made: list[Message] = []
        self._origins: dict[int, _Origin] = {}  # id(view entry) -> where it came from
        self._before: list[Message] = []  # the view remember() saw (what a compaction rewrites)
        # the first object the last outgoing() wrote as a user message for an assistant entry
        # (a leading summary, see formats/anthropic.py), and that entry's OpenAI form
        self._relabeled: tuple[Any, Message] | None = None

    def incoming(self, payload: object) -> list[Message]:
        """The host's messages as OpenAI messages (no hidden keys: they are stored)."""
        if isinstance(payload, (str, bytes, Mapping)) or not isinstance(payload, Sequence):
            what = "an object" if isinstance(payload, Mapping) else type(payload).__name__
            hint = (
                "; send the system text through session.system_prompt(), not in the list"
                if isinstance(payload, Mapping)
                else ""
            )
            raise HermesError(
                f"a {self.format} session takes the list of messages (input items), got "
                f"{what}{hint}"
            )
        converted = to_openai(list(payload), self.format)
        self._converted = converted
        self._made = [{k: v for k, v in m.items() if k != HIDDEN_KEY} for m in converted.messages]
        self._unlabel(converted)
        return self._made

    def _unlabel(self, converted: Converted) -> None:
        """The leading summary prepare() wrote as a user message, handed back, reads as the
        assistant message the session holds (else the host's list would look rewritten)."""
        if self._relabeled is None or not converted.items:
            return
        written, form = self._relabeled
        first = converted.items[0]
        if first is not written and first != written:
            return
        made = converted.item_sources(0)
        if len(made) != 1 or self._made[made[0]].get("role") != "user":
            return
        index = made[0]
        self._made[index] = {**self._made[index], "role": form.get("role")}
        digest = message_digest(self._made[index])
        converted.sources[index] = replace(converted.sources[index], digest=digest)

    def remember(self, view: Sequence[Message]) -> None:
        """After the view took the host's list in: where each new entry came from. The view
        lines up with the host's list at its end (the new messages); when it has the same
        length (a host that sends back what it got, or a rewritten history) it lines up
        everywhere. Entries no longer in the view are forgotten."""
        converted = self._converted
        if converted is None:
            return
        present = {id(entry) for entry in view}
        origins = {k: o for k, o in self._origins.items() if k in present}
        whole = len(view) == len(self._made)
        placed: dict[int, int] = {}  # id(entry) -> the source it was given here
        for back in range(1, min(len(view), len(self._made)) + 1):
            entry = view[-back]
            known = origins.get(id(entry))
            if known is not None and known.entry is entry and not whole:
                break  # older entries were placed by earlier calls: see _follow
            origin = self._origin(entry, converted, len(self._made) - back)
            placed[id(entry)] = len(self._made) - back
            if origin is not None:
                origins[id(entry)] = origin
        self._origins = origins
        self._before = list(view)
        self._follow(view, converted, placed)

    def _follow(
        self, view: Sequence[Message], converted: Converted, placed: dict[int, int]
    ) -> None:
        """Older entries take the host's current objects for them: a host that rebuilds its
        list each turn (moves its cache_control breakpoint, strips old thinking blocks) sends
        new objects for the same messages, and what prepare() returns must be those, not the
        ones of the turn an entry was first seen in. Found by identity (the same object, still
        the same OpenAI message), else at the same place in the host's list with the same
        digest; an entry found in neither keeps what it had."""
        by_object: dict[tuple[int, int], int] = {}
        by_place: dict[tuple[int, int], int] = {}
        parts: dict[int, int] = {}
        for number, source in enumerate(converted.sources):
            if source.item == SYSTEM_ITEM:
                continue
            part = parts.get(source.item, 0)
            parts[source.item] = part + 1
            by_object[(id(converted.items[source.item]), part)] = number
            by_place[(source.item, part)] = number
        used = set(placed.values())
        for entry in view:
            old = self._origins.get(id(entry))
            if old is None or old.entry is not entry or id(entry) in placed:
                continue
            found = by_object.get((id(old.anchor), old.part))
            if found is None or converted.items[converted.sources[found].item] is not old.anchor:
                found = by_place.get((old.item, old.part))
            if found is None or found in used or converted.sources[found].digest != old.digest:
                continue
            new = self._origin(entry, converted, found)
            if new is not None:
                used.add(found)
                self._origins[id(entry)] = new

    def _origin(self, entry: Message, converted: Converted, index: int) -> _Origin | None:
        source = converted.sources[index]
        if source.item == SYSTEM_ITEM:
            return None
        anchor = converted.items[source.item]
        if self.format == "responses":
            objects = tuple(converted.items[k] for k in source.units or ())
            units = tuple(range(len(objects)))
            return _Origin(entry, objects, units, source.digest, item=source.item, anchor=anchor)
        parts = converted.item_sources(source.item)
        siblings = tuple((converted.sources[i].units, converted.sources[i].digest) for i in parts)
        return _Origin(
            entry,
            (anchor,),
            source.units,
            source.digest,
            siblings,
            parts.index(index),
            item=source.item,
            anchor=anchor,
        )

    def outgoing(self, view: Sequence[Message], wire: Sequence[Message]) -> list[Any]:
        """The list to send, in the host's format: a conversion record is rebuilt from the
        origins of the entries still in the view, so kept messages come back as the host's
        own objects."""
        self._inherit(view)
        record = Converted(self.format, [])
        placed: dict[int, int] = {}  # id(host message) -> index of its first source
        stamped: list[Message] = []
        for entry, message in zip(view, wire, strict=True):
            origin = self._origins.get(id(entry))
            if origin is None or origin.entry is not entry:
                stamped.append(message)
                continue
            stamped.append(stamp(message, self._place(record, origin, placed)))
        out = list(from_openai(stamped, record))
        self._relabeled = None
        first = out[0] if out and view and self.format == "anthropic" else None
        if isinstance(first, dict) and first.get("role") != view[0].get("role"):
            self._relabeled = (first, view[0])
        return out

    def _inherit(self, view: Sequence[Message]) -> None:
        """A new entry the compaction made of one it rewrote takes that entry's origin, so it
        is rebuilt on the host objects it came from (its digest is the original's, so the way
        back sees it changed), never written fresh."""
        unknown = {id(e): e for e in view if self._known(e) is None}
        if not unknown or not self._before:
            return
        found = rewritten_from(
            view, self._before, merged_key=MERGED_KEY, is_summary=is_summary_message
        )
        for new_id, original in found.items():
            origin = self._known(original)
            if origin is not None and new_id in unknown:
                self._origins[new_id] = replace(origin, entry=unknown[new_id])

    def _known(self, entry: Mapping[str, Any]) -> _Origin | None:
        origin = self._origins.get(id(entry))
        return origin if origin is not None and origin.entry is entry else None

    def _place(self, record: Converted, origin: _Origin, placed: dict[int, int]) -> int:
        """Add ``origin``'s host objects and sources to ``record``; the index of its source."""
        if self.format == "responses":
            start = len(record.items)
            record.items.extend(origin.objects)
            units = tuple(start + k for k in origin.units or ())
            record.sources.append(Source(start, units, origin.digest))
            return len(record.sources) - 1
        message = origin.objects[0]
        first = placed.get(id(message))
        if first is None or record.items[record.sources[first].item] is not message:
            item = len(record.items)
            record.items.append(message)
            first = len(record.sources)
            record.sources.extend(Source(item, units, digest) for units, digest in origin.siblings)
            placed[id(message)] = first
        return first + origin.part
