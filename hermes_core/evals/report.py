"""An evaluation as a JSON-ready dict, a terminal table, or a short Markdown report.

Why: the same figures three ways, from one dict, so the command's ``--json``, its screen and
``--report`` can never disagree. Retention is kept facts over facts, per kind, after each
compaction; ``None`` (JSON ``null``, shown "-") where a kind has no fact.
"""

from __future__ import annotations

from typing import Any

from hermes_core.evals.facts import KINDS
from hermes_core.evals.measure import Evaluation

__all__ = ["KIND_LABELS", "to_dict", "to_markdown", "to_text"]

#: What each kind is, in a few words (the docs say more: docs/eval.md).
KIND_LABELS = {
    "paths": "file paths (tool-call arguments, paths the user wrote)",
    "commands": "shell commands the agent ran",
    "errors": "error lines of failed tool results",
    "rules": "the user's rules (always / never / don't ...)",
    "decisions": "decisions the assistant stated",
    "numbers": "numbers with units (ms, MB, %, tokens ...)",
}


def to_dict(evaluation: Evaluation, **extra: Any) -> dict[str, Any]:
    """The JSON report; ``extra`` keys (the file, the summariser asked for) go first."""
    kinds = {}
    for kind in KINDS:
        total = evaluation.total(kind)
        kinds[kind] = {
            "facts": total,
            "kept": [evaluation.kept(kind, c) for c in evaluation.compactions],
            "retention": [None if r is None else round(r, 4) for r in evaluation.retention(kind)],
            "excluded": evaluation.excluded.get(kind, 0),
        }
    compactions = []
    for c in evaluation.compactions:
        compactions.append(
            {
                "round": c.round,
                "status": c.status,
                "reason": c.reason,
                "summarizer": c.summarizer,
                "appended_messages": c.appended_messages,
                "messages_before": c.messages_before,
                "messages_after": c.messages_after,
                "tokens_before": c.tokens_before,
                "tokens_after": c.tokens_after,
                "summary_tokens": c.summary_tokens,
                "prose_tokens": c.prose_tokens,
                "prose_budget_tokens": c.prose_budget_tokens,
                "ledger_chars": c.ledger_chars,
                "ledger_budget_chars": c.ledger_budget_chars,
                "ledger_tokens": c.ledger_tokens,
                "ledger_budget_tokens": c.ledger_budget_tokens,
                "within_budget": c.within_budget,
                "kept": {kind: evaluation.kept(kind, c) for kind in KINDS},
            }
        )
    facts = []
    for i, fact in enumerate(evaluation.facts):
        kept = [c.kept[i] for c in evaluation.compactions]
        lost = next(
            (c.round for c, k in zip(evaluation.compactions, kept, strict=True) if not k), None
        )
        facts.append(
            {
                "kind": fact.kind,
                "text": fact.text,
                "message_index": fact.index,
                "planted": fact.planted,
                "kept": kept,
                "first_lost_at": lost,
            }
        )
    return {
        **extra,
        "facts_source": "planted" if evaluation.planted else "found",
        "messages": evaluation.messages,
        "tokens": evaluation.tokens,
        "context_length": evaluation.context_length,
        "threshold_tokens": evaluation.threshold_tokens,
        "token_counter": evaluation.token_counter,
        "rounds": len(evaluation.compactions),
        "kinds": kinds,
        "compactions": compactions,
        "facts": facts,
    }


