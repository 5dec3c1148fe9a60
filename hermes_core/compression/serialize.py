"""Turn messages into the labelled text a summariser reads.

Labels keep roles and tool pairs readable without JSON noise; head-and-tail cuts keep the start
(the command, the question) and the end (the result, the error) of anything long. Secrets are
redacted per message before any cut, so a cut can never leave half a key unrecognised.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.redact import redact
from hermes_core.transcript.messages import tool_name_for_results
from hermes_core.transcript.parts import part_type

__all__ = [
    "MAX_SUMMARY_INPUT_CHARS",
    "PER_MESSAGE_MAX_CHARS",
    "head_tail",
    "redacted_head_tail",
    "serialize_turns",
]

MAX_SUMMARY_INPUT_CHARS = 160_000
PER_MESSAGE_MAX_CHARS = 20_000
#: Share of a cut text kept from its start; the rest comes from its end (newer matters more).
HEAD_SHARE = 0.4

_IMAGE_PART_TYPES = frozenset({"image_url", "image", "input_image"})
_SEPARATOR = "\n\n"
_MESSAGE_MARKER = "[... {n} chars omitted ...]"
#: Longer than any match of :data:`hermes_core.redact.SECRET_PATTERNS` (the JWT one, ~6,000).
_REDACT_MARGIN = 8_192


def _split(length: int, limit: int, marker: str) -> tuple[int, int, str] | None:
    """Head size, tail size and middle text for cutting ``length`` chars to ``limit``.

    ``None`` when the marker itself does not fit (then the plain head is kept).
    """
    room = limit - len(f"\n{marker.format(n=length)}\n")
    if room <= 0:
        return None
    head = int(room * HEAD_SHARE)
    tail = room - head
    return head, tail, f"\n{marker.format(n=length - head - tail)}\n"


def head_tail(text: str, limit: int, marker: str = _MESSAGE_MARKER) -> str:
    """``text`` cut to at most ``limit`` characters, keeping its head and tail around ``marker``.

    ``marker`` has an ``{n}`` field for the number of characters left out. When even the
    marker does not fit, the plain head is returned.
    """
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    split = _split(len(text), limit, marker)
    if split is None:
        return text[:limit]
    head, tail, middle = split
    return text[:head] + middle + (text[-tail:] if tail else "")


def redacted_head_tail(text: str, limit: int) -> str:
    """``head_tail(redact(text), limit)``, redacting only windows around the kept parts.

    Each window reaches ``2 * _REDACT_MARGIN`` past its kept part, more than the longest
    secret a pattern matches, so a key cut by the window edge lies outside the kept part; when
    redaction shrank a window into that margin, the whole text is redacted instead.
    """
    split = _split(len(text), limit, _MESSAGE_MARKER)
    if split is None or len(text) <= limit + 4 * _REDACT_MARGIN:
        return head_tail(redact(text), limit)
    head, tail, middle = split
    head_window = redact(text[: head + 2 * _REDACT_MARGIN])
    tail_window = redact(text[-(tail + 2 * _REDACT_MARGIN) :])
    if min(len(head_window) - head, len(tail_window) - tail) < _REDACT_MARGIN:
        return head_tail(redact(text), limit)
    return head_window[:head] + middle + (tail_window[-tail:] if tail else "")


def _part_text(part: object) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, Mapping):
        return ""
    kind = part_type(part)
    if kind == "text" and isinstance(part.get("text"), str):
        text: str = part["text"]
        return text
    if kind in _IMAGE_PART_TYPES:
        return "[image]"
    return f"[{kind}]" if isinstance(kind, str) and kind else ""


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(filter(None, (_part_text(part) for part in content)))
    return ""


def _tool_call_lines(calls: object) -> list[str]:
    if not isinstance(calls, list):
        return []
    lines = []
    for call in calls:
        if not isinstance(call, Mapping):
            continue
        function = call.get("function")
        name = arguments = ""
        if isinstance(function, Mapping):
            raw_name, raw = function.get("name"), function.get("arguments")
            name = raw_name if isinstance(raw_name, str) else ""
            if isinstance(raw, str):
                arguments = raw
            elif raw is not None:
                arguments = json.dumps(raw, ensure_ascii=False, default=str)
        lines.append(f"-> {name or '?'}({arguments})")
    return lines


def _label(msg: Mapping[str, Any], tool_names: Mapping[str, str]) -> str:
    role = msg.get("role")
    if role == "user":
        return "[USER]"
    if role == "assistant":
        return "[ASSISTANT]"
    if role in ("system", "developer"):
        return "[SYSTEM]"
    if role == "tool":
        call_id = msg.get("tool_call_id")
        call_id = call_id if isinstance(call_id, str) else ""
        name = tool_names.get(call_id) or msg.get("name")
        parts = ["TOOL RESULT", call_id, name if isinstance(name, str) else ""]
        return "[" + " ".join(part for part in parts if part) + "]"
    return f"[{str(role).upper()}]" if isinstance(role, str) and role else "[UNKNOWN]"


_REASONING_OPEN = re.compile(r"<(think|thinking|reasoning)\b[^<>]{0,200}>", re.IGNORECASE)


def strip_inline_reasoning(text: str) -> str:
    """``text`` without ``<think>``, ``<thinking>`` and ``<reasoning>`` blocks: a model's
    private reasoning is not what happened, and it costs summariser tokens (native
    ``reasoning`` fields are never serialised). A block never closed runs to the end.
    One forward pass: each tag is found once."""
    if "<" not in text:
        return text
    lower = text.lower()
    parts: list[str] = []
    position = 0
    while (opening := _REASONING_OPEN.search(text, position)) is not None:
        parts.append(text[position : opening.start()])
        closing = lower.find(f"</{opening.group(1).lower()}", opening.end())
        if closing < 0:
            return "".join(parts).rstrip()
        end = lower.find(">", closing)
        position = len(text) if end < 0 else end + 1
    parts.append(text[position:])
    return "".join(parts)


def _block(msg: Mapping[str, Any], tool_names: Mapping[str, str], per_message_max: int) -> str:
    content = _content_text(msg.get("content"))
    lines = [content]
    if msg.get("role") == "assistant":
        lines = [strip_inline_reasoning(content).strip()]
        lines.extend(_tool_call_lines(msg.get("tool_calls")))
    body = redacted_head_tail("\n".join(line for line in lines if line), per_message_max)
    label = redact(_label(msg, tool_names))
    return f"{label}\n{body}" if body else label


def serialize_turns(
    messages: Sequence[Mapping[str, Any]],
    *,
    max_chars: int = MAX_SUMMARY_INPUT_CHARS,
    per_message_max: int = PER_MESSAGE_MAX_CHARS,
) -> str:
    """Labelled, redacted text of ``messages``, never longer than ``max_chars``.

    Labels: ``[USER]``, ``[ASSISTANT]`` (tool calls as ``-> name(arguments)``),
    ``[TOOL RESULT <id> <tool name>]``, ``[SYSTEM]``; image parts read ``[image]``. A message
    body over ``per_message_max`` keeps its head and tail; the whole text over ``max_chars``
    keeps its head and tail with a marker saying how many characters of older turns were left
    out. One pass over the input.
    """
    msgs = [m for m in messages if isinstance(m, Mapping)]
    tool_names = tool_name_for_results(msgs)
    marker = "[... {n} chars of older turns omitted ...]"
    # Serialise from both ends only as far as the cap can reach: a huge middle is never
    # rendered (or redacted) just to be cut away.
    head: list[str] = []
    used, start = 0, 0
    while start < len(msgs) and used <= max_chars:
        head.append(_block(msgs[start], tool_names, per_message_max))
        used += len(head[-1]) + len(_SEPARATOR)
        start += 1
    tail: list[str] = []
    used, stop = 0, len(msgs)
    while stop > start and used <= max_chars:
        stop -= 1
        tail.append(_block(msgs[stop], tool_names, per_message_max))
        used += len(tail[-1]) + len(_SEPARATOR)
    if stop <= start:
        text = head_tail(_SEPARATOR.join(head + tail[::-1]), max_chars, marker)
    else:
        head_text, tail_text = _SEPARATOR.join(head), _SEPARATOR.join(tail[::-1])
        skipped = sum(len(_SEPARATOR) + len(str(m.get("content") or "")) for m in msgs[start:stop])
        total = len(head_text) + skipped + len(_SEPARATOR) + len(tail_text)
        split = _split(total, max_chars, marker)
        if split is None:
            text = head_text[:max_chars]
        else:
            keep_head, keep_tail, middle = split
            text = head_text[:keep_head] + middle + (tail_text[-keep_tail:] if keep_tail else "")
    # Already redacted per message; this pass guards the joins and costs at most max_chars.
    text = redact(text)
    return text[:max_chars] if len(text) > max_chars else text
