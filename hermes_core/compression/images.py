"""Strip historical images: old screenshots cost ~1,500 tokens each and rarely matter later.

Rule (spec 10 §4 Phase 1): image parts in messages older than the newest image-bearing user
message become a text note; among tool results only the newest image-bearing one keeps its
image. The note takes the image's place in the part list, so part indices (and everything
``validate_messages`` says about the message) stay the same. Malformed image parts are left
alone: they are the validator's to report, not ours to hide.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

__all__ = ["IMAGE_NOTE", "IMAGE_PART_TYPES", "strip_historical_images"]

IMAGE_NOTE: Final = "[Attached image — stripped after compression]"
#: Part types that carry an image (OpenAI chat, OpenAI responses, generic).
IMAGE_PART_TYPES: Final = frozenset({"image_url", "input_image", "image"})


def _is_image_part(part: object) -> bool:
    if not isinstance(part, dict) or part.get("type") not in IMAGE_PART_TYPES:
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


def strip_historical_images(
    messages: Sequence[Mapping[str, Any]],
) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]], int]:
    """Return (new list, index -> original message for each changed one, images stripped).

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
    replaced: dict[int, dict[str, Any]] = {}
    stripped = 0
    for i, msg in enumerate(messages):
        if not counts[i] or i == newest_user:
            continue
        is_tool = isinstance(msg, dict) and msg.get("role") == "tool"
        if i > newest_user and not (is_tool and i != newest_tool):
            continue
        original = cast("dict[str, Any]", msg)
        content = [
            {"type": "text", "text": IMAGE_NOTE} if _is_image_part(part) else part
            for part in original["content"]
        ]
        out[i] = {**original, "content": content}
        replaced[i] = original
        stripped += counts[i]
    return out, replaced, stripped
