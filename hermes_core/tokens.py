"""Token accounting: one per-message cost function, shared by the trigger, the tail walk, the
pruning gates and the reports (two estimators that disagree are how compaction loops happen).

Costs are cached by message content (not ``id()``), so counting a transcript again costs a hash
per message. ``RunningTokenCount`` anchors the count on real API usage and costs O(new messages)
per check. Text counters live in :mod:`hermes_core.tokenizers`; this module re-exports them.
"""

from __future__ import annotations

import functools
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from hermes_core.errors import InvalidMessages

if TYPE_CHECKING:
    from collections.abc import Callable

from hermes_core.tokenizers import (
    BPE_SHA256,
    TOKENIZER_MODES,
    BpeLoader,
    EstimateCounter,
    TiktokenCounter,
    TokenCounter,
    default_loader,
    encoding_name_for_model,
    estimate_tokens,
    get_counter,
)

__all__ = [
    "BPE_SHA256",
    "DEFAULT_IMAGE_TOKENS",
    "MESSAGE_OVERHEAD",
    "REPLY_PRIMING",
    "TOKENIZER_MODES",
    "TOOL_CALL_OVERHEAD",
    "BpeLoader",
    "EstimateCounter",
    "MessageCostCache",
    "RunningTokenCount",
    "TiktokenCounter",
    "TokenBreakdown",
    "TokenCounter",
    "ToolTokens",
    "count_tokens",
    "default_cost_cache",
    "default_loader",
    "encoding_name_for_model",
    "estimate_tokens",
    "get_counter",
    "message_digest",
    "message_tokens",
    "token_breakdown",
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


def _wire_items(message: Mapping[Any, Any]) -> list[tuple[str, Any]]:
    return [
        (k if isinstance(k, str) else repr(k), v)
        for k, v in message.items()
        if not (isinstance(k, str) and k.startswith("_"))
    ]


@functools.cache
def _blake2b() -> Callable[..., Any]:
    """hashlib pulls in OpenSSL (~3 ms), so it loads on the first digest, not at import."""
    import hashlib

    return hashlib.blake2b


def message_digest(message: Mapping[Any, Any]) -> bytes:
    """A 16-byte digest of the fields sent on the wire (keys starting with ``_`` are ignored)."""
    items = sorted(_wire_items(message), key=lambda kv: kv[0])
    try:
        canonical = json.dumps(
            items, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str
        )
    except (TypeError, ValueError):
        canonical = repr(items)
    digest: bytes = _blake2b()(canonical.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    return digest


def _content_cost(content: Any, counter: TokenCounter, image_tokens: int) -> tuple[int, int]:
    """(tokens, image count) of a message's content: a string, None, or a list of parts."""
    if content is None:
        return 0, 0
    if isinstance(content, str):
        return counter.count_text(content), 0
    if not isinstance(content, list):
        return counter.count_text(_as_text(content)), 0
    tokens = images = 0
    for part in content:
        if isinstance(part, str):
            tokens += counter.count_text(part)
            continue
        if not isinstance(part, Mapping):
            tokens += counter.count_text(_as_text(part))
            continue
        kind = part.get("type")
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
        self._data: OrderedDict[tuple[str, int, bytes], _MessageCost] = OrderedDict()
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
        *,
        digest: bytes | None = None,
    ) -> _MessageCost:
        """The (cached) cost record of ``message``; ``digest`` skips re-hashing when known."""
        key = (counter.name, image_tokens, digest or message_digest(message))
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


def _check_messages(messages: Sequence[Any]) -> None:
    problems = [
        f"message {i}: expected a dict, got {type(m).__name__}"
        for i, m in enumerate(messages)
        if not isinstance(m, Mapping)
    ]
    if problems:
        raise InvalidMessages(
            f"cannot count tokens: {len(problems)} malformed message(s)", problems
        )


def count_tokens(
    messages_or_text: str | Sequence[Mapping[str, Any]],
    *,
    model: str | None = None,
    mode: str = "auto",
    image_tokens: int = DEFAULT_IMAGE_TOKENS,
    counter: TokenCounter | None = None,
) -> int:
    """Tokens in a text, or in a message list as a prompt (messages plus reply priming).

    An empty list costs 0. ``counter`` overrides ``model``/``mode``.
    """
    if isinstance(messages_or_text, str):
        return (counter if counter is not None else get_counter(model, mode)).count_text(
            messages_or_text
        )
    if not isinstance(messages_or_text, (list, tuple)):
        hint = " (pass a list of messages)" if isinstance(messages_or_text, Mapping) else ""
        raise TypeError(
            "count_tokens expects a str or a list of message dicts, got "
            f"{type(messages_or_text).__name__}{hint}"
        )
    if not messages_or_text:
        return 0
    _check_messages(messages_or_text)
    active = counter if counter is not None else get_counter(model, mode)
    total = sum(_DEFAULT_CACHE.measure(m, active, image_tokens).total for m in messages_or_text)
    return total + REPLY_PRIMING


# --- usage-anchored running count ----------------------------------------------------------------


class RunningTokenCount:
    """The compression trigger's prompt-token count, anchored on real usage.

    Algorithm:

    * ``observe(messages)`` keeps, for the list it saw last, its length, the digests of its first
      and last messages and the summed estimated cost. If the new list has the same first message
      and still holds the previously-last message at the same index (compared by digest, so
      in-place edits of either are caught), only the appended messages are costed: two hashes
      plus O(new messages). Otherwise (compaction, edits, a different transcript) everything is
      recounted through the cost cache (a hash per unchanged message) and any anchor is dropped.
    * ``anchor(prompt_tokens, messages)``, called with the real ``usage.prompt_tokens`` of a
      response and the messages that were sent, makes that figure the count for those messages.
      The next ``observe`` returns ``N + ratio * cost(messages appended since)``.
    * Each anchor yields a sample ``N / estimated`` for the same messages (estimated = summed
      costs + reply priming). The first sample sets ``correction_ratio``; later ones are blended
      in with weight ``smoothing`` (an exponential moving average), always clamped to
      ``[min_ratio, max_ratio]``. The ratio scales the estimated part only, never an anchored
      figure. One instance serves one model; the ratio it learns belongs to that model.

    A middle message edited in place while the ends stay unchanged is not noticed; call
    ``reset()`` after such edits.
    """

    def __init__(
        self,
        counter: TokenCounter,
        *,
        image_tokens: int = DEFAULT_IMAGE_TOKENS,
        cache: MessageCostCache | None = None,
        initial_ratio: float = 1.0,
        smoothing: float = 0.3,
        min_ratio: float = 0.5,
        max_ratio: float = 2.0,
    ) -> None:
        if not 0.0 < smoothing <= 1.0:
            raise ValueError("smoothing must be in (0, 1]")
        if not 0.0 < min_ratio <= max_ratio:
            raise ValueError("need 0 < min_ratio <= max_ratio")
        self.counter = counter
        self.image_tokens = image_tokens
        self.cache = cache if cache is not None else _DEFAULT_CACHE
        self.smoothing = smoothing
        self.min_ratio = min_ratio
        self.max_ratio = max_ratio
        self._ratio = self._clamp(initial_ratio)
        self.samples = 0
        self.last_total = 0
        self.reset()

    def _clamp(self, ratio: float) -> float:
        return min(self.max_ratio, max(self.min_ratio, ratio))

    @property
    def correction_ratio(self) -> float:
        """Learned real/estimated ratio, applied to the not-yet-anchored part of the count."""
        return self._ratio

    @property
    def anchored_tokens(self) -> int | None:
        """The real prompt-token figure the count currently rests on, if any."""
        return self._anchor_tokens

    def reset(self) -> None:
        """Forget the transcript and the anchor (the learned ratio is kept)."""
        self._n = 0
        self._first_digest = b""
        self._last_digest = b""
        self._estimated = 0  # summed message costs of the first _n messages
        self._anchor_tokens: int | None = None
        self._since_anchor = 0  # summed costs of messages appended after the anchor

    @staticmethod
    def _same(message: Any, digest: bytes) -> bool:
        return isinstance(message, Mapping) and message_digest(message) == digest

    def _cost(self, message: Mapping[Any, Any]) -> tuple[int, bytes]:
        digest = message_digest(message)
        cost = self.cache.measure(message, self.counter, self.image_tokens, digest=digest)
        return cost.total, digest

    def _advance(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """Bring the state up to ``messages``, costing only what was appended when possible."""
        if not isinstance(messages, (list, tuple)):
            raise TypeError(f"expected a list of message dicts, got {type(messages).__name__}")
        n = len(messages)
        grew = (
            0 < self._n <= n
            and self._same(messages[0], self._first_digest)
            and self._same(messages[self._n - 1], self._last_digest)
        )
        start = self._n if grew else 0
        if not grew:
            self.reset()
        fresh = messages[start:]
        _check_messages(fresh)
        added = 0
        digest = self._last_digest
        for i, message in enumerate(fresh):
            cost, digest = self._cost(message)
            added += cost
            if start == 0 and i == 0:
                self._first_digest = digest
        if n == 0:
            return
        self._last_digest = digest
        self._n = n
        self._estimated += added
        self._since_anchor += added

    def _estimated_prompt(self) -> int:
        return self._estimated + REPLY_PRIMING if self._n else 0

    def observe(self, messages: Sequence[Mapping[str, Any]]) -> int:
        """Current best count of the prompt ``messages`` would make."""
        self._advance(messages)
        if self._anchor_tokens is not None:
            total = self._anchor_tokens + self._ratio * self._since_anchor
        else:
            total = self._ratio * self._estimated_prompt()
        self.last_total = int(total + 0.5)
        return self.last_total

    def anchor(self, prompt_tokens: int, messages: Sequence[Mapping[str, Any]]) -> None:
        """Adopt the API's real prompt-token figure for ``messages`` and learn from it."""
        if isinstance(prompt_tokens, bool) or not isinstance(prompt_tokens, int):
            raise TypeError(f"prompt_tokens must be an int, got {type(prompt_tokens).__name__}")
        self._advance(messages)
        if prompt_tokens <= 0 or not self._n:
            return  # providers that report no usage send 0; nothing to learn
        estimated = self._estimated_prompt()
        sample = prompt_tokens / estimated
        if self.samples == 0:
            self._ratio = self._clamp(sample)
        else:
            self._ratio = self._clamp(
                (1.0 - self.smoothing) * self._ratio + self.smoothing * sample
            )
        self.samples += 1
        self._anchor_tokens = prompt_tokens
        self._since_anchor = 0
        self.last_total = prompt_tokens


# --- breakdown for the CLI -----------------------------------------------------------------------


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
    _check_messages(messages)
    source = cache if cache is not None else _DEFAULT_CACHE
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
