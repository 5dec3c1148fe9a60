"""``replay_recall``: the recall figures of bench/recall.py on a small real session."""

from __future__ import annotations

from pathlib import Path

from recall_cases import turn

import hermes_core as hc
from hermes_core.config.loader import load_config
from hermes_core.evals.recall import replay_recall
from hermes_core.tokens import get_counter


def test_every_archived_output_comes_back_and_refs_stay_small(tmp_path: Path) -> None:
    messages = [m for n in range(12) for m in turn(n, 2, 80, n % 4 == 3, n % 5 == 1)]
    config = {"model": {"context_length": 8_000}}
    with hc.Hermes(load_config(config, home=tmp_path, environ={})) as host:
        counter = get_counter("gpt-4o", "auto")
        figures = replay_recall(host, "e1", messages, every=8, count_text=counter.count_text)
    assert figures.compactions >= 2 and figures.stand_ins >= figures.compactions
    assert figures.archived_outputs > 0 and figures.recall_share == 1.0 and figures.lost == 0
    assert 0 < figures.tokens_per_stand_in <= 9
