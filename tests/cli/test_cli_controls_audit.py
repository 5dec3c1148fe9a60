"""Issue 26 item 7, the audit: ``config show``/``config check``, ``hermes-agent install`` and
``eval`` print text from a file, the environment or a transcript escaped (terminal controls,
C1, bidi overrides), in text and JSON, and the ``eval --report`` file holds none live."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.cli import main

HOSTILE = ("\x1b[2J", "\x1b]52;c;aGk=\x07", "\x9b31m", "\u202e")
MARK = "".join(HOSTILE)


def _raw(text: str) -> list[str]:
    return [c for c in "\x1b\x9b\u202e\x07" if c in text]


@pytest.mark.parametrize("argv", [["config", "show"], ["config", "show", "--json"]])
def test_config_show_prints_values_escaped(
    argv: list[str],
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HERMES__MODEL__NAME", "gpt" + MARK)
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "gpt" in out and _raw(out) == [] and _raw(err) == [], out
    if "--json" in argv:  # the data is exact: the escapes decode back to the characters
        rows = {r["key"]: r["value"] for r in json.loads(out)["settings"]}
        assert rows["model.name"] == "gpt" + MARK


def test_config_check_prints_the_path_escaped(
    tmp_path: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / ("odd" + MARK.replace("/", "") + ".yaml")
    config.write_text("compression:\n  threshold: 0.6\n")
    assert main(["--config", str(config), "config", "check"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("config OK") and _raw(out) == [] and _raw(err) == []


def test_hermes_agent_install_prints_paths_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / ("home" + MARK.replace("/", ""))
    assert main(["hermes-agent", "install", "--home", str(home)]) == 0
    out, err = capsys.readouterr()
    assert "installed" in out and _raw(out) == [] and _raw(err) == [], out


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coding-session.json"


def _transcript(tmp_path: Path) -> Path:
    """The example session with controls in its name, every tool result and user message."""
    messages = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    for message in messages:
        if message.get("role") in ("tool", "user") and isinstance(message.get("content"), str):
            message["content"] += f"\nsee /srv/app{MARK}/main.py line 42{MARK}"
    path = tmp_path / ("t" + MARK.replace("/", "") + ".json")  # the report names the file
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_eval_prints_and_writes_the_transcript_escaped(
    json_flag: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.md"
    argv = ["eval", str(_transcript(tmp_path)), "--summarizer", "fallback", "--rounds", "1"]
    assert main([*argv, "--report", str(report), *json_flag]) == 0
    out, err = capsys.readouterr()
    assert _raw(out) == [] and _raw(err) == [], out
    written = report.read_text(encoding="utf-8")
    assert _raw(written) == [] and "\\x1b" in written
