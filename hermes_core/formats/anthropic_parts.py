"""One Anthropic block and one OpenAI content part or tool call, each way.

Pure and small so the conversion and the template merge agree on what a block "is" on the
OpenAI side: a block with no OpenAI form (thinking, redacted_thinking, documents, server
tools, anything unknown) gives ``None`` and is carried through untouched.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from hermes_core.errors import InvalidMessages

__all__ = [
    "block_of_part",
    "part_of_block",
    "result_content",
    "tool_call_of",
    "tool_use_of",
]

_DATA_URL: Final = re.compile(r"data:([^;,]+);base64,(.*)", re.DOTALL)


def part_of_block(block: Any) -> dict[str, Any] | None:
    """The OpenAI content part of a text or image block; ``None`` for anything else."""
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return {"type": "text", "text": block["text"]}
    if kind == "image":
        source = block.get("source")
        if isinstance(source, dict):
            if source.get("type") == "base64" and isinstance(source.get("data"), str):
                url = f"data:{source.get('media_type', 'image/png')};base64,{source['data']}"
                return {"type": "image_url", "image_url": {"url": url}}
            if source.get("type") == "url" and isinstance(source.get("url"), str):
                return {"type": "image_url", "image_url": {"url": source["url"]}}
    return None


def block_of_part(part: Any, where: str) -> dict[str, Any]:
    """The Anthropic block of an OpenAI text or image part (a string is a text block)."""
    if isinstance(part, str):
        return {"type": "text", "text": part}
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text" and isinstance(part.get("text"), str):
        return {"type": "text", "text": part["text"]}
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else None
        if isinstance(url, str):
            match = _DATA_URL.fullmatch(url)
            if match:
                source = {"type": "base64", "media_type": match.group(1), "data": match.group(2)}
            else:
                source = {"type": "url", "url": url}
            return {"type": "image", "source": source}
    shown = kind if isinstance(kind, str) else type(part).__name__
    problem = (
        f"{where} is a {shown!r} part, which Anthropic's Messages API has no block for; "
        "remove it or convert it to text"
    )
    raise InvalidMessages(problem, [problem])


def tool_call_of(block: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI tool call of a tool_use block (arguments as compact-free JSON text)."""
    arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
    return {
        "id": block["id"],
        "type": "function",
        "function": {"name": block["name"], "arguments": arguments},
    }


def tool_use_of(call: dict[str, Any], where: str) -> dict[str, Any]:
    """The tool_use block of an OpenAI tool call; its arguments must be a JSON object."""
    function = call.get("function") if isinstance(call, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    raw = function.get("arguments") if isinstance(function, dict) else None
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict) or not isinstance(call.get("id"), str):
        problem = f"{where}: a tool call needs an id and arguments that are a JSON object"
        raise InvalidMessages(problem, [problem])
    return {"type": "tool_use", "id": call["id"], "name": name, "input": arguments}


def result_content(content: Any) -> Any:
    """A tool_result's content on the OpenAI side: a string as is, blocks as parts (blocks
    with no OpenAI form are left out: the template merge keeps them)."""
    if isinstance(content, list):
        parts = [part_of_block(block) for block in content]
        return [part for part in parts if part is not None]
    return content if isinstance(content, str) else ""
