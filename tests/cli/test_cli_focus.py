"""``hermes-context compress --focus TEXT``: the summary keeps the topic (the fallback quotes
the compacted lines about it); the report names what a plan_compaction plugin changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_core.cli import main
from hermes_core.cli.compress_cmd import _report_text
from hermes_core.compression.assemble import is_summary_message

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coding-session.json"

pytestmark = pytest.mark.usefixtures("isolated_home")


def summary(path: Path) -> str:
    messages: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return str(next(m for m in messages if is_summary_message(m))["content"])


def compress(capsys: pytest.CaptureFixture[str], out: Path, *extra: str) -> str:
    argv = ["compress", str(EXAMPLE), "--context-length", "32000", "--force", "--out", str(out)]
    code = main([*argv, "--summarizer", "fallback", *extra])
    _stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    return stderr


def test_focus_reaches_the_summary(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    compress(capsys, tmp_path / "plain.json")
    compress(capsys, tmp_path / "focused.json", "--focus", "sortedcontainers")
    assert "## Focus" not in summary(tmp_path / "plain.json")
    focused = summary(tmp_path / "focused.json")
    assert "## Focus: sortedcontainers" in focused
    assert "pypi.org/project/sortedcontainers" in focused


def test_the_report_shows_a_plan() -> None:
    report: dict[str, Any] = {
        "status": "compressed",
        "messages_before": 10,
        "messages_after": 6,
        "tokens_before": 9_000,
        "tokens_after": 3_000,
        "threshold_tokens": 6_000,
        "summarizer": "fallback",
        "passes": {},
        "token_counter": "tiktoken",
        "duration_ms": 3.0,
        "reason": None,
        "plan": {"kept": 2, "shortened": 1, "dropped": 3, "warnings": ["answer 2: bad"]},
    }
    text = _report_text(report, None, [], over=False)
    assert "plan (plan_compaction): kept 2, shortened 1, dropped 3; warning: answer 2: bad" in text
    del report["plan"]
    assert "plan_compaction" not in _report_text(report, None, [], over=False)
