"""One Responses content part (or function call) and its OpenAI chat form, each way.

A part with no chat form (``input_file``, an image given only by ``file_id``, anything
unknown) gives ``None`` and is carried through untouched by the template merge.
"""

from __future__ import annotations

from typing import Any

from hermes_core.errors import InvalidMessages

__all__ = ["chat_part", "item_call", "response_part", "tool_call_of_item"]


def chat_part(part: Any) -> dict[str, Any] | None:
    """The chat content part of a Responses part (a string is a text part)."""
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if kind in ("input_text", "output_text") and isinstance(part.get("text"), str):
        return {"type": "text", "text": part["text"]}
    if kind == "refusal" and isinstance(part.get("refusal"), str):
        return {"type": "refusal", "refusal": part["refusal"]}
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        image: dict[str, Any] = {"url": part["image_url"]}
        detail = part.get("detail")
        if isinstance(detail, str) and detail != "auto":
            image["detail"] = detail
        return {"type": "image_url", "image_url": image}
    return None


def response_part(part: Any, role: str, where: str) -> dict[str, Any]:
    """The Responses part of a chat content part, for a message of ``role``."""
    if isinstance(part, str):
        part = {"type": "text", "text": part}
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text" and isinstance(part.get("text"), str):
        if role == "assistant":
            return {"type": "output_text", "text": part["text"], "annotations": []}
        return {"type": "input_text", "text": part["text"]}
    if kind == "refusal" and isinstance(part.get("refusal"), str):
        return {"type": "refusal", "refusal": part["refusal"]}
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else None
        if isinstance(url, str):
            detail = image.get("detail") if isinstance(image, dict) else None
            return {"type": "input_image", "image_url": url, "detail": detail or "auto"}
    shown = kind if isinstance(kind, str) else type(part).__name__
    problem = (
        f"{where} is a {shown!r} part, which a Responses input has no part for; remove it "
        "or convert it to text"
    )
    raise InvalidMessages(problem, [problem])


def tool_call_of_item(item: dict[str, Any]) -> dict[str, Any]:
    """The chat tool call of a ``function_call`` item."""
    return {
        "id": item["call_id"],
        "type": "function",
        "function": {"name": item["name"], "arguments": item["arguments"]},
    }


def item_call(call: Any, where: str) -> dict[str, Any]:
    """The ``function_call`` item of a chat tool call."""
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not isinstance(call.get("id"), str):
        problem = f"{where}: a tool call needs an id and a function"
        raise InvalidMessages(problem, [problem])
    arguments = function.get("arguments")
    return {
        "type": "function_call",
        "call_id": call["id"],
        "name": function.get("name"),
        "arguments": arguments if isinstance(arguments, str) else "{}",
    }
