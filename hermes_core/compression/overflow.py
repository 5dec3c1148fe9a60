"""Reading a provider's "context too long" error: is it one, and what window does it state?

When a request overflows, the provider's error is the only reliable statement of the real
window (a host's configured ``context_length`` may be a guess, a proxy may cap it lower, a
local server may run with a smaller ``n_ctx``). The phrasings below are taken from real
errors of OpenAI, Azure, Anthropic (also through Bedrock/Vertex), vLLM, llama.cpp, TGI,
Mistral, Gemini, DeepSeek, Groq and OpenRouter; the patterns name the *limit*, never the
size of the rejected prompt, which those same messages also contain.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MAX_PLAUSIBLE_WINDOW", "MIN_PLAUSIBLE_WINDOW", "is_context_overflow", "stated_window"]

#: A stated window outside this range is a misread, not a model's window.
MIN_PLAUSIBLE_WINDOW: Final = 256
MAX_PLAUSIBLE_WINDOW: Final = 100_000_000

# 16385, 128,000, 128 000 (also thin/no-break spaces), 128_000, 128'000, 1.048.576
_NUM = r"(\d{1,3}(?:(?:[,_'\u00a0\u202f ]|\.(?=\d{3}\b))\d{3})+|\d+)"
_T = r"(?:\s*tokens?)?"

# Each pattern captures the limit in its one group; the most specific come first.
_WINDOW_PATTERNS: Final = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        # Anthropic: "prompt is too long: 210000 tokens > 200000 maximum"
        rf"{_NUM}{_T}\s*>\s*{_NUM}{_T}\s*maximum",
        # Anthropic: "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000"
        rf"context limit:\s*{_NUM}\s*\+\s*{_NUM}\s*>\s*{_NUM}",
        # OpenAI, Azure, vLLM, DeepSeek, Groq, OpenRouter, LiteLLM:
        # "This model's maximum context length is 16385 tokens."
        rf"max(?:imum)?\s+context\s+length\s+(?:is|of)\s+{_NUM}",
        # Mistral: "too large for model with 32768 maximum context length"
        rf"model\s+with\s+{_NUM}{_T}\s+max(?:imum)?\s+context\s+length",
        # vLLM: "is longer than the maximum model length of 4096"
        rf"max(?:imum)?\s+model\s+length\s+(?:is|of)\s+{_NUM}",
        # llama.cpp: "request (5000 tokens) exceeds the available context size (4096 tokens)"
        rf"context\s+size\s*\(\s*{_NUM}{_T}\s*\)",
        # llama.cpp JSON error body: {"n_ctx": 4096, ...}
        rf"\bn_ctx\"?\s*[:=]\s*{_NUM}",
        # Gemini: "exceeds the maximum number of tokens allowed (1048576)"
        rf"maximum\s+number\s+of\s+tokens\s+allowed\s*(?:is\s*)?\(?\s*{_NUM}",
        # TGI: "`inputs` tokens + `max_new_tokens` must be <= 32769"
        rf"max_new_tokens`?\s+must\s+be\s+<=\s*{_NUM}",
        # TGI: "`inputs` must have less than 4096 tokens"
        rf"must\s+have\s+less\s+than\s+{_NUM}{_T}",
        # generic: "context window of 128,000 tokens", "context length: 8192",
        # "exceeds the context window (131072 tokens)"
        rf"context\s+(?:window|length|limit|size)\s*(?:is|of|:|=)?\s*\(?\s*{_NUM}{_T}",
    )
)

_OVERFLOW: Final = re.compile(
    r"context[\s_-]*(?:length|window|size|limit)[\s_-]*(?:exceeded|is\s+exceeded)"
    r"|context_length_exceeded|exceed_context_size"
    r"|max(?:imum)?\s+context\s+length"
    r"|prompt\s+is\s+too\s+long|input\s+is\s+too\s+long|too\s+many\s+(?:input\s+)?tokens"
    r"|exceeds?\s+(?:the\s+)?(?:available\s+|model'?s?\s+)?context"
    r"|(?:longer|larger)\s+than\s+the\s+max(?:imum)?\s+(?:model|context)"
    r"|maximum\s+number\s+of\s+tokens\s+allowed"
    r"|max_new_tokens`?\s+must\s+be\s+<=|must\s+have\s+less\s+than\s+\d+\s+tokens"
    r"|request\s+entity\s+too\s+large|payload\s+too\s+large",
    re.IGNORECASE,
)


def _number(text: str) -> int:
    return int(re.sub(r"\D", "", text))


def stated_window(message: str) -> int | None:
    """The context window a provider's overflow error states, or ``None`` when it names none.

    Numbers may carry thousands separators. A figure outside a plausible window range is
    ignored: a misread must never shrink a window to nothing."""
    for pattern in _WINDOW_PATTERNS:
        for match in pattern.finditer(message):
            value = _number(match.groups()[-1])  # the limit is always the last group
            if MIN_PLAUSIBLE_WINDOW <= value <= MAX_PLAUSIBLE_WINDOW:
                return value
    return None


def is_context_overflow(message: str, status: int | None = None) -> bool:
    """Whether an error says the request did not fit the window (HTTP 413, or the wording)."""
    return status == 413 or _OVERFLOW.search(message) is not None
