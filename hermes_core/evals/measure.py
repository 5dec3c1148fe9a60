"""Compact a transcript once, then again and again as it grows, and count what survives.

Why: one compaction keeps most of what a short middle held; what a long session loses shows
only after several, each summarising the summary before it. So the measure runs ``rounds``
compactions with one :class:`~hermes_core.compression.engine.Compressor` (its state carries
from one to the next, as in a host): before each compaction after the first, new turns are
appended until the transcript is over the threshold again, so the previous tail moves into
the middle. Every compaction is forced (``force=True``, as ``compress --force``), so the
middle is summarised even where pruning alone would have done: what is measured is the
summary path. After each, every fact is looked for in the whole compacted transcript.

The facts are those of the first compaction's middle (head and tail are kept verbatim, so
their facts would say nothing); planted facts are put into the middle of a dry run first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from hermes_core.compression import policy
from hermes_core.compression.anchors import ANCHOR_HEADER, ledger_bound
from hermes_core.compression.engine import Compressor
from hermes_core.compression.result import CompressionResult
from hermes_core.errors import HermesError
from hermes_core.evals.facts import KINDS, Fact, find_facts, plant_facts
from hermes_core.evals.kept import Holdings

__all__ = ["MAX_ROUNDS", "Compaction", "EvalError", "Evaluation", "evaluate", "filler_turns"]

Message = dict[str, Any]
MAX_ROUNDS: Final = 20
_TEXT: Final = (
    "the notes describe how the module handles its input and where the edge cases live "
    "each section lists what was checked what looked fine and what still needs a closer "
    "look before the change can be called done reviewers asked for smaller steps and "
    "clearer names so the text walks through them one at a time"
)
_WORDS: Final = tuple(_TEXT.split(" "))


class EvalError(HermesError):
    """The transcript cannot be measured (nothing to compact, no facts): says why."""


@dataclass
class Compaction:
    """One compaction: what it did, the summary's size against its budgets, what it kept."""

    round: int
    status: str
    reason: str | None
    summarizer: str | None
    appended_messages: int
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    summary_tokens: int
    prose_tokens: int
    prose_budget_tokens: int
    ledger_chars: int
    ledger_budget_chars: int
    ledger_tokens: int
    ledger_budget_tokens: int  # the share of the headroom the ledger was given
    kept: list[bool] = field(default_factory=list)  # per fact, in Evaluation.facts order

    @property
    def within_budget(self) -> bool:
        return (
            self.prose_tokens <= self.prose_budget_tokens
            and self.ledger_chars <= self.ledger_budget_chars
        )


@dataclass
class Evaluation:
    """Facts and compactions of one run; :mod:`hermes_core.evals.report` renders it."""

    planted: bool
    context_length: int
    threshold_tokens: int
    token_counter: str
    messages: int
    tokens: int
    facts: list[Fact]
    excluded: dict[str, int]  # facts found outside the first compaction's middle, per kind
    compactions: list[Compaction]

    def total(self, kind: str) -> int:
        return sum(1 for f in self.facts if f.kind == kind)

    def kept(self, kind: str, compaction: Compaction) -> int:
        return sum(
            1 for f, k in zip(self.facts, compaction.kept, strict=True) if k and f.kind == kind
        )

    def retention(self, kind: str) -> list[float | None]:
        """Share kept of ``kind`` after each compaction (``None``: no fact of that kind)."""
        total = self.total(kind)
        return [self.kept(kind, c) / total if total else None for c in self.compactions]


