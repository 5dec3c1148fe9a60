"""Spec 10 §8 ``proactive_prune_tokens``: prune huge old tool results alone, below the
threshold, when it reclaims enough to be worth a changed prompt prefix."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_core.compression import policy
from hermes_core.compression.prune import PruneFn, PruneResult, proactive_prune
from hermes_core.compression.references import ArchiveRefs
from hermes_core.compression.result import CompressionResult, outcome
from hermes_core.compression.window import tail_start
from hermes_core.config.settings import CompressionSettings
from hermes_core.tokens.table import CostTable
from hermes_core.transcript.messages import turn_groups


def proactive_step(
    source: Sequence[Mapping[str, Any]],
    *,
    settings: CompressionSettings,
    tokens: int,
    threshold_tokens: int,
    context_length: int,
    prune: PruneFn,
    cost: Callable[[Mapping[str, Any]], int],
    refs: ArchiveRefs | None = None,
) -> PruneResult | None:
    """The pruned transcript, or ``None`` when off, not reached, or not worth it.

    ``tokens`` is the prompt as the trigger sees it (anchored on the provider's last usage).
    The protected tail is the compaction's tail budget, but never more than
    ``target_ratio`` of the prompt as it is now: on a 1M window that budget is far larger
    than a 130K conversation, and would spare every bulky result in it."""
    if not settings.proactive_prune_tokens or tokens < settings.proactive_prune_tokens:
        return None
    ratio = min(max(settings.target_ratio, policy.TARGET_RATIO_MIN), policy.TARGET_RATIO_MAX)
    budget = min(
        policy.configured_tail_budget(settings, threshold_tokens, context_length),
        int(tokens * ratio),
    )
    tail = tail_start(
        source,
        turn_groups(source),
        [cost(m) for m in source],
        head=0,
        budget_tokens=budget,
        min_messages=policy.tail_message_floor(settings.protect_last_n),
        min_user_messages=settings.min_tail_user_messages,
    )
    return proactive_prune(
        source,
        protect_from=tail,
        prune=prune,
        cost=cost,
        min_result_chars=settings.proactive_prune_min_result_chars,
        min_reclaim_tokens=settings.proactive_prune_min_reclaim_tokens,
        refs=refs,
    )


def proactive_outcome(
    source: list[dict[str, Any]],
    costs: CostTable,
    stats: dict[str, Any],
    *,
    trigger: int,
    settings: CompressionSettings,
    threshold_tokens: int,
    context_length: int,
    prune: PruneFn,
    cost: Callable[[Mapping[str, Any]], int],
    refs: ArchiveRefs | None = None,
) -> CompressionResult | None:
    """The ``pruned`` result of :func:`proactive_step`, decided on ``trigger``: the count the
    threshold check saw, anchored on the provider's last usage (the host's real prompt),
    not a fresh local count; ``None`` when off, not reached or not worth it."""
    if not settings.proactive_prune_tokens:
        return None  # off: nothing to count
    tokens_before = costs.exact_prompt(source, cost)  # under the threshold: bounded
    pruned = proactive_step(
        source,
        settings=settings,
        tokens=max(trigger, 0),
        threshold_tokens=threshold_tokens,
        context_length=context_length,
        prune=prune,
        cost=cost,
        refs=refs,
    )
    if pruned is None:
        return None
    stats["passes"] = dict(pruned.passes)
    return outcome(
        pruned.messages,
        "pruned",
        "proactive pruning of large old tool results",
        tokens_before=tokens_before,
        stats=stats,
        archived=[pruned.replaced[i] for i in sorted(pruned.replaced)],
        tokens_after=costs.exact_prompt(pruned.messages, cost),
    )
