"""Issue 27 item 8: one file, several token totals: each command says which counter it used
and what its total includes (docs/quickstart.md has the table)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.cli import main
from hermes_core.tokens.costs import REPLY_PRIMING

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "coding-session.json")

pytestmark = pytest.mark.usefixtures("isolated_home")


def test_tokens_says_what_its_total_includes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tokens", EXAMPLE]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "counter: tiktoken:o200k_base" in first
    assert f"without the {REPLY_PRIMING} reply-priming tokens" in first


def test_compress_says_what_before_and_after_are(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["compress", EXAMPLE, "--out", str(tmp_path / "o.json")]) == 0
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if x.startswith("counter:"))
    assert "tokens before: the prompt estimated" in line and "after: counted exactly" in line
    assert "with reply priming" in line
