"""The one per-message cost function and its content-keyed cache.

Shared by the trigger, the tail walk, the pruning gates and the reports: two estimators that
disagree are how compaction loops happen. Costs are cached by message content (not ``id()``),
so counting a transcript again costs a hash per message.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, Final, NamedTuple

from hermes_core.errors import InvalidArgument, InvalidMessages, NotAMessage
from hermes_core.tokens.counters import TokenCounter, get_counter
from hermes_core.transcript.identity import content_key
from hermes_core.transcript.identity import wire_items as _wire_items
from hermes_core.transcript.objects import as_message_list
from hermes_core.transcript.parts import counted_type

__all__ = [
    "DEFAULT_IMAGE_TOKENS",
    "MESSAGE_OVERHEAD",
    "REPLY_PRIMING",
    "TOOL_CALL_OVERHEAD",
    "MessageCostCache",
    "check_message_list",
    "count_tokens",
    "default_cost_cache",
    "message_tokens",
]

#: Per-message framing. OpenAI's published accounting is 3 tokens (<|start|>, the separator after
#: the role, <|end|>) plus the role; other providers' chat templates (Anthropic, Llama, Qwen) spend
#: one or two more, and for a compression trigger over-counting a token is the safe side.
MESSAGE_OVERHEAD: Final = 4
#: Framing of each tool call inside an assistant message (call wrapper, type, separators).
TOOL_CALL_OVERHEAD: Final = 3
#: Every request ends with the primed assistant header the reply is written into.
REPLY_PRIMING: Final = 3
#: Default cost of one image part; providers charge roughly 1-2K tokens for a typical screenshot.
DEFAULT_IMAGE_TOKENS: Final = 1500

_TEXT_PARTS: Final = frozenset({"text", "input_text", "output_text"})
_IMAGE_PARTS: Final = frozenset({"image_url", "input_image", "image"})
# Fields whose tokens the cost function counts explicitly; any other non-underscore field is
# counted as text/JSON because a host may still send it.
_KNOWN_FIELDS: Final = frozenset(
    {"role", "content", "name", "tool_calls", "tool_call_id", "function_call"}
)


# --- the per-message cost ------------------------------------------------------------------------


class _ToolCallCost(NamedTuple):
    call_id: str
    name: str
    tokens: int


class _MessageCost(NamedTuple):
    """What the cache stores: the total and the parts the breakdown attributes elsewhere."""

    total: int
    images: int
    calls: tuple[_ToolCallCost, ...]


def _as_text(value: Any) -> str:
    """Text a value would occupy on the wire: strings as-is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):  # non-str keys mixed with str keys, circular references
        return repr(value)


def _content_cost(content: Any, counter: TokenCounter, image_tokens: int) -> tuple[int, int]:
    """(tokens, image count) of a message's content: a string, None, or a list of parts."""
    if content is None:
        return 0, 0
    if isinstance(content, str):
        return counter.count_text(content), 0
    if not isinstance(content, list):
        return counter.count_text(_as_text(content)), 0
    tokens = images = 0
    for k, part in enumerate(content):
        if isinstance(part, str):
            tokens += counter.count_text(part)
            continue
        if not isinstance(part, Mapping):
            tokens += counter.count_text(_as_text(part))
            continue
        kind = counted_type(part, f"content[{k}]")
        if kind in _TEXT_PARTS and isinstance(part.get("text"), str):
            tokens += counter.count_text(part["text"])
        elif kind in _IMAGE_PARTS:
            tokens += image_tokens
            images += 1
        else:
            tokens += counter.count_text(_as_text(dict(_wire_items(part))))
    return tokens, images


def _call_cost(call: Any, counter: TokenCounter) -> _ToolCallCost:
    """Cost of one tool call: the function name and the whole arguments string."""
    if not isinstance(call, Mapping):
        return _ToolCallCost("", "", TOOL_CALL_OVERHEAD + counter.count_text(_as_text(call)))
    fn = call.get("function")
    if not isinstance(fn, Mapping):  # legacy or provider-specific shapes
        fn = call
    name = fn.get("name")
    name = name if isinstance(name, str) else _as_text(name)
    call_id = call.get("id")
    tokens = (
        TOOL_CALL_OVERHEAD
        + counter.count_text(name)
        + counter.count_text(_as_text(fn.get("arguments")))
    )
    return _ToolCallCost(call_id if isinstance(call_id, str) else "", name, tokens)


def _is_container(value: Any) -> bool:
    return isinstance(value, (list, tuple, dict))


def _measure(message: Mapping[Any, Any], counter: TokenCounter, image_tokens: int) -> _MessageCost:
    """The uncached cost function; every count of a message goes through here once."""
    total = MESSAGE_OVERHEAD
    images = 0
    calls: list[_ToolCallCost] = []
    for key, value in _wire_items(message):
        if value is None:
            continue
        if key == "content":
            tokens, images = _content_cost(value, counter, image_tokens)
            total += tokens
        elif key == "tool_calls":
            raw_calls = value if isinstance(value, list) else [value]
            calls.extend(_call_cost(call, counter) for call in raw_calls)
        elif key == "function_call":  # the pre-tools single-call form
            calls.append(_call_cost(value, counter))
        elif key in _KNOWN_FIELDS or isinstance(value, str) or (_is_container(value) and value):
            # numbers, booleans and empty containers in unknown fields are host metadata
            total += counter.count_text(_as_text(value))
    total += sum(call.tokens for call in calls)
    return _MessageCost(total, images, tuple(calls))


