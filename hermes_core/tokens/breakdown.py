"""Where a transcript's tokens go, by role, tool and images, for ``hermes-context tokens``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_core.tokens.costs import (
    DEFAULT_IMAGE_TOKENS,
    REPLY_PRIMING,
    MessageCostCache,
    check_message_list,
    default_cost_cache,
)
from hermes_core.tokens.counters import TokenCounter

__all__ = ["TokenBreakdown", "ToolTokens", "token_breakdown"]


@dataclass
class ToolTokens:
    """Tokens attributed to one tool: its calls' names/arguments and the results answering them."""

    calls: int = 0
    call_tokens: int = 0
    results: int = 0
    result_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.call_tokens + self.result_tokens


@dataclass
class TokenBreakdown:
    """Where a transcript's tokens go, for ``hermes-context tokens``."""

    counter: str
    total: int = 0
    messages: int = 0
    overhead: int = 0  # reply priming; per-message framing is inside each role's figure
    role_tokens: dict[str, int] = field(default_factory=dict)
    role_messages: dict[str, int] = field(default_factory=dict)
    tools: dict[str, ToolTokens] = field(default_factory=dict)
    images: int = 0
    image_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for ``tokens --json``."""
        return {
            "counter": self.counter,
            "total": self.total,
            "messages": self.messages,
            "overhead": self.overhead,
            "by_role": {
                role: {"tokens": tokens, "messages": self.role_messages.get(role, 0)}
                for role, tokens in sorted(self.role_tokens.items(), key=lambda kv: -kv[1])
            },
            "by_tool": {
                name: {
                    "tokens": t.tokens,
                    "calls": t.calls,
                    "call_tokens": t.call_tokens,
                    "results": t.results,
                    "result_tokens": t.result_tokens,
                }
                for name, t in sorted(self.tools.items(), key=lambda kv: -kv[1].tokens)
            },
            "images": {"count": self.images, "tokens": self.image_tokens},
        }


def token_breakdown(
    messages: Sequence[Mapping[str, Any]],
    counter: TokenCounter,
    *,
    image_tokens: int = DEFAULT_IMAGE_TOKENS,
    cache: MessageCostCache | None = None,
) -> TokenBreakdown:
    """Totals by role, by tool and for images, in one pass, from the same cached costs as
    ``count_tokens`` (so the figures always add up to it)."""
    if not isinstance(messages, (list, tuple)):
        raise TypeError(f"expected a list of message dicts, got {type(messages).__name__}")
    check_message_list(messages)
    source = cache if cache is not None else default_cost_cache()
    out = TokenBreakdown(counter=counter.name, messages=len(messages))
    call_names: dict[str, str] = {}  # tool_call_id -> tool name, filled as calls appear
    for message in messages:
        cost = source.measure(message, counter, image_tokens)
        role = message.get("role")
        role = role if isinstance(role, str) else "(none)"
        out.role_tokens[role] = out.role_tokens.get(role, 0) + cost.total
        out.role_messages[role] = out.role_messages.get(role, 0) + 1
        out.total += cost.total
        out.images += cost.images
        out.image_tokens += cost.images * image_tokens
        for call in cost.calls:
            name = call.name or "(unnamed)"
            if call.call_id:
                call_names[call.call_id] = name
            stats = out.tools.setdefault(name, ToolTokens())
            stats.calls += 1
            stats.call_tokens += call.tokens
        if role == "tool" or "tool_call_id" in message:
            call_id = message.get("tool_call_id")
            answered = call_names.get(call_id) if isinstance(call_id, str) else None
            if answered is None:
                fallback = message.get("name")
                answered = fallback if isinstance(fallback, str) and fallback else "(unknown)"
            stats = out.tools.setdefault(answered, ToolTokens())
            stats.results += 1
            stats.result_tokens += cost.total
    if messages:
        out.overhead = REPLY_PRIMING
        out.total += REPLY_PRIMING
    return out
