"""Issue 27 item 3: under a context below 512K the trigger fraction is raised to the 0.75
floor. ``config show`` gives the effective value and its reason beside the configured one,
and an explicit setting below the floor logs one warning per process and config."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from hermes_core import Hermes
from hermes_core.cli import main


def _config(home: Path, threshold: str, context: int) -> Path:
    path = home / "config.yaml"
    text = f"model:\n  context_length: {context}\n"
    if threshold:
        text += f"compression:\n  threshold: {threshold}\n"
    path.write_text(text, encoding="utf-8")
    return path


def test_config_show_gives_the_effective_threshold_and_why(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(isolated_home, "0.6", 200_000)
    assert main(["config", "show"]) == 0
    row = next(x for x in capsys.readouterr().out.splitlines() if "compression.threshold:" in x)
    assert "compression.threshold: 0.6" in row
    assert "effective 0.75: raised to 0.75: window 200,000 < 512,000" in row
    assert main(["config", "show", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["effective_threshold"] == 0.75


def test_no_effective_note_when_the_configured_value_is_used(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(isolated_home, "0.6", 1_000_000)
    assert main(["config", "show"]) == 0
    row = next(x for x in capsys.readouterr().out.splitlines() if "compression.threshold:" in x)
    assert "; effective" not in row


def _floor_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "is not the threshold used" in r.getMessage()]


def test_an_explicit_threshold_below_the_floor_warns_once(
    isolated_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _config(isolated_home, "0.55", 128_000)
    with caplog.at_level(logging.WARNING, logger="hermes_context.host"):
        for _ in range(3):
            Hermes.from_config(path).close()
    warnings = _floor_warnings(caplog)
    assert len(warnings) == 1, warnings
    assert "0.55" in warnings[0] and "effective threshold is 0.75" in warnings[0]


@pytest.mark.parametrize(("threshold", "context"), [("", 128_000), ("0.6", 600_000)])
def test_no_warning_for_the_default_or_a_big_window(
    isolated_home: Path, caplog: pytest.LogCaptureFixture, threshold: str, context: int
) -> None:
    path = _config(isolated_home, threshold, context)
    with caplog.at_level(logging.WARNING, logger="hermes_context.host"):
        Hermes.from_config(path).close()
    assert _floor_warnings(caplog) == []


def test_a_model_thresholds_entry_below_the_floor_is_shown_and_warned_where_it_was_set(
    isolated_home: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    (isolated_home / "config.yaml").write_text(
        "model:\n  name: gpt-x\n  context_length: 200000\n"
        "compression:\n  model_thresholds:\n    gpt-x: 0.5\n",
        encoding="utf-8",
    )
    with caplog.at_level(logging.WARNING, logger="hermes_context.host"):
        Hermes.from_config(isolated_home / "config.yaml", home=isolated_home).close()
    warnings = _floor_warnings(caplog)
    assert len(warnings) == 1 and "compression.model_thresholds" in warnings[0]
    assert main(["config", "show"]) == 0
    rows = capsys.readouterr().out.splitlines()
    entry = next(x for x in rows if "compression.model_thresholds" in x)
    assert "effective 0.75: raised to 0.75" in entry
    assert "effective" not in next(x for x in rows if "compression.threshold:" in x)


def test_the_json_gives_the_model_thresholds_entry_when_it_is_the_one_used(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (isolated_home / "config.yaml").write_text(
        "model:\n  name: gpt-x\n  context_length: 1000000\n"
        "compression:\n  model_thresholds:\n    gpt-x: 0.6\n",
        encoding="utf-8",
    )
    assert main(["config", "show", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["effective_threshold"] == 0.6
