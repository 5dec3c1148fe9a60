"""``eval --summarizer llm`` with a summariser it cannot reach says to fix the LLM's settings
or use the offline fallback, not to try a smaller window (review 16, 10a): the window has
nothing to do with a refused connection."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from hermes_core.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "coding-session.json"

pytestmark = pytest.mark.usefixtures("isolated_home")


def _closed_port() -> int:
    """A local port nothing listens on (bound, then released: connecting is refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_summariser_gets_the_llm_hint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "config.yaml"
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    config.write_text(
        f"auxiliary:\n  compression:\n    base_url: {url}\n    model: m\n    timeout: 2\n"
    )
    argv = ["--config", str(config), "eval", str(EXAMPLE), "--summarizer", "llm"]
    code = main([*argv, "--rounds", "1", "--context-length", "2000"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "the summariser LLM failed" in err and "cannot reach the server" in err
    assert "auxiliary.compression.base_url" in err and "--summarizer fallback" in err
    assert "--context-length" not in err


def test_a_transcript_with_nothing_to_compact_keeps_the_window_hint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    short = tmp_path / "short.json"
    short.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    code = main(["eval", str(short), "--summarizer", "fallback", "--rounds", "1"])
    err = capsys.readouterr().err
    assert code == 1 and "(try a smaller --context-length)" in err
    assert "summariser LLM" not in err