def filler_turns(
    round_no: int, tokens: int, count: Callable[[list[Message]], int]
) -> list[Message]:
    """New work worth at least ``tokens``: one user ask, then tool calls that read notes.
    Deterministic, and free of the facts' shapes (no numbers with units, errors or rules), so
    it pushes old facts out the way new work does without being mistaken for them."""
    out: list[Message] = [
        {"role": "user", "content": f"Next, go through the review notes of part {round_no}."}
    ]
    size = max(400, min(tokens // 6, 12_000))  # about six to a round; large windows too
    added, step = count(out), 0
    while added < tokens:
        step += 1
        cid = f"call_filler_{round_no}_{step}"
        words = [_WORDS[(step * 7 + i * 3 + round_no) % len(_WORDS)] for i in range(size)]
        path = f"notes/part_{round_no}/section_{step}.txt"
        function = {"name": "read_file", "arguments": f'{{"path": "{path}"}}'}
        turn: list[Message] = [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": cid, "type": "function", "function": function}],
            },
            {"role": "tool", "tool_call_id": cid, "name": "read_file", "content": " ".join(words)},
            {"role": "assistant", "content": f"Read section {step} of part {round_no}."},
        ]
        out.extend(turn)
        added += count(turn)
    return out


def _window(result: CompressionResult) -> tuple[int, int]:
    window = result.stats.get("window")
    if result.status != "compressed" or not isinstance(window, Mapping):
        raise EvalError(
            f"nothing to measure: the compaction ended {result.status!r}"
            f"{': ' + result.reason if result.reason else ''} (try a smaller --context-length)"
        )
    return int(window["head_end"]), int(window["tail_start"])


def _dry_window(compressor: Compressor, messages: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """The middle a first compaction picks, from a throwaway offline compressor."""
    dry = Compressor(
        compressor.settings,
        context_length=compressor.context_length,
        max_tokens=compressor.max_tokens,
        model=compressor.model,
        summarizer="fallback",
    )
    return _window(dry.compress(messages, force=True))


def _compaction(
    compressor: Compressor, result: CompressionResult, round_no: int, appended: int, before: int
) -> Compaction:
    summary = result.summary or ""
    at = summary.find(ANCHOR_HEADER)
    prose, ledger = (summary, "") if at < 0 else (summary[:at].rstrip(), summary[at:])
    count = compressor.counter.count_text
    planned = result.stats.get("ledger")
    if not isinstance(planned, Mapping):  # no summary was made: the last bound planned
        planned = {"section_chars": ledger_bound(compressor.ledger_chars())}
    return Compaction(
        round=round_no,
        status=result.status,
        reason=result.reason,
        summarizer=result.summarizer,
        appended_messages=appended,
        messages_before=before,
        messages_after=len(result.messages),
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        summary_tokens=count(summary) if summary else 0,
        prose_tokens=count(prose) if prose else 0,
        prose_budget_tokens=policy.summary_budget(compressor.context_length),
        ledger_chars=len(ledger),
        # the bound the engine planned for this compaction's ledger (it follows the window:
        # compression/ledger_budget.py), with the room of the user's rules and the
        # assistant's decisions on top of it
        ledger_budget_chars=int(planned.get("section_chars", 0)),
        ledger_tokens=count(ledger) if ledger else 0,
        ledger_budget_tokens=int(planned.get("share_tokens", 0)),
    )


def evaluate(
    messages: Sequence[Mapping[str, Any]],
    compressor: Compressor,
    *,
    rounds: int = 5,
    plant: bool = True,
    per_kind: int = 4,
    on_round: Callable[[int], None] | None = None,
) -> Evaluation:
    """Plant (or find) facts, compact ``rounds`` times with ``compressor``, and record what
    each compaction kept. ``messages`` is not changed. Raises :class:`EvalError` when the
    first compaction does not compact or there is no fact to follow."""
    if not 1 <= rounds <= MAX_ROUNDS:
        raise EvalError(f"rounds must be 1 to {MAX_ROUNDS}, got {rounds}")
    current = [dict(m) for m in messages]
    facts: list[Fact] = []
    if plant:
        head_end, tail_start = _dry_window(compressor, current)
        # the first three quarters of the middle: the tail start moves a little with them
        stop = head_end + max(1, (tail_start - head_end) * 3 // 4)
        current, facts = plant_facts(current, head_end, stop, per_kind=per_kind)
    tokens = compressor.count(current)
    compactions: list[Compaction] = []
    excluded = dict.fromkeys(KINDS, 0)
    for round_no in range(1, rounds + 1):
        if on_round is not None:
            on_round(round_no)
        appended = 0
        if round_no > 1:
            need = compressor.threshold_tokens - compressor.count(current) + 1
            more = filler_turns(round_no, max(need, 1), compressor.count)
            current, appended = current + more, len(more)
        before = len(current)
        result = compressor.compress(current, force=True)
        if round_no == 1:
            head_end, tail_start = _window(result)
            if not plant:
                facts = find_facts(current, 0, len(current))
            middle = [head_end <= f.index < tail_start for f in facts]
            for fact, inside in zip(facts, middle, strict=True):
                if not inside:
                    excluded[fact.kind] += 1
            facts = [f for f, inside in zip(facts, middle, strict=True) if inside]
            if not facts:
                raise EvalError(
                    "no fact to follow: the compacted middle holds no path, command, error "
                    "line, rule, decision or number (use --plant to plant some)"
                )
        compaction = _compaction(compressor, result, round_no, appended, before)
        holdings = Holdings(result.messages)
        compaction.kept = [holdings.holds(f) for f in facts]
        compactions.append(compaction)
        current = result.messages
    return Evaluation(
        planted=plant,
        context_length=compressor.context_length,
        threshold_tokens=compressor.threshold_tokens,
        token_counter=compressor.counter.name,
        messages=len(messages),
        tokens=tokens,
        facts=facts,
        excluded=excluded,
        compactions=compactions,
    )
