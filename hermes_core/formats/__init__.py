"""Adapters between the formats hosts speak and the OpenAI chat messages used inside.

``to_openai(payload, fmt)`` gives a :class:`Converted` (the messages, and what the way back
needs), ``from_openai(messages, converted)`` the host's payload again, ``detect(payload)``
the format when the shape is unambiguous. Formats: ``openai`` (chat completions),
``anthropic`` (Messages API), ``responses`` (Responses API input). See docs/formats.md.
"""

from __future__ import annotations

from hermes_core.formats.anthropic_checks import anthropic_problems
from hermes_core.formats.convert import (
    blank,
    dump_payload,
    from_openai,
    load_payload,
    payload_problems,
    to_openai,
)
from hermes_core.formats.detect import detect
from hermes_core.formats.model import FORMATS, HIDDEN_KEY, Converted, Format
from hermes_core.formats.responses_checks import responses_problems

__all__ = [
    "FORMATS",
    "HIDDEN_KEY",
    "Converted",
    "Format",
    "anthropic_problems",
    "blank",
    "detect",
    "dump_payload",
    "from_openai",
    "load_payload",
    "payload_problems",
    "responses_problems",
    "to_openai",
]
