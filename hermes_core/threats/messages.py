"""What a finding says: the blocked-write message and short, redacted excerpts."""

from __future__ import annotations

import re
from typing import Final

from hermes_core.redact import redact
from hermes_core.types import Finding

_EXCERPT_CHARS = 80
_SPACES: Final = re.compile(r"\s{1,1000}")
_UNPRINTABLE: Final = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\u3164"
    "\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)


def threat_message(finding_or_id: Finding | str) -> str:
    """The message a blocked memory write returns, naming the pattern."""
    pattern_id = finding_or_id if isinstance(finding_or_id, str) else finding_or_id.pattern_id
    return (
        f"Blocked: content matches threat pattern '{pattern_id}'. Memory is injected into the "
        "system prompt and must not carry injection or exfiltration payloads."
    )


def _visible(text: str) -> str:
    """Hidden characters spelled out (``<U+200B>``) so an excerpt shows what was there."""
    return _UNPRINTABLE.sub(lambda match: f"<U+{ord(match.group()):04X}>", text)


def excerpt(snippet: str) -> str:
    """A one-line, redacted, at most 80-character view of matched text."""
    text = _SPACES.sub(" ", _visible(redact(snippet[:2000]))).strip()
    if len(text) > _EXCERPT_CHARS:
        text = text[: _EXCERPT_CHARS - 1].rstrip() + "…"
    return text


def excerpt_around(text: str, offset: int) -> str:
    """An excerpt of the raw text around ``offset``, with the hidden characters spelled out."""
    start = max(0, offset - 24)
    return excerpt(text[start : offset + 24])
