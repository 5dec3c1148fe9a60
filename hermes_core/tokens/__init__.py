"""Token accounting, in one import: counters, the per-message cost, the running count.

Why a facade: callers (the compressor, the CLI, hosts) need one place to import from, while
each idea lives in its own module: :mod:`~hermes_core.tokens.counters` (text counters, offline
tiktoken, the estimate), :mod:`~hermes_core.tokens.costs` (the one cost function and its cache),
:mod:`~hermes_core.tokens.usage` (the usage-anchored running count),
:mod:`~hermes_core.tokens.reported` (the prompt's size in a usage record of any API),
:mod:`~hermes_core.tokens.breakdown` (reports), and for one compression
:mod:`~hermes_core.tokens.table` (costs counted exactly only where a decision needs it) over
:mod:`~hermes_core.tokens.bounds` (what a cost is known to be before it is counted).
"""

from __future__ import annotations

from hermes_core.tokens.breakdown import TokenBreakdown, ToolTokens, token_breakdown
from hermes_core.tokens.costs import (
    DEFAULT_IMAGE_TOKENS,
    MESSAGE_OVERHEAD,
    REPLY_PRIMING,
    TOOL_CALL_OVERHEAD,
    MessageCostCache,
    count_tokens,
    default_cost_cache,
    message_tokens,
)
from hermes_core.tokens.counters import (
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
from hermes_core.tokens.reported import PromptUsage, prompt_usage
from hermes_core.tokens.usage import RunningTokenCount
from hermes_core.transcript.identity import message_digest

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
    "PromptUsage",
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
    "prompt_usage",
    "token_breakdown",
]
