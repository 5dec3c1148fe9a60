"""``--format openai|anthropic|responses``: the message format of a command's transcript.

Why one module: ``compress``, ``tokens``, ``validate`` and ``eval`` read the same files the
same way. Without ``--format`` the format is told from the content (`detect`) when the
shape says so, and read as OpenAI when it fits several (plain role-and-text messages read
the same in each); a file whose parts contradict each other is refused, never guessed.
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_core.cli.common import EXIT_INPUT, CommandError
from hermes_core.errors import InvalidMessages

if TYPE_CHECKING:
    from hermes_core.formats import Converted

FORMAT_CHOICES = ("openai", "anthropic", "responses")
FILE_HELP = (
    'OpenAI messages (a JSON list, {"messages": [...]} or JSON Lines), an Anthropic '
    'request ({"system", "messages"}), a Responses input ({"input": [...]}), or -'
)


def add_format_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=FORMAT_CHOICES,
        help="the transcript's message format: openai (chat completions), anthropic "
        "(Messages API) or responses (Responses API input); default: told from the "
        "content, openai when it fits several",
    )


@dataclass(frozen=True)
class FormattedTranscript:
    """A transcript file read in its format: the parsed payload and how it was read."""

    payload: Any
    format: str
    #: True when the format came from the content, not from ``--format``
    detected: bool


def read_formatted(path: str, fmt: str | None) -> FormattedTranscript:
    """The payload of ``path`` and its format (``fmt``, else detected; OpenAI when the
    content fits several). A payload whose parts contradict each other exits 1."""
    from hermes_core.formats import detect
    from hermes_core.transcript.files import read_payload

    payload = read_payload(path)
    if fmt is not None:
        return FormattedTranscript(payload, fmt, detected=False)
    try:
        found = detect(payload)
    except InvalidMessages as exc:
        raise CommandError(f"{path}: {exc}", EXIT_INPUT) from None
    return FormattedTranscript(payload, found or "openai", detected=True)


def converted(path: str, transcript: FormattedTranscript) -> Converted:
    """The OpenAI messages of ``transcript`` (and the way back to its format). An OpenAI
    file is shape-checked as ``read_transcript`` checks it; another format must be valid in
    that format, else exit 1 naming the first problem and the command that lists them all."""
    from hermes_core.formats import Converted, load_payload

    payload = transcript.payload
    if transcript.format == "openai":
        messages = openai_messages(path, payload)
        envelope = payload if isinstance(payload, dict) else None
        return Converted("openai", messages, envelope=envelope)
    try:
        return load_payload(payload, transcript.format)
    except InvalidMessages as exc:
        raise CommandError(
            f"{path}: {exc}; `hermes-context validate --format {transcript.format} {path}` "
            f"lists every problem",
            EXIT_INPUT,
        ) from None


def openai_messages(path: str, payload: Any) -> list[dict[str, Any]]:
    """The messages of a payload read as OpenAI, shape-checked as ``read_transcript`` checks
    them; a top-level ``system`` (an Anthropic request's) exits 1 instead of being dropped."""
    from hermes_core.transcript.files import transcript_messages

    if isinstance(payload, dict) and "system" in payload:
        raise CommandError(
            f'{path}: a top-level "system" is an Anthropic request\'s (OpenAI messages carry '
            "it as a system message): give --format anthropic, or move it into the messages",
            EXIT_INPUT,
        )
    return transcript_messages(payload, path)


def carried(conversion: Converted) -> dict[str, int]:
    """How many blocks or items of each type have no OpenAI form (thinking, reasoning,
    documents, unknown types): they travel with their message untouched, and are not
    counted as tokens. Empty for OpenAI."""
    from hermes_core.formats.anthropic_parts import part_of_block
    from hermes_core.formats.responses_checks import MESSAGE_ROLES, item_kind
    from hermes_core.formats.responses_parts import chat_part

    kinds: Counter[str] = Counter()
    for item in conversion.items:
        if conversion.format == "anthropic":
            content = item.get("content")
            blocks = content if isinstance(content, list) else []
            for block in blocks:
                kind = block.get("type")
                if kind not in ("tool_use", "tool_result") and part_of_block(block) is None:
                    kinds[str(kind)] += 1
            continue
        kind = item_kind(item)
        if kind in MESSAGE_ROLES:
            content = item.get("content")
            parts = content if isinstance(content, list) else []
            kinds.update(str(p.get("type")) for p in parts if chat_part(p) is None)
        elif kind not in ("function_call", "function_call_output"):
            kinds[kind] += 1  # reasoning, and item types with no chat form
    return dict(sorted(kinds.items()))


def foreign_parts(messages: list[Any]) -> list[str]:
    """Problems for OpenAI messages read as OpenAI although a message is in another format
    (an Anthropic ``tool_use`` block, a Responses ``input_text`` part): OpenAI would refuse
    them, and without ``--format openai`` the file would have been read in that format."""
    from hermes_core.formats import detect

    problems: list[str] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            continue
        try:
            found = detect([message])
        except InvalidMessages:
            found = None
            problems.append(f"message {index}: its content parts mix message formats")
            continue
        if found in ("anthropic", "responses"):
            problems.append(
                f"message {index}: its content is in the {found} format, which OpenAI does "
                f"not accept (read it with --format {found})"
            )
    return problems