def _code(text: str) -> str:
    """Text for a Markdown code span: no backticks, no line breaks."""
    return " ".join(text.replace("`", "'").split())


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _rows(report: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    rounds = report["rounds"]
    headers = ["kind", "facts", *(f"#{n}" for n in range(1, rounds + 1))]
    rows = []
    for kind, entry in report["kinds"].items():
        cells = [
            f"{_pct(r)} ({k})" if r is not None else "-"
            for r, k in zip(entry["retention"], entry["kept"], strict=True)
        ]
        rows.append([kind, f"{entry['facts']:,}", *cells])
    return headers, rows


def _budget_lines(report: dict[str, Any]) -> list[str]:
    lines = []
    for c in report["compactions"]:
        mark = "" if c["within_budget"] else "  OVER BUDGET"
        lines.append(
            f"#{c['round']}: {c['status']} by {c['summarizer'] or 'none'}, "
            f"{c['tokens_before']:,} -> {c['tokens_after']:,} tokens; summary "
            f"{c['summary_tokens']:,} tokens: prose {c['prose_tokens']:,} / "
            f"{c['prose_budget_tokens']:,}, ledger {c['ledger_chars']:,} / "
            f"{c['ledger_budget_chars']:,} chars ({c['ledger_tokens']:,} tokens of the "
            f"{c['ledger_budget_tokens']:,} it was given){mark}"
        )
    return lines


def _intro(report: dict[str, Any]) -> str:
    source = "planted into a copy" if report["facts_source"] == "planted" else "found in it"
    counted = "of the copy, " if report["facts_source"] == "planted" else ""
    return (
        f"{report['messages']:,} messages, {report['tokens']:,} tokens ({counted}counted "
        "exactly with reply priming); "
        f"facts {source}; "
        f"{report['rounds']} compactions at a {report['context_length']:,}-token window "
        f"(threshold {report['threshold_tokens']:,}, counter {report['token_counter']})"
    )


def _recall_part(
    report: dict[str, Any], title: str, *, bullet: str = "", end: list[str] | None = None
) -> list[str]:
    """The ``--recall`` figures, when measured."""
    from hermes_core.evals.recall import recall_lines

    recall = report.get("recall")
    if not isinstance(recall, dict):
        return []
    return [title, *(bullet + line for line in recall_lines(recall)), *(end or [])]


def to_text(report: dict[str, Any]) -> str:
    """The screen: a table of retention per kind after each compaction, then the budgets."""
    headers, rows = _rows(report)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    body = [line(headers), *(line(r) for r in rows)]
    return "\n".join(
        [
            _intro(report),
            "kept after each compaction (share of the facts, count):",
            *body,
            "summary against its budget:",
            *_budget_lines(report),
            *_recall_part(report, "compacted tool outputs recalled through session_recall:"),
        ]
    )


def to_markdown(report: dict[str, Any], *, plot: str | None = None) -> str:
    """A short report: what was measured, the table, the budgets, the facts lost first."""
    headers, rows = _rows(report)
    table = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
        *("| " + " | ".join(r) + " |" for r in rows),
    ]
    title = report.get("file", "transcript")
    lost = [f for f in report["facts"] if f["first_lost_at"] is not None]
    lost.sort(key=lambda f: (f["first_lost_at"], f["kind"]))
    lost_lines = [f"- #{f['first_lost_at']} {f['kind']}: `{_code(f['text'])}`" for f in lost[:12]]
    if len(lost) > 12:
        lost_lines.append(f"- ... and {len(lost) - 12:,} more (see --json)")
    parts = [
        f"# What compaction keeps: {title}",
        "",
        _intro(report) + f"; summariser asked for: {report.get('summarizer', 'auto')}.",
        "",
        "Retention: the share of each kind's facts still in the compacted transcript "
        "(verbatim, whitespace-normalised, or as an anchor-ledger item) after compaction #N.",
        "",
        *table,
        "",
        "## The summary against its budget",
        "",
        *(f"- {x}" for x in _budget_lines(report)),
        "",
        "## Facts lost, first lost first",
        "",
        *(lost_lines or ["- none: every fact survived every compaction"]),
        "",
        *_recall_part(report, "## Recall through session_recall\n", bullet="- ", end=[""]),
        "Kinds: " + "; ".join(f"**{k}**: {v}" for k, v in KIND_LABELS.items()) + ".",
    ]
    if plot:
        parts[2:2] = [f"![retention per compaction]({plot})", ""]
    return "\n".join(parts) + "\n"
