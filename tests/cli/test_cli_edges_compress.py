"""``compress`` rough edges (issue 16 §3): a result still over the threshold says so in its
status and exit code, and ``--json --out -`` is refused instead of mixing two documents."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hermes_core.cli import main
from hermes_core.cli.common import EXIT_OVER_LIMIT

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "coding-session.json"

pytestmark = pytest.mark.usefixtures("isolated_home")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("window", ["1", "100", "1024"])
def test_a_compaction_that_cannot_reach_the_threshold_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, window: str
) -> None:
    out = tmp_path / "o.json"
    argv = ("compress", str(EXAMPLE), "--context-length", window, "--out", str(out))
    code, stdout, err = run(capsys, *argv)
    assert code == EXIT_OVER_LIMIT == 3 and stdout == ""
    first = err.splitlines()[0]
    assert first.startswith("compressed_over_limit: 129 -> "), err
    assert "over the limit: " in err and "(exit 3)" in err and "--context-length" in err
    written = json.loads(out.read_text())  # the best result is written all the same
    assert main(["validate", str(out)]) == 0 and len(written) < 129
    capsys.readouterr()

    code, stdout, _err = run(capsys, *argv, "--json")
    report = json.loads(stdout)
    assert code == 3 and report["status"] == "compressed_over_limit"
    assert report["tokens_after"] >= report["threshold_tokens"]


def test_a_result_under_the_threshold_keeps_its_plain_status(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "o.json"
    argv = ("compress", str(EXAMPLE), "--context-length", "32000", "--force", "--json")
    code, stdout, _err = run(capsys, *argv, "--out", str(out))
    report = json.loads(stdout)
    assert code == 0 and report["status"] == "compressed"
    assert report["tokens_after"] < report["threshold_tokens"]


def test_the_exit_code_is_documented(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compress", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "_over_limit" in text and "3 written but still over the threshold" in text
    for doc in (ROOT / "README.md", ROOT / "docs" / "quickstart.md"):
        words = " ".join(doc.read_text(encoding="utf-8").split())
        assert "compressed_over_limit" in words, doc
        assert re.search(r"(exits|,) 3 ", words) and "still" in words, doc


@pytest.mark.parametrize("target", ["-", None])
def test_json_report_and_messages_never_share_stdout(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, target: str | None
) -> None:
    argv = ["compress", str(EXAMPLE), "--json", *(["--out", target] if target else [])]
    code, stdout, err = run(capsys, *argv)
    assert code == 2 and stdout == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hermes-context: error: --json ")
    assert "give --out FILE" in lines[0]
    assert list(tmp_path.iterdir()) == [tmp_path / "home"]  # nothing written anywhere
