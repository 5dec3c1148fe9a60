"""The anchor ledger's budget follows the window (issue 24 §5): a share of the headroom a
compaction creates, bounded, and both summary paths (the LLM's and the fallback) use it, so a
long middle's paths and commands survive where their grouped rendering fits.

Sessions and the measure are bench/anchor_coverage.py's and bench/fidelity.py's (made in
milliseconds; no file from outside the repository)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from hermes_core.compression.anchors import ANCHOR_HEADER, ledger_bound
from hermes_core.compression.engine import Compressor
from hermes_core.compression.ledger_budget import (
    CHARS_PER_TOKEN,
    HEADROOM_SHARE,
    MAX_LEDGER_TOKENS,
    floor_chars,
    ledger_budget,
)
from hermes_core.compression.policy import resolve_threshold
from hermes_core.tokens import get_counter

REPO = Path(__file__).resolve().parents[2]
WINDOWS = (32_000, 128_000, 1_000_000)


def _load(name: str) -> ModuleType:
    sys.path.insert(0, str(REPO / "bench"))  # fidelity imports anchor_coverage by name
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


coverage = _load("anchor_coverage")
fidelity = _load("fidelity")
_SESSIONS: dict[int, list[dict[str, Any]]] = {}


def session(turns: int) -> list[dict[str, Any]]:
    if turns not in _SESSIONS:
        _SESSIONS[turns] = coverage.make_session(turns)
    return _SESSIONS[turns]


# --- the budget, as arithmetic --------------------------------------------------------------


def _threshold(window: int) -> int:
    return resolve_threshold(context_length=window).tokens


def test_the_budget_is_a_share_of_the_headroom_in_characters() -> None:
    budget = ledger_budget(96_000, 26_000)
    assert budget.headroom_tokens == 70_000
    assert budget.share_tokens == int(70_000 * HEADROOM_SHARE) == 14_000
    # the whole section (rules and decisions included) fits the share, converted
    assert budget.section_chars == ledger_bound(budget.chars) <= 14_000 * CHARS_PER_TOKEN
    assert ledger_bound(budget.chars + 1) > 14_000 * CHARS_PER_TOKEN  # and nearly fills it


@pytest.mark.parametrize("kept_share", [0.1, 0.25, 0.4])
def test_the_budget_grows_with_the_window_and_stays_bounded(kept_share: float) -> None:
    chars = []
    for window in WINDOWS:
        threshold = _threshold(window)
        budget = ledger_budget(threshold, int(threshold * kept_share))
        chars.append(budget.chars)
        assert budget.chars >= floor_chars(threshold)
        assert budget.section_chars <= MAX_LEDGER_TOKENS * CHARS_PER_TOKEN
    assert chars[0] < chars[1] < chars[2]
    assert chars[2] >= 4 * floor_chars(_threshold(1_000_000))  # no longer 8,000 everywhere


def test_less_headroom_less_ledger_and_never_below_the_old_bound() -> None:
    threshold = _threshold(128_000)
    sizes = [ledger_budget(threshold, kept).chars for kept in range(0, threshold + 1, 8_000)]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1]
    assert sizes[-1] == floor_chars(threshold) == 8_000  # no headroom: the old fixed bound
    assert ledger_budget(threshold, 10 * threshold).headroom_tokens == 0
    assert floor_chars(2_000) == 1_000  # tiny windows: the old floor


def test_the_ceiling_keeps_the_summary_small_at_1m() -> None:
    threshold = _threshold(1_000_000)
    budget = ledger_budget(threshold, 0)
    assert budget.share_tokens == MAX_LEDGER_TOKENS
    assert budget.share_tokens <= threshold // 20


# --- the engine plans it and both summary paths use it --------------------------------------


def _compress(messages: list[dict[str, Any]], window: int, summarizer: Any) -> Any:
    compressor = Compressor(coverage._settings(), context_length=window, summarizer=summarizer)
    result = compressor.compress(messages, force=True)
    assert result.status == "compressed", result.reason
    return compressor, result


def _llm(middle: Any, previous: Any, budget: int, context: Any) -> str:
    """A summariser that writes prose only: the ledger is ours to append."""
    return "## Goal\nThe user fixed flows across the services; tests were run throughout."


@pytest.mark.parametrize("summarizer", ["fallback", _llm], ids=["fallback", "llm"])
def test_the_engine_plans_the_budget_per_window_and_renders_within_it(summarizer: Any) -> None:
    planned = []
    for window in WINDOWS:
        compressor, result = _compress(session(1000), window, summarizer)
        plan = result.stats["ledger"]
        assert plan["threshold_tokens"] == compressor.threshold_tokens
        assert plan["chars"] == compressor.ledger_chars()
        ledger = result.summary[result.summary.index(ANCHOR_HEADER) :]
        assert len(ledger) <= plan["section_chars"] == ledger_bound(plan["chars"])
        tokens = get_counter(None, "estimate").count_text(ledger)
        assert tokens <= plan["share_tokens"] or plan["chars"] == floor_chars(
            compressor.threshold_tokens
        )
        planned.append(plan["chars"])
    assert planned[0] < planned[1] < planned[2]


@pytest.mark.parametrize("summarizer", ["fallback", _llm], ids=["fallback", "llm"])
@pytest.mark.parametrize(("turns", "window"), [(1000, 128_000), (1000, 1_000_000), (300, 32_000)])
def test_paths_and_commands_survive_where_the_grouped_rendering_fits(
    turns: int, window: int, summarizer: Any
) -> None:
    """At 1,000 turns the fixed 8,000-character ledger kept about half the paths and a
    quarter of the commands; a budget that follows the window keeps them all at 128K."""
    messages = session(turns)
    _, result = _compress(messages, window, summarizer)
    w = result.stats["window"]
    ref = coverage.reference(messages[w["head_end"] : w["tail_start"]])
    m = fidelity.score(result.summary, ref, result.stats["ledger"]["chars"])
    assert m.fits(), (m.compact, m.budget)  # the case the target is set for
    for name in ("paths", "commands"):
        kept, total = m.shares[name]
        assert total > 20 and kept >= 0.95 * total, f"{name}: {kept}/{total}"
    for name in ("edited", "failed", "last"):
        kept, total = m.shares[name]
        assert total > 0 and kept == total, f"{name}: {kept}/{total}"


def test_repeated_compactions_of_a_long_session_keep_everything_at_128k() -> None:
    rows = fidelity.repeated(session(1000), 128_000)
    assert len(rows) >= 5
    for row in rows:
        assert row.fits() and row.ok(), row.shares
    paths, commands = rows[-1].shares["paths"], rows[-1].shares["commands"]
    assert paths[1] > 250 and commands[1] > 100  # the whole session's, by the last one
