"""The recall property on real PostgreSQL (tests/support/recall_cases.py): every original a
compaction archived comes back byte-exact through ``session_recall``; another user gets
nothing."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from recall_cases import run_and_check, steps

import hermes_core as hc
from hermes_core.config.loader import load_config

_ids = itertools.count()


@pytest.fixture
def host(pg_dsn: str, tmp_path: Path) -> Any:
    def make(in_place: bool) -> hc.Hermes:
        config = {
            "model": {"context_length": 8_000},
            "compression": {"in_place": in_place},
            "sessions": {"backend": "postgres", "dsn": pg_dsn},
        }
        return hc.Hermes(load_config(config, home=tmp_path / f"h{next(_ids)}", environ={}))

    return make


@settings(
    max_examples=5,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(plan=steps, in_place=st.booleans())
def test_everything_archived_comes_back_byte_exact_on_postgres(
    host: Any, plan: list[Any], in_place: bool
) -> None:
    with host(in_place) as hermes:
        run_and_check(hermes, f"pg-prop-{next(_ids)}", plan)
