"""What ``compress`` and ``plugins`` print is escaped: a provider's error body, stored text
and plugin names may hold terminal escapes (OSC 52 clipboard writes, screen clears, C1 CSI)
and bidi overrides, which must reach the terminal as visible escapes (review 2, defect 7)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_openai import FakeLLM, http_error

from hermes_core.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLE = ROOT / "examples" / "coding-session.json"
HOSTILE = "bad key \x1b]52;c;ZWNobyBoaQ==\x07\x1b[2J\u202egnp.exe \x9b2J"
LIVE = ("\x1b", "\u202e", "\x9b", "\x07")

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def _live(text: str) -> list[str]:
    return [c for c in LIVE if c in text]


def _config(tmp_path: Path, server: FakeLLM) -> Path:
    config = tmp_path / "config.yaml"
    config.write_text(
        "auxiliary:\n  compression:\n"
        f"    base_url: {server.base_url}\n    model: m\n    timeout: 2\n"
    )
    return config


def _compress_failing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, server: FakeLLM, *more: str
) -> tuple[str, str]:
    server.script(*[http_error(401, HOSTILE) for _ in range(5)])
    args = ["--config", str(_config(tmp_path, server)), "compress", str(EXAMPLE)]
    args += ["--context-length", "2000", "--force", "--summarizer", "llm"]
    main([*args, "--out", str(tmp_path / "o.json"), *more])
    return capsys.readouterr()


def test_the_reason_from_a_provider_error_is_escaped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fake_llm: FakeLLM
) -> None:
    _out, err = _compress_failing(capsys, tmp_path, fake_llm)
    assert err.startswith("aborted:") and "reason:" in err
    assert not _live(err) and "\\x1b" in err and "\\u202e" in err


def test_the_json_report_is_escaped_and_decodes_to_the_same_reason(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fake_llm: FakeLLM
) -> None:
    out, _err = _compress_failing(capsys, tmp_path, fake_llm, "--json")
    assert not _live(out)
    assert "\u202e" in json.loads(out)["reason"]  # the data is kept, only its spelling escaped


def test_messages_on_stdout_are_escaped_and_decode_to_the_same_text(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    transcript = tmp_path / "t.json"
    message = {"role": "user", "content": "hi \u202eevil\x9b2J \u2066x\u2069"}
    transcript.write_text(json.dumps([message]))
    assert main(["compress", str(transcript), "--force"]) == 0
    out, _err = capsys.readouterr()
    assert not _live(out) and "\u2066" not in out
    assert json.loads(out)[0]["content"] == message["content"]


def test_a_file_given_with_out_keeps_the_text_as_it_was(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    transcript = tmp_path / "t.json"
    message = {"role": "user", "content": "hi \u202eevil"}
    transcript.write_text(json.dumps([message]))
    out = tmp_path / "o.json"
    assert main(["compress", str(transcript), "--force", "--out", str(out)]) == 0
    capsys.readouterr()
    assert json.loads(out.read_text()) == [message]


def test_plugin_failures_are_printed_escaped(
    capsys: pytest.CaptureFixture[str],
    isolated_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    site = tmp_path / "site"
    info = site / "bad_dist-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bad_dist\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[hermes_context.plugins]\nbad = bad_plugin:Bad\n")
    (site / "bad_plugin.py").write_text(
        f"class Bad:\n    def __init__(self, context):\n        raise RuntimeError({HOSTILE!r})\n"
    )
    monkeypatch.syspath_prepend(str(site))
    (isolated_home / "config.yaml").write_text("plugins:\n  enabled: [bad]\n")
    assert main(["plugins"]) == 0
    out, _err = capsys.readouterr()
    assert "bad" in out and "\\x1b" in out and not _live(out)
    assert main(["plugins", "--json"]) == 0
    out, _err = capsys.readouterr()
    (row,) = [r for r in json.loads(out) if r["name"] == "bad"]
    assert not _live(out) and "\u202e" in row["status"]
