"""The prompt's size as the API reported it, from a usage record in any shape.

Why one function: the session (whatever its message format) and the compressor anchor their
count on the real figure, and the three APIs report it differently:

* OpenAI chat completions: ``prompt_tokens``, of which ``prompt_tokens_details.cached_tokens``
  were read from the prompt cache (already inside ``prompt_tokens``);
* OpenAI Responses: ``input_tokens``, of which ``input_tokens_details.cached_tokens``;
* Anthropic Messages: ``input_tokens`` counts only what was neither read from nor written to
  the cache, so the prompt is ``input_tokens + cache_creation_input_tokens +
  cache_read_input_tokens``.

A usage record may be a mapping or the SDK's object (``response.usage``), or the whole
response holding it. A count that is not a whole number (a string, a bool, a float, a
negative) is an :class:`~hermes_core.errors.InvalidArgument`: anchoring on it would be
silently wrong. A count the record leaves out, or ``None``, is simply not reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from hermes_core.errors import InvalidArgument
from hermes_core.transcript.objects import is_sdk_object, plain_object

__all__ = ["PromptUsage", "prompt_usage"]

#: every token count a usage record of the three APIs holds at its top level
_COUNTS: Final = (
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
_DETAILS: Final = ("prompt_tokens_details", "input_tokens_details")
_EXPECTED: Final = (
    "the API response's usage as a mapping ({'prompt_tokens': ...}) or the SDK's usage "
    "object (response.usage, anything with .model_dump())"
)


@dataclass(frozen=True)
class PromptUsage:
    """What a response says of its prompt: ``tokens`` in all (what the count anchors on),
    of which ``cached`` were read from the provider's prompt cache."""

    tokens: int
    cached: int = 0


def prompt_usage(usage: object) -> PromptUsage | None:
    """The prompt's size in ``usage`` (see the module docstring); ``None`` when the record
    reports none. :class:`InvalidArgument` for a record of the wrong type or a bad count."""
    record = _record(usage)
    if "usage" in record and not any(key in record for key in _COUNTS):
        inner = record["usage"]  # a whole response: its usage, or none reported
        return None if inner is None else prompt_usage(inner)
    counts = {key: _count(record, key, "usage") for key in _COUNTS}
    cached = {key: _cached(record, key) for key in _DETAILS}
    if counts["prompt_tokens"] is not None:
        found = PromptUsage(counts["prompt_tokens"], cached["prompt_tokens_details"] or 0)
    elif counts["input_tokens"] is None:
        return None
    else:
        written = counts["cache_creation_input_tokens"] or 0
        read = counts["cache_read_input_tokens"] or 0
        total = counts["input_tokens"] + written + read
        found = PromptUsage(total, read + (cached["input_tokens_details"] or 0))
    if found.cached > found.tokens:
        raise InvalidArgument(
            f"usage: {found.cached:,} cached tokens of a {found.tokens:,}-token prompt; "
            "cached tokens are part of the prompt, so they cannot exceed it"
        )
    return found


def _record(usage: object) -> Mapping[str, Any]:
    if isinstance(usage, Mapping):
        return usage
    if is_sdk_object(usage):
        return plain_object(usage, "usage")
    wrong = InvalidArgument.of("usage", _EXPECTED, usage)
    if usage is None:  # response.usage of a server that reports none
        raise InvalidArgument(f"{wrong}; with no usage reported, pass the whole response or skip")
    raise wrong


def _count(record: Mapping[str, Any], key: str, where: str) -> int | None:
    value = record.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidArgument.of(f"{where}[{key!r}]", "a token count (an int >= 0) or None", value)
    return value


def _cached(record: Mapping[str, Any], key: str) -> int | None:
    details = record.get(key)
    if details is None:
        return None
    if is_sdk_object(details):
        details = plain_object(details, f"usage[{key!r}]")
    if not isinstance(details, Mapping):
        raise InvalidArgument.of(f"usage[{key!r}]", "a mapping or None", details)
    return _count(details, "cached_tokens", f"usage[{key!r}]")