class MessageCostCache:
    """Bounded LRU of message costs keyed by (counter name, image tokens, content digest).

    Keying by content rather than ``id()`` means equal messages share an entry, a mutated message
    gets a fresh one, and a recycled ``id()`` can never return a stale cost. A counter's ``name``
    must identify its counting function.
    """

    def __init__(self, maxsize: int = 16384) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self._data: OrderedDict[tuple[str, int, Any], _MessageCost] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._data)

    def stats(self) -> dict[str, int]:
        """Hit/miss counters, for reports and for tests that prove O(new) work."""
        return {"hits": self.hits, "misses": self.misses, "size": len(self._data)}

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0

    def measure(
        self,
        message: Mapping[Any, Any],
        counter: TokenCounter,
        image_tokens: int = DEFAULT_IMAGE_TOKENS,
    ) -> _MessageCost:
        """The (cached) cost record of ``message``, keyed by its content."""
        key = (counter.name, image_tokens, content_key(message))
        return self.measure_keyed(key, message, counter, image_tokens)

    def peek_many(self, keys: Sequence[tuple[str, int, Any]]) -> list[_MessageCost | None]:
        """The cached records of many ``(counter name, image tokens, content key)`` keys under
        one lock, ``None`` where absent; nothing is counted (a cold caller estimates instead)."""
        found: list[_MessageCost | None] = []
        with self._lock:
            data = self._data
            for key in keys:
                cost = data.get(key)
                if cost is not None:
                    data.move_to_end(key)
                    self.hits += 1
                found.append(cost)
        return found

    def measure_keyed(
        self,
        key: tuple[str, int, Any],
        message: Mapping[Any, Any],
        counter: TokenCounter,
        image_tokens: int,
    ) -> _MessageCost:
        """:meth:`measure` for a caller that already built the key (it hashes nothing twice)."""
        with self._lock:
            cost = self._data.get(key)
            if cost is not None:
                self._data.move_to_end(key)
                self.hits += 1
                return cost
            self.misses += 1
        cost = _measure(message, counter, image_tokens)  # tokenise outside the lock
        with self._lock:
            self._data[key] = cost
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)
        return cost


_DEFAULT_CACHE = MessageCostCache()


def default_cost_cache() -> MessageCostCache:
    """The process-wide cost cache every caller shares unless it passes its own."""
    return _DEFAULT_CACHE


def message_tokens(
    message: Mapping[str, Any],
    counter: TokenCounter,
    *,
    image_tokens: int = DEFAULT_IMAGE_TOKENS,
    cache: MessageCostCache | None = None,
) -> int:
    """Tokens one message costs in a prompt: content (text, images, other parts as JSON), role,
    ``name``, each tool call's name and arguments, ``tool_call_id`` and the framing overhead.
    Keys starting with ``_`` are in-process metadata and cost nothing."""
    if not isinstance(message, Mapping):
        raise InvalidMessages(f"a message must be a dict, got {type(message).__name__}")
    return (
        (cache if cache is not None else _DEFAULT_CACHE)
        .measure(message, counter, image_tokens)
        .total
    )


# --- whole transcripts ---------------------------------------------------------------------------


def check_message_list(messages: Sequence[Any]) -> None:
    problems = [
        f"message {i}: expected a dict, got {type(m).__name__}"
        for i, m in enumerate(messages)
        if not isinstance(m, Mapping)
    ]
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise NotAMessage(f"cannot count tokens: {problems[0]}{more}", problems)


def count_tokens(
    messages_or_text: str | Sequence[Any],
    *,
    model: str | None = None,
    mode: str = "auto",
    image_tokens: int = DEFAULT_IMAGE_TOKENS,
    counter: TokenCounter | None = None,
) -> int:
    """Tokens in a text, or in a message list as a prompt (messages plus reply priming; SDK
    objects as their dicts). An empty list costs 0. ``counter`` overrides ``model``/``mode``."""
    if isinstance(messages_or_text, str):
        return (counter if counter is not None else get_counter(model, mode)).count_text(
            messages_or_text
        )
    if not isinstance(messages_or_text, (list, tuple)):
        hint = " (pass a list of messages)" if isinstance(messages_or_text, Mapping) else ""
        expected = f"a str or a list of message dicts{hint}"
        raise InvalidArgument.of("count_tokens' first argument", expected, messages_or_text)
    if not messages_or_text:
        return 0
    messages_or_text = as_message_list(messages_or_text)
    check_message_list(messages_or_text)
    active = counter if counter is not None else get_counter(model, mode)
    total = 0
    for index, message in enumerate(messages_or_text):
        try:
            total += _DEFAULT_CACHE.measure(message, active, image_tokens).total
        except InvalidMessages as exc:
            problems = [f"message {index}: {problem}" for problem in exc.problems]
            raise InvalidMessages(f"message {index}: {exc}", problems) from None
    return total + REPLY_PRIMING
