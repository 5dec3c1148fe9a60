"""``Provenance``: where the words of one memory or skill write came from, as data.

Why a record of its own: a staged write, the audit trail and ``pending`` all show the same
facts (which untrusted sources the content overlaps, what the policy decided), and a record
read back from disk may have been edited, so it is validated like any other input (and one
is made within the limits it is read back with). It is shown, never trusted: nothing is
decided from what a stored record claims.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

__all__ = [
    "DECISIONS",
    "POLICIES",
    "SOURCE_KINDS",
    "UNTRUSTED_KINDS",
    "Found",
    "Provenance",
]

#: Where a write's words can come from. ``user``: the user's own message; ``model``: the
#: model's own words; ``tool``, ``attachment``, ``recalled``, ``summary``: text the model read
#: that someone else may control; ``review``: the background review; ``operator``: a person
#: at the command line; ``unknown``: library use, no session context.
SOURCE_KINDS: Final = (
    "user",
    "model",
    "tool",
    "attachment",
    "recalled",
    "summary",
    "review",
    "operator",
    "unknown",
)
UNTRUSTED_KINDS: Final = ("tool", "attachment", "recalled", "summary")
DECISIONS: Final = ("landed", "staged", "refused")
POLICIES: Final = ("stage", "refuse", "allow")
BACKING: Final = ("user", "quote", "none")
MAX_SOURCES: Final = 16
MAX_JSON_CHARS: Final = 4096
MAX_NOTE: Final = 400
_MAX_ID: Final = 200


@dataclass(frozen=True)
class Found:
    """One untrusted source the content overlaps: its kind, the tool (for a tool result) and
    its share (0..1) of the evidence found: the content's untrusted word runs and marks."""

    kind: str
    tool: str | None = None
    overlap: float = 0.0

    def __post_init__(self) -> None:
        # a tool's name is whatever the host called it: kept short enough to be read back
        if self.tool is not None and len(self.tool) > _MAX_ID:
            object.__setattr__(self, "tool", self.tool[:_MAX_ID])

    def label(self) -> str:
        return f"{self.kind}:{self.tool}" if self.tool else self.kind


@dataclass(frozen=True)
class Provenance:
    """Where one write's words came from and what the policy made of it."""

    source: str
    sources: tuple[Found, ...] = field(default_factory=tuple)
    backed_by: str = "none"
    session_id: str | None = None
    user_id: str | None = None
    written_at: float = 0.0
    decided: str | None = None
    policy: str | None = None
    note: str | None = None  # the review: which user message backs it, or why none does

    def __post_init__(self) -> None:
        # made short enough at creation that the record can always be read back
        for key in ("session_id", "user_id"):
            value = getattr(self, key)
            if value is not None and len(value) > _MAX_ID:
                object.__setattr__(self, key, value[:_MAX_ID])
        if len(self.sources) > MAX_SOURCES:
            object.__setattr__(self, "sources", self.sources[:MAX_SOURCES])
        while self.sources and len(json.dumps(self.to_json())) > MAX_JSON_CHARS:
            object.__setattr__(self, "sources", self.sources[:-1])  # the lightest goes first

    def label(self) -> str:
        """Short text for ``pending``: ``tool:web_fetch``, ``attachment``, ``user``..."""
        if self.sources:
            return self.sources[0].label()
        return self.source

    def with_decision(self, decided: str) -> Provenance:
        return replace(self, decided=decided)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "sources": [
                {"kind": s.kind, "tool": s.tool, "overlap": round(s.overlap, 3)}
                for s in self.sources
            ],
            "backed_by": self.backed_by,
            "session_id": self.session_id,
            "user_id": self.user_id,
            "written_at": self.written_at,
            "decided": self.decided,
            "policy": self.policy,
        } | ({"note": self.note} if self.note is not None else {})

    @classmethod
    def from_json(cls, data: object) -> Provenance:
        """The record stored as ``data``; ValueError saying what is wrong (it may have been
        edited by hand)."""
        if not isinstance(data, Mapping):
            raise ValueError("provenance is not an object")
        if len(json.dumps(data, default=str)) > MAX_JSON_CHARS:
            raise ValueError(f"provenance is larger than {MAX_JSON_CHARS} characters")
        unknown = set(data) - {f for f in cls.__dataclass_fields__}
        if unknown:
            raise ValueError(f"provenance has unknown fields {sorted(unknown)}")
        source = data.get("source")
        if source not in SOURCE_KINDS:
            raise ValueError(f"provenance source must be one of {', '.join(SOURCE_KINDS)}")
        if data.get("backed_by", "none") not in BACKING:
            raise ValueError("provenance backed_by must be user, quote or none")
        for key, allowed in (("decided", DECISIONS), ("policy", POLICIES)):
            if data.get(key) is not None and data.get(key) not in allowed:
                raise ValueError(f"provenance {key} must be one of {', '.join(allowed)}")
        note = data.get("note")
        if note is not None and (not isinstance(note, str) or len(note) > MAX_NOTE):
            raise ValueError(f"provenance note is not a string of at most {MAX_NOTE} characters")
        for key in ("session_id", "user_id"):
            value = data.get(key)
            if value is not None and (not isinstance(value, str) or len(value) > _MAX_ID):
                raise ValueError(f"provenance {key} is not a short string")
        when = data.get("written_at", 0.0)
        if not isinstance(when, (int, float)) or isinstance(when, bool):
            raise ValueError("provenance written_at is not a number")
        return cls(
            source=str(source),
            sources=_sources(data.get("sources", [])),
            backed_by=str(data.get("backed_by", "none")),
            session_id=data.get("session_id"),
            user_id=data.get("user_id"),
            written_at=float(when),
            decided=data.get("decided"),
            policy=data.get("policy"),
            note=note,
        )


def _sources(raw: object) -> tuple[Found, ...]:
    if not isinstance(raw, list) or len(raw) > MAX_SOURCES:
        raise ValueError(f"provenance sources is not a list of at most {MAX_SOURCES}")
    found = []
    for item in raw:
        if not isinstance(item, Mapping) or set(item) - {"kind", "tool", "overlap"}:
            raise ValueError("a provenance source is not {kind, tool, overlap}")
        kind, tool, overlap = item.get("kind"), item.get("tool"), item.get("overlap", 0.0)
        if kind not in UNTRUSTED_KINDS:
            kinds = ", ".join(UNTRUSTED_KINDS)
            raise ValueError(f"a provenance source kind must be one of {kinds}")
        if tool is not None and (not isinstance(tool, str) or len(tool) > _MAX_ID):
            raise ValueError("a provenance source tool is not a short string")
        if not isinstance(overlap, (int, float)) or isinstance(overlap, bool):
            raise ValueError("a provenance source overlap is not a number")
        if not 0.0 <= float(overlap) <= 1.0:
            raise ValueError("a provenance source overlap is not between 0 and 1")
        found.append(Found(str(kind), tool, float(overlap)))
    return tuple(found)
