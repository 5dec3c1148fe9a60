"""When compression runs and how much it keeps: the threshold and the budgets.

Spec 10 §3 (threshold) and §4 Phases 3-4 (tail and summary budgets), as pure arithmetic with
provenance, so the engine's decisions can be explained and tested exactly. The anti-thrash
and cooldown state machine lives in :mod:`hermes_core.compression.guard` and is re-exported
here with its constants.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from hermes_core.compression.guard import (
    DEFAULT_COOLDOWN_S,
    INEFFECTIVE_SAVINGS,
    MAX_FALLBACK_STREAK,
    MAX_STRIKES,
    NO_PROVIDER_COOLDOWN_S,
    NOTHING_TO_COMPRESS_BACKOFF_S,
    PROBE_AFTER_S,
    TIMEOUT_LADDER_S,
    CompressionGuard,
)

if TYPE_CHECKING:
    from hermes_core.config.settings import CompressionSettings, Settings
    from hermes_core.types import Message

__all__ = [
    "DEFAULT_COOLDOWN_S",
    "DEFAULT_THRESHOLD",
    "INEFFECTIVE_SAVINGS",
    "MAX_FALLBACK_STREAK",
    "MAX_STRIKES",
    "NOTHING_TO_COMPRESS_BACKOFF_S",
    "NO_PROVIDER_COOLDOWN_S",
    "PROBE_AFTER_S",
    "TIMEOUT_LADDER_S",
    "CompressionGuard",
    "Threshold",
    "from_settings",
    "prune_suffices",
    "resolve_threshold",
    "summary_budget",
    "tail_budget",
    "tail_message_floor",
    "untouched",
    "untouched_tokens",
]

#: ``compression.threshold``'s default (kept equal to the setting's by a test)
DEFAULT_THRESHOLD: Final = 0.50
SMALL_CONTEXT_TOKENS: Final = 512_000
SMALL_CONTEXT_PERCENT: Final = 0.75
MAX_TRIGGER_PERCENT: Final = 0.85
TARGET_RATIO_MIN: Final = 0.10
TARGET_RATIO_MAX: Final = 0.80
TAIL_WINDOW_SHARE: Final = 0.20
#: The lean tail (compression.tail_max_tokens unset): 2.5% of the window, 10K to 25K tokens.
LEAN_TAIL_SHARE: Final = 0.025
LEAN_TAIL_MIN_TOKENS: Final = 10_000
LEAN_TAIL_MAX_TOKENS: Final = 25_000
SUMMARY_SHARE: Final = 0.05
SUMMARY_MAX_TOKENS: Final = 10_000
SUMMARY_MIN_TOKENS: Final = 1_000
TAIL_MESSAGE_FLOOR_MAX: Final = 8


# --------------------------------------------------------------------------- threshold (§3)


@dataclass(frozen=True)
class Threshold:
    """The trigger in tokens, the window it applies to, and why it has this value."""

    tokens: int
    window: int
    percent: float
    provenance: tuple[str, ...]


def _match_model(model: str | None, model_thresholds: Mapping[str, float]) -> str | None:
    """Longest key contained in the model name; ties go to the alphabetically first key."""
    if not model:
        return None
    name = model.lower()
    hits = [key for key in model_thresholds if key and key.lower() in name]
    return min(hits, key=lambda key: (-len(key), key)) if hits else None


def _check_percent(value: float, what: str) -> None:
    if not (isinstance(value, (int, float)) and 0 < value <= 1):
        raise ValueError(f"{what} must be a fraction in (0, 1], got {value!r}")


def resolve_threshold(
    *,
    context_length: int,
    max_tokens: int = 0,
    model: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    model_thresholds: Mapping[str, float] | None = None,
    threshold_tokens: int | None = None,
) -> Threshold:
    """Spec §3 step by step, recording each step so `config show` and logs can explain it."""
    if context_length <= 0:
        raise ValueError(f"context_length must be positive, got {context_length}")
    if max_tokens >= context_length:
        raise ValueError(
            f"max_tokens ({max_tokens:,}) must be smaller than context_length "
            f"({context_length:,}): nothing would be left for the prompt"
        )
    if threshold_tokens is not None and threshold_tokens <= 0:
        raise ValueError(f"threshold_tokens must be positive when set, got {threshold_tokens}")
    _check_percent(threshold, "threshold")
    table = dict(model_thresholds or {})
    for name, value in table.items():
        _check_percent(value, f"model_thresholds[{name!r}]")

    window = context_length - max_tokens if max_tokens > 0 else context_length
    steps = [f"window {window:,} tokens"]
    if max_tokens > 0:
        steps[0] += f" (context {context_length:,} - max_tokens {max_tokens:,})"

    key = _match_model(model, table)
    if key is None:
        pct = float(threshold)
        origin = "(the default)" if pct == DEFAULT_THRESHOLD else "from config"
        steps.append(f"threshold {pct:.2f} {origin}")
    else:
        pct = float(table[key])
        steps.append(f"threshold {pct:.2f} from model_thresholds[{key!r}] (model {model})")

    if context_length < SMALL_CONTEXT_TOKENS and pct < SMALL_CONTEXT_PERCENT:
        pct = SMALL_CONTEXT_PERCENT
        label = "window" if max_tokens <= 0 else "context"
        steps.append(f"raised to {pct:.2f}: {label} {context_length:,} < {SMALL_CONTEXT_TOKENS:,}")

    tokens = int(window * pct)
    cap = int(window * MAX_TRIGGER_PERCENT)
    if tokens > cap:
        tokens, pct = cap, MAX_TRIGGER_PERCENT
        steps.append(f"capped at 85% of the window: {cap:,}")
    if threshold_tokens is not None and threshold_tokens < tokens:
        tokens = threshold_tokens
        steps.append(f"capped by threshold_tokens: {threshold_tokens:,}")
    steps.append(f"trigger at {tokens:,} tokens")
    return Threshold(tokens=tokens, window=window, percent=pct, provenance=tuple(steps))


def from_settings(
    compression: CompressionSettings,
    *,
    context_length: int,
    max_tokens: int = 0,
    model: str | None = None,
) -> Threshold:
    """:func:`resolve_threshold` fed from the `compression` settings section."""
    return resolve_threshold(
        context_length=context_length,
        max_tokens=max_tokens,
        model=model,
        threshold=compression.threshold,
        model_thresholds=compression.model_thresholds,
        threshold_tokens=compression.threshold_tokens,
    )


def for_settings(settings: Settings) -> Threshold:
    """The threshold a whole config gives: its ``compression`` section for its ``model``
    (what ``config show`` explains and the host warns about); ``ValueError`` when the model's
    numbers leave no room."""
    model = settings.model
    return from_settings(
        settings.compression,
        context_length=model.context_length,
        max_tokens=model.max_tokens,
        model=model.name or None,
    )


# --------------------------------------------------------------------------- budgets (§4)


def tail_budget(
    threshold_tokens: int, context_length: int, target_ratio: float, cap: int | None = None
) -> int:
    """Tokens the verbatim tail may use; capped at 20% of the window so the middle can shrink,
    and at ``cap`` tokens when given (:func:`lean_tail_cap`)."""
    ratio = min(max(target_ratio, TARGET_RATIO_MIN), TARGET_RATIO_MAX)
    budget = min(int(threshold_tokens * ratio), int(TAIL_WINDOW_SHARE * context_length))
    return max(0, budget if cap is None else min(budget, cap))


def lean_tail_cap(context_length: int) -> int:
    """The lean tail's size when ``compression.tail_max_tokens`` is unset: 2.5% of the
    window, 10,000 to 25,000 tokens (what leaves the tail stays recallable: docs/recall.md)."""
    share = int(context_length * LEAN_TAIL_SHARE)
    return max(LEAN_TAIL_MIN_TOKENS, min(LEAN_TAIL_MAX_TOKENS, share))


def configured_tail_budget(
    compression: CompressionSettings, threshold_tokens: int, context_length: int
) -> int:
    """:func:`tail_budget` from the settings: ``target_ratio`` of the threshold, at most
    ``tail_max_tokens`` (unset: :func:`lean_tail_cap`; 0: no cap)."""
    cap = compression.tail_max_tokens
    if cap is None:
        cap = lean_tail_cap(context_length)
    return tail_budget(threshold_tokens, context_length, compression.target_ratio, cap or None)


def summary_budget(context_length: int) -> int:
    """Token budget stated in the summary prompt: 5% of the window, 1,000 to 10,000."""
    if context_length <= 0:
        raise ValueError(f"context_length must be positive, got {context_length}")
    return max(SUMMARY_MIN_TOKENS, min(int(context_length * SUMMARY_SHARE), SUMMARY_MAX_TOKENS))


def tail_message_floor(protect_last_n: int) -> int:
    """Messages the tail always keeps; at most 8 so the token budget stays in charge."""
    return max(0, min(protect_last_n, TAIL_MESSAGE_FLOOR_MAX))


def untouched(message: Message) -> bool:
    """Whether pruning never edits ``message``: no tool result, no tool calls, no multi-part
    content that could hold an image (the engine sums these costs with exact-count bounds)."""
    return (
        message.get("role") != "tool"
        and not message.get("tool_calls")
        and not isinstance(message.get("content"), list)
    )


def untouched_tokens(messages: list[Message], costs: list[int]) -> int:
    """A lower bound of the tokens left after pruning: the messages it never edits."""
    return sum(cost for msg, cost in zip(messages, costs, strict=True) if untouched(msg))


def prune_suffices(before: int, after: int, threshold: int, tail_budget: int) -> bool:
    """Stop after pruning only with real headroom: an effective saving (anti-thrash) and room
    under the threshold for about a tail's worth of new turns, else the next turn or two
    would trigger again."""
    effective = after <= before * (1.0 - INEFFECTIVE_SAVINGS)
    return effective and after <= threshold - tail_budget
