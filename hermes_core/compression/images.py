"""Strip historical images: old screenshots cost ~1,500 tokens each and rarely matter later.

Rule (spec 10 §4 Phase 1): image parts in messages older than the newest image-bearing user
message become a text note; among tool results only the newest image-bearing one keeps its
image. The newest user image itself is retired too once a newer tool result carries an
image (a screenshot shows the state now), unless it belongs to the message being answered.
The note takes the image's place in the part list, so part indices (and everything
``validate_messages`` says about the message) stay the same. Malformed image parts are left
alone: they are the validator's to report, not ours to hide.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, cast

from hermes_core.compression.in_flight import in_flight_start
from hermes_core.transcript.messages import is_real_user_message
from hermes_core.transcript.parts import part_type

__all__ = [
    "IMAGE_NOTE",
    "IMAGE_PART_TYPES",
    "OVERFLOW_IMAGE_NOTE",
    "strip_historical_images",
    "strip_tool_images",
]

IMAGE_NOTE: Final = "[Attached image — stripped after compression]"
OVERFLOW_IMAGE_NOTE: Final = "[Image removed — the conversation did not fit the context window]"
#: Part types that carry an image (OpenAI chat, OpenAI responses, generic).
IMAGE_PART_TYPES: Final = frozenset({"image_url", "input_image", "image"})


def _is_image_part(part: object) -> bool:
    if not isinstance(part, dict) or part_type(part) not in IMAGE_PART_TYPES:
        return False
    if part["type"] != "image_url":
        return True
    image = part.get("image_url")
    url = image.get("url") if isinstance(image, dict) else None
    return isinstance(url, str) and bool(url)


def _image_count(msg: object) -> int:
    content = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(content, list):
        return 0
    return sum(1 for part in content if _is_image_part(part))


def _untagged(_index: int) -> str:
    return ""


def strip_historical_images(
    messages: Sequence[Mapping[str, Any]],
    *,
    tag: Callable[[int], str] = _untagged,
) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]], int]:
    """Return (new list, index -> original message for each changed one, images stripped).
    ``tag(i)``: the `` [ref R]`` naming message ``i``'s stored row, appended to its notes.

    Unchanged messages are the input objects; a changed one is a copy with a new content list.
    One pass to find the newest image-bearing user and tool messages, one to rewrite.
    """
    out = cast("list[dict[str, Any]]", list(messages))
    counts = [_image_count(msg) for msg in messages]
    newest_user = newest_tool = -1
    for i, msg in enumerate(messages):
        if counts[i] and isinstance(msg, dict):
            if msg.get("role") == "user":
                newest_user = i
            elif msg.get("role") == "tool":
                newest_tool = i
    answered = next(
        (i for i in range(len(messages) - 1, -1, -1) if is_real_user_message(messages[i])), -1
    )
    # a newer screenshot shows the state now: the newest user image goes too, unless the
    # user is asking about it in the message being answered
    superseded = newest_tool > newest_user >= 0 and newest_user != answered
    replaced: dict[int, dict[str, Any]] = {}
    stripped = 0
    live = in_flight_start(messages)  # the tool calls in flight keep their results as they are
    for i, msg in enumerate(messages[:live]):
        if not counts[i]:
            continue
        is_tool = isinstance(msg, dict) and msg.get("role") == "tool"
        if is_tool:
            keep = i == newest_tool and i > newest_user
        else:
            keep = i > newest_user or (i == newest_user and not superseded)
        if keep:
            continue
        original = cast("dict[str, Any]", msg)
        note = IMAGE_NOTE + tag(i)
        content = [
            {"type": "text", "text": note} if _is_image_part(part) else part
            for part in original["content"]
        ]
        out[i] = {**original, "content": content}
        replaced[i] = original
        stripped += counts[i]
    return out, replaced, stripped


def strip_tool_images(
    messages: Sequence[Mapping[str, Any]],
    *,
    tag: Callable[[int], str] = _untagged,
) -> tuple[list[dict[str, Any]], int]:
    """Return (new list, images stripped): the last resort when compression cannot fit.

    Every image part becomes a short note, except those of the newest real user message (the
    one being answered): all tool results' images, the newest one too (unlike Phase 1, which
    keeps it; this runs only after the provider refused the request, and an image costs
    ~1,500 tokens however old), and every older user image. Changed messages are copies with
    a new part list (indices kept); unchanged ones are the input objects. ``tag`` as for
    :func:`strip_historical_images`.
    """
    newest_user = next(
        (i for i in range(len(messages) - 1, -1, -1) if is_real_user_message(messages[i])), -1
    )
    out = cast("list[dict[str, Any]]", list(messages))
    stripped = 0
    live = in_flight_start(messages)  # the tool calls in flight keep their results as they are
    for i, msg in enumerate(messages[:live]):
        count = _image_count(msg)
        if not count or i == newest_user:
            continue
        note = {"type": "text", "text": OVERFLOW_IMAGE_NOTE + tag(i)}
        content = [note if _is_image_part(part) else part for part in msg["content"]]
        out[i] = {**msg, "content": content}
        stripped += count
    return out, stripped
