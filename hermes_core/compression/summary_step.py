"""Phase 4 with its failure ladder: the LLM summary if it can be had, else the fallback.

Layer 1 (another model) happens inside the summariser; here: a failure that says abort
(auth, network, or ``abort_on_summary_failure``) stops the compression with the input kept;
any other failure starts a cooldown (layer 2) and the deterministic fallback summary is used
(layer 3). A summary that carries instructions is a failure, not context.

Whatever the summary's source (the LLM, a plugin's ``summarize_middle``, the fallback, the
anchor ledger, the previous summary merged in), it is redacted before it can enter the
transcript: a model repeats the secrets it read, and a plugin may not redact at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_core.compression.anchors import DEFAULT_LEDGER_CHARS, extract_anchors, guard_summary
from hermes_core.compression.assemble import is_summary_message, unwrap_summary
from hermes_core.compression.directives import Stated, find_directives, strip_directive_lines
from hermes_core.compression.fallback import fallback_summary
from hermes_core.compression.guidance import guided_fallback
from hermes_core.compression.hooks import CompressionHooks
from hermes_core.compression.policy import CompressionGuard
from hermes_core.compression.reloads import carried, pointers_for, with_pointers
from hermes_core.compression.result import SummarizerUsed
from hermes_core.compression.summarizer import check_summary
from hermes_core.redact import redact
from hermes_core.transcript.messages import is_real_user_message, message_text
from hermes_core.types import SummaryContext


@dataclass
class SummaryStep:
    """The summary body to insert, or why the compression must abort; and any failure."""

    body: str | None
    summarizer: SummarizerUsed | None
    abort_reason: str | None = None
    failure: tuple[str, str] | None = None  # (kind, detail) of a summariser failure
    skipped: str | None = None  # why the LLM was not asked, when the guard said so

    def fallback_reason(self) -> str | None:
        """Why the fallback summary stands in for the LLM's: a failure in this call, or the
        guard resting the LLM after earlier ones (docs/compression.md)."""
        if self.abort_reason is not None or self.summarizer != "fallback":
            return None
        if self.skipped is not None:
            return f"fallback summary: {self.skipped}"
        if self.failure is None:
            return None
        kind, detail = self.failure
        return f"the LLM summary failed ({kind}), the fallback summary was used: {detail}"


def summarize_step(
    *,
    hooks: CompressionHooks,
    guard: CompressionGuard,
    middle: Sequence[Mapping[str, Any]],
    middle_original: Sequence[Mapping[str, Any]],
    previous: str | None,
    budget_tokens: int,
    context: SummaryContext,
    count_text: Callable[[str], int],
    abort_on_failure: bool,
    max_ledger_chars: int = DEFAULT_LEDGER_CHARS,
    unreachable_falls_back: bool = False,
    use_llm: bool | None = None,
    optional: bool = False,
) -> SummaryStep:
    """Run the summariser (when allowed) and apply the failure ladder.

    ``unreachable_falls_back`` turns the network-unreachable abort into the fallback summary
    (the command line's ``--summarizer auto``: "the LLM when reachable, else the fallback").
    ``use_llm`` is the caller's earlier decision (None: ask the guard now); when False,
    ``middle`` is not read. ``optional``: pruning alone would do (the caller keeps it if this
    aborts), so a failure rests the LLM instead of blocking compaction."""
    text: str | None = None
    failure: tuple[str, str] | None = None
    # the user's words: in the turns being summarised, and (already checked once) in the
    # previous summary, so a rule recorded there survives the next compaction too
    stated = Stated(
        [message_text(m) for m in middle_original if is_real_user_message(m)] + [previous or ""]
    )
    if use_llm is None:
        use_llm = hooks.summarize is not None and guard.use_llm()
    skipped = guard.llm_off_reason() if hooks.summarize is not None and not use_llm else None
    if use_llm and hooks.summarize is not None:
        try:
            text = hooks.summarize(middle, previous, budget_tokens, context)
            if text is not None:
                text = check_summary(text, None)  # any summariser's answer, not only ours
                # markers first: dropping labels would cut our own header down to its tail
                findings = find_directives(text, stated=stated) + hooks.scan(text)
                text = drop_summary_labels(text)
                if findings:
                    failure = ("rejected", f"summary rejected: {findings[0].pattern_id}")
                    text = None
        except Exception as exc:  # noqa: BLE001 - every summariser failure has a layer
            text = None
            kind = getattr(exc, "kind", "other")
            # the detail reaches events, the result's reason and logs: an error may quote input
            failure = (kind if isinstance(kind, str) else "other", redact(str(exc)))
        if failure is not None:
            from hermes_core.llm import aborts, cooldown_kind

            kind, detail = failure
            unreachable = kind == "network" and unreachable_falls_back
            # every failure starts a cooldown (docs/compression.md), an abort too: a bad key
            # must not cost an LLM call on every later check
            # an optional summary (pruning alone would do) rests the LLM instead of blocking
            guard.record_summary_failure(cooldown_kind(kind), blocking=not optional)
            if (aborts(kind) and not unreachable) or abort_on_failure:
                reason = f"summary failed ({kind}), input kept: {detail}"
                return SummaryStep(None, None, abort_reason=reason, failure=failure)
        elif text is not None:
            guard.record_summary_success()
    used: SummarizerUsed = "llm" if text is not None else "fallback"
    if text is not None:
        draft = _with_ledger(redact(text), middle_original, max_ledger_chars)
    else:
        draft = guided_fallback(
            fallback_summary(
                middle_original, previous_summary=previous, ledger_chars=max_ledger_chars
            ),
            middle_original,
            context.extra,
        )
    # Redacted before the budget is applied (a label may be longer than the secret) and again
    # after the previous summary's ledger is merged in: it may come from an older version.
    body = guard_summary(
        redact(draft),
        redact(previous) if previous else previous,
        budget_tokens,
        count_text,
        max_ledger_chars=max_ledger_chars,
    )
    # quoted tool output is data, not orders; the user's own rules stay
    body, _removed = strip_directive_lines(redact(body), stated)
    body = with_pointers(body, carried(previous) + pointers_for(middle_original))
    return SummaryStep(body, used, failure=failure, skipped=skipped)


#: A label the model put on its own answer ("[CONTEXT SUMMARY]:", "Context summary —"):
#: ours wraps the body already, and a second one inside it reads as nesting.
_MODEL_LABEL = re.compile(
    r"(?im)^[ \t]{0,10}(?:\*\*|#{1,6}[ \t]{1,3})?\[?[ \t]{0,3}context[ \t]{1,3}summary"
    r"[ \t]{0,3}\]?(?:\*\*)?[ \t]{0,3}(?:[:：—–-](?:\*\*)?[ \t]{0,3}|$)"
)


def drop_summary_labels(text: str) -> str:
    """``text`` without the model's own context-summary labels at line starts."""
    return _MODEL_LABEL.sub("", text).strip()


def previous_summary(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The body of the newest summary we inserted earlier, if any."""
    for message in reversed(messages):
        if is_summary_message(message):
            return unwrap_summary(message_text(message))
    return None


def _with_ledger(text: str, middle: Sequence[Mapping[str, Any]], max_chars: int) -> str:
    """The LLM's summary and the middle's ledger, extracted and rendered with the bound the
    accepted summary will have (a smaller one here would lose what the larger one keeps)."""
    ledger = extract_anchors(middle, max_chars=max_chars)
    return text if ledger.is_empty() else f"{text.strip()}\n\n{ledger.render(max_chars)}"
