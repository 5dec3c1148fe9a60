"""Telling a payload's format from its shape, only when the shape is unambiguous.

Why conservative: a wrong guess would rewrite the host's transcript in another format. Each
message or item votes with the formats it could belong to (an OpenAI ``tool`` role, an
Anthropic ``tool_use`` block, a Responses ``type``); plain messages (a role and a string)
fit all three and vote for none. Votes that exclude each other are a clear error naming
two of them; no vote at all is ``None`` (such payloads read the same in every format).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, cast

from hermes_core.errors import InvalidMessages
from hermes_core.formats.model import FORMATS, Format
from hermes_core.transcript.objects import plain_payload
from hermes_core.transcript.parts import part_type

__all__ = ["detect"]

ALL: Final = frozenset(FORMATS)
_OPENAI_PARTS: Final = frozenset({"image_url", "input_audio", "file"})
_ANTHROPIC_BLOCKS: Final = frozenset(
    {
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "image",
        "document",
        "server_tool_use",
        "web_search_tool_result",
        "search_result",
        "container_upload",
    }
)
_RESPONSES_PARTS: Final = frozenset({"input_text", "output_text", "input_image", "input_file"})


def _part_vote(part: Any) -> frozenset[str]:
    kind = part_type(part)  # a list or object as "type" would break the set lookups
    if kind in _OPENAI_PARTS:
        return frozenset({"openai"})
    if kind in _ANTHROPIC_BLOCKS:
        return frozenset({"anthropic"})
    if kind in _RESPONSES_PARTS:
        return frozenset({"responses"})
    if kind == "refusal":
        return frozenset({"openai", "responses"})
    if kind == "text":
        return frozenset({"openai", "anthropic"})
    return ALL


def _item_vote(item: Any) -> frozenset[str]:
    if not isinstance(item, dict):
        return ALL
    vote = ALL
    if "type" in item and item.get("type") != "message":
        return frozenset({"responses"})  # function_call, reasoning, ...
    if "tool_calls" in item or "tool_call_id" in item or item.get("role") == "tool":
        vote = vote & {"openai"}
    role = item.get("role")
    if role in ("system", "developer"):
        vote = vote & {"openai", "responses"}
    content = item.get("content")
    if isinstance(content, list):
        for part in content:
            vote = vote & _part_vote(part)
    return vote


def detect(payload: object) -> Format | None:
    """``"openai"``, ``"anthropic"`` or ``"responses"`` when the shape says so; ``None`` when
    it fits several (plain role-and-text messages). ``InvalidMessages`` when its parts
    contradict each other (say which two), or it is not a payload at all."""
    payload = plain_payload(payload, lenient=True)  # SDK objects vote as their dicts
    votes: list[tuple[str, frozenset[str]]] = []
    items: Any = payload
    if isinstance(payload, Mapping):
        if "input" in payload and "messages" in payload:
            raise _mixed('the object has both "input" (Responses) and "messages"; keep one')
        if "input" in payload:
            return "responses"
        if "system" in payload:
            votes.append(('the top-level "system"', frozenset({"anthropic"})))
        items = payload.get("messages")
    if not isinstance(items, list):
        raise _mixed(
            'expected a list of messages, {"messages": [...]} (OpenAI, Anthropic) or '
            '{"input": [...]} (Responses)'
        )
    votes += [(f"item {i}", _item_vote(item)) for i, item in enumerate(items)]
    possible = set(ALL)
    for where, vote in votes:
        narrowed = possible & vote
        if not narrowed:
            earlier = next(
                ((w, v) for w, v in votes if v != ALL and not (v & vote)),
                ("the items before it", frozenset(possible)),
            )
            raise _mixed(
                f"{earlier[0]} reads as {_names(earlier[1])} but {where} as {_names(vote)}; "
                "pass the format explicitly (--format)"
            )
        possible = narrowed
    if len(possible) == 1:
        return cast(Format, next(iter(possible)))
    return None


def _names(formats: frozenset[str]) -> str:
    return " or ".join(sorted(formats))


def _mixed(problem: str) -> InvalidMessages:
    return InvalidMessages(f"cannot tell the message format: {problem}", [problem])
