"""The measure on the sample transcripts with the fallback summariser: deterministic figures,
the JSON keys and the Markdown report."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from hermes_core.compression.anchors import ledger_bound
from hermes_core.compression.engine import Compressor
from hermes_core.config.settings import Settings
from hermes_core.evals.facts import KINDS
from hermes_core.evals.measure import EvalError, evaluate, filler_turns
from hermes_core.evals.report import to_dict, to_markdown, to_text
from hermes_core.transcript.files import read_transcript

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "coding-session.json"


def settings() -> Settings:
    s = Settings()
    s.model.tokenizer = "estimate"  # the same figures whether tiktoken's data is here or not
    return s


def run(path: Path, *, context: int = 32_000, **kwargs: Any) -> dict[str, Any]:
    compressor = Compressor(settings(), context_length=context, summarizer="fallback")
    return to_dict(evaluate(read_transcript(path), compressor, **kwargs), file=path.name)


@pytest.fixture(scope="module")
def planted() -> dict[str, Any]:
    return run(EXAMPLE)


def test_planted_facts_on_the_example(planted: dict[str, Any]) -> None:
    kinds = planted["kinds"]
    assert planted["facts_source"] == "planted" and planted["rounds"] == 5
    assert {k: v["facts"] for k, v in kinds.items()} == dict.fromkeys(KINDS, 4)
    # the ledger carries paths, commands, failed commands' error lines, the user's rules
    # and the assistant's decisions and figures through every compaction
    # (docs/eval.md: why the fallback keeps what it keeps)
    for kind in KINDS:
        assert kinds[kind]["retention"] == [1.0] * 5, kind


def test_every_round_compacts_within_its_budgets(planted: dict[str, Any]) -> None:
    rounds = planted["compactions"]
    assert [c["round"] for c in rounds] == [1, 2, 3, 4, 5]
    assert all(c["status"] == "compressed" and c["summarizer"] == "fallback" for c in rounds)
    assert rounds[0]["appended_messages"] == 0
    for c in rounds[1:]:  # new turns pushed it over the threshold again
        assert c["appended_messages"] > 0 and c["tokens_before"] > planted["threshold_tokens"]
    for c in rounds:
        assert c["within_budget"] and c["prose_budget_tokens"] == 1_600
        assert 0 < c["prose_tokens"] <= 1_600
        assert 0 < c["ledger_chars"] <= c["ledger_budget_chars"]
        # the bound the engine planned (it follows the window), never below the old fixed one
        assert c["ledger_budget_chars"] >= ledger_bound(8_000)
        assert 0 < c["ledger_tokens"] <= c["ledger_budget_tokens"]
        assert c["summary_tokens"] >= c["prose_tokens"]


def test_the_figures_are_deterministic(planted: dict[str, Any]) -> None:
    again = run(EXAMPLE)
    assert again == planted


def test_json_keys(planted: dict[str, Any]) -> None:
    assert set(planted) == {
        "file", "facts_source", "messages", "tokens", "context_length", "threshold_tokens",
        "token_counter", "rounds", "kinds", "compactions", "facts",
    }  # fmt: skip
    assert set(planted["kinds"]["paths"]) == {"facts", "kept", "retention", "excluded"}
    assert set(planted["compactions"][0]) == {
        "round", "status", "reason", "summarizer", "appended_messages", "messages_before",
        "messages_after", "tokens_before", "tokens_after", "summary_tokens", "prose_tokens",
        "prose_budget_tokens", "ledger_chars", "ledger_budget_chars", "ledger_tokens",
        "ledger_budget_tokens", "within_budget", "kept",
    }  # fmt: skip
    fact = planted["facts"][0]
    assert set(fact) == {"kind", "text", "message_index", "planted", "kept", "first_lost_at"}
    for f in planted["facts"]:  # the first compaction that lost it, or None
        lost_at = next((n for n, kept in enumerate(f["kept"], start=1) if not kept), None)
        assert f["first_lost_at"] == lost_at
    json.dumps(planted)  # JSON-ready


def test_found_facts_on_the_larger_sample(transcripts_dir: Path) -> None:
    report = run(transcripts_dir / "coding-200turns.json", plant=False, rounds=3)
    kinds = report["kinds"]
    assert report["facts_source"] == "found"
    assert kinds["paths"]["facts"] > 40 and kinds["commands"]["facts"] > 40
    assert kinds["paths"]["retention"] == [1.0] * 3
    assert kinds["commands"]["retention"] == [1.0] * 3
    assert kinds["errors"]["facts"] > 0
    assert all(f["planted"] is False for f in report["facts"])
    # a fact is followed only from the first compaction's middle
    window_facts = {f["message_index"] for f in report["facts"]}
    assert min(window_facts) > 0


def test_markdown_and_text(planted: dict[str, Any]) -> None:
    markdown = to_markdown(planted, plot="r.png")
    assert markdown.startswith("# What compaction keeps: coding-session.json\n")
    assert "![retention per compaction](r.png)" in markdown
    assert "| kind | facts | #1 | #2 | #3 | #4 | #5 |" in markdown
    assert "| paths | 4 | 100% (4) | 100% (4) | 100% (4) | 100% (4) | 100% (4) |" in markdown
    assert "| numbers | 4 | 100% (4) |" in markdown
    lost = copy.deepcopy(planted)  # the report of a run that lost one number at once
    fact = next(f for f in lost["facts"] if f["text"] == "1,375 ms")
    fact["kept"], fact["first_lost_at"] = [False] * 5, 1
    assert "- #1 numbers: `1,375 ms`" in to_markdown(lost, plot="r.png")
    text = to_text(planted)
    assert "summary against its budget:" in text
    assert "prose" in text.splitlines()[-1] and "/ 1,600" in text


def test_nothing_to_compact_and_no_fact_are_errors() -> None:
    tiny = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    compressor = Compressor(settings(), context_length=32_000, summarizer="fallback")
    with pytest.raises(EvalError, match="nothing to measure"):
        evaluate(tiny, compressor)
    with pytest.raises(EvalError, match="rounds must be 1 to 20"):
        evaluate(tiny, compressor, rounds=0)


def test_filler_reaches_the_tokens_asked_and_has_no_fact_shapes() -> None:
    from hermes_core.evals.facts import find_facts

    compressor = Compressor(settings(), context_length=32_000)
    turns = filler_turns(2, 5_000, compressor.count)
    assert compressor.count(turns) >= 5_000
    assert {f.kind for f in find_facts(turns)} <= {"paths"}
    assert turns == filler_turns(2, 5_000, compressor.count)
