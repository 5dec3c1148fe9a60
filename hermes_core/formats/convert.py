"""The entry points: a payload in any format to OpenAI messages and back, and its problems.

Why one dispatch: the command line and :class:`~hermes_core.host.session.Session` need the
same three calls whatever the host speaks; OpenAI payloads pass through unchanged. SDK objects
(messages, content blocks, output items) are read as their dicts here, at the edge
(:mod:`hermes_core.transcript.objects`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.errors import InvalidMessages, NotAMessage
from hermes_core.formats.anthropic import anthropic_from_openai, anthropic_to_openai
from hermes_core.formats.anthropic_checks import anthropic_problems
from hermes_core.formats.detect import detect
from hermes_core.formats.model import Converted, check_format
from hermes_core.formats.responses import responses_from_openai, responses_to_openai
from hermes_core.formats.responses_checks import responses_problems
from hermes_core.transcript.messages import to_wire
from hermes_core.transcript.objects import as_message_list, plain_payload
from hermes_core.transcript.validation import kind_of, validate_messages

__all__ = [
    "blank",
    "dump_payload",
    "from_openai",
    "load_payload",
    "payload_problems",
    "to_openai",
]


def to_openai(payload: Any, fmt: str = "openai", *, allow_pending: bool = True) -> Converted:
    """OpenAI chat messages for ``payload`` in format ``fmt``, with what the way back needs.

    Raises ``InvalidMessages`` naming every problem (nothing converted) when the payload is
    not valid in its format. ``allow_pending``: the calls of the last turn may lack results
    (an in-flight turn, as the compressor accepts)."""
    fmt = check_format(fmt)
    payload = plain_payload(payload)
    if fmt == "anthropic":
        return anthropic_to_openai(payload, allow_pending=allow_pending)
    if fmt == "responses":
        return responses_to_openai(payload, allow_pending=allow_pending)
    if isinstance(payload, Mapping):
        messages = payload.get("messages")
        if not isinstance(messages, list):
            problem = f'payload: "messages" must be a list of messages, got {kind_of(messages)}'
            raise InvalidMessages(problem, [problem])
        return Converted("openai", _valid(messages, allow_pending), envelope=payload)
    if not isinstance(payload, list):
        problem = f"payload: expected a list of messages, got {kind_of(payload)}"
        raise InvalidMessages(problem, [problem])
    return Converted("openai", _valid(payload, allow_pending))


def _valid(messages: list[Any], allow_pending: bool) -> list[Any]:
    """OpenAI messages are checked as the other formats are: an unknown role or a broken
    tool-call pair is refused here, not passed on to fail later (docs/formats.md)."""
    problems = validate_messages(messages, allow_pending_tool_calls=allow_pending)
    if problems:
        many = f"{len(problems):,} problem{'' if len(problems) == 1 else 's'}"
        raise InvalidMessages(f"invalid OpenAI transcript ({many}): {problems[0]}", problems)
    return messages


def from_openai(messages: Sequence[Any], converted: Converted) -> Any:
    """``messages`` (``converted.messages``, or what a compaction made of them) in the host's
    format and shape. Messages kept unchanged come back as the host's own objects."""
    messages = _messages(messages)
    if converted.format == "anthropic":
        return anthropic_from_openai([dict(m) for m in messages], converted)
    if converted.format == "responses":
        return responses_from_openai([dict(m) for m in messages], converted)
    if converted.envelope is None:
        return list(messages)
    return {**converted.envelope, "messages": list(messages)}


def blank(fmt: str) -> Converted:
    """A conversion with nothing to go back to: ``from_openai(messages, blank(fmt))`` writes
    OpenAI messages in ``fmt`` from scratch (an object payload for Anthropic and Responses,
    so a system message has a place; a list for OpenAI)."""
    fmt = check_format(fmt)
    return Converted(fmt, [], envelope=None if fmt == "openai" else {})


def payload_problems(payload: Any, fmt: str) -> list[str]:
    """Every problem of ``payload`` in format ``fmt`` ([] when valid): the format's own
    checks (indexes into its messages or items), else those of the OpenAI messages it makes."""
    fmt = check_format(fmt)
    payload = plain_payload(payload, lenient=True)
    if fmt == "openai":
        try:
            converted = to_openai(payload, "openai")
        except InvalidMessages as exc:
            return exc.problems
        return validate_messages(converted.messages)
    checks = anthropic_problems if fmt == "anthropic" else responses_problems
    problems = checks(payload)
    if problems:
        return problems
    converted = to_openai(payload, fmt)
    return [f"as OpenAI messages: {p}" for p in validate_messages(converted.messages)]


def load_payload(obj: Any, fmt: str | None = None) -> Converted:
    """What the command line calls on a parsed file: ``fmt`` (``None``: detect; a payload
    that fits several formats reads the same in each, so it is read as OpenAI)."""
    obj = plain_payload(obj)
    if fmt is None:
        fmt = detect(obj) or "openai"
    return to_openai(obj, fmt)


def dump_payload(messages: Sequence[Any], converted: Converted) -> Any:
    """``messages`` back in the payload's format, ready for ``json.dumps`` (for OpenAI the
    in-process ``_`` keys are dropped, as ``to_wire`` does)."""
    if converted.format == "openai":
        return from_openai(to_wire(messages), converted)
    return from_openai(messages, converted)


def _messages(messages: Sequence[Any]) -> list[Any]:
    """OpenAI messages handed to the way back, SDK objects read as dicts."""
    out = as_message_list(list(messages))
    for index, message in enumerate(out):
        if not isinstance(message, Mapping):
            problem = f"message {index}: expected a message dict, got {type(message).__name__}"
            raise NotAMessage(problem, [problem])
    return list(out)
