"""``hermes-context eval``: outputs, files written, exit codes and bad input; no network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.cli import main
from hermes_core.evals.plot import check_png
from hermes_core.evals.report import to_text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "coding-session.json")

pytestmark = pytest.mark.usefixtures("isolated_home")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_table_report_and_plot(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    md, png = tmp_path / "eval.md", tmp_path / "eval.png"
    code, out, err = run(
        capsys, "eval", EXAMPLE, "--summarizer", "fallback", "--context-length", "32000",
        "--report", str(md), "--plot", str(png),
    )  # fmt: skip
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert "5 compactions at a 32,000-token window" in lines[0]
    assert lines[2].split() == ["kind", "facts", "#1", "#2", "#3", "#4", "#5"]
    assert lines[3].split()[:4] == ["paths", "4", "100%", "(4)"]
    assert f"wrote report {md}" in out and f"wrote plot {png}" in out
    assert "![retention per compaction](eval.png)" in md.read_text(encoding="utf-8")
    assert check_png(png.read_bytes()) == (800, 480)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval.md", "eval.png", "home"]


def test_json_and_found_facts(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "eval", EXAMPLE, "--summarizer", "fallback", "--json", "--no-plant",
        "--rounds", "2", "--context-length", "32000",
    )  # fmt: skip
    report = json.loads(out)
    assert code == 0 and report["facts_source"] == "found" and report["rounds"] == 2
    assert report["file"] == EXAMPLE and report["summarizer"] == "fallback"
    assert [c["summarizer"] for c in report["compactions"]] == ["fallback", "fallback"]


def test_auto_without_an_llm_is_the_offline_fallback(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "eval", EXAMPLE, "--json", "--rounds", "1")
    assert code == 0 and json.loads(out)["compactions"][0]["summarizer"] == "fallback"


def test_llm_without_one_configured_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "eval", EXAMPLE, "--summarizer", "llm")
    assert code == 2 and out == "" and "needs a summariser LLM" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--rounds", "0"], "--rounds must be 1 to 20"),
        (["--rounds", "21"], "--rounds must be 1 to 20"),
        (["--context-length", "100"], "--context-length must be 1,024 to 10,000,000"),
        (["--context-length", "99999999999999999999"], "--context-length must be"),
        (["--report", "-"], "--report needs a file name"),
        (["--plot", "out.txt"], "must end with .png"),
        (["--report", "/no/such/dir/r.md"], "no such directory"),
        (["--summarizer", "bogus"], "invalid choice"),
    ],
)
def test_usage_errors_exit_2_and_write_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, "eval", EXAMPLE, *argv)
    assert code == 2 and out == "" and message in err
    assert [p.name for p in tmp_path.iterdir()] == ["home"]


def test_a_directory_as_report_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, "eval", EXAMPLE, "--report", str(tmp_path))
    assert code == 2 and "not a regular file" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "Expected a JSON list of messages"),
        ("[]", "holds no message"),
        (json.dumps([{"role": "tool", "tool_call_id": "x", "content": "?"}]), "invalid"),
        (json.dumps([{"role": "user", "content": "hi"}]), "nothing to measure"),
    ],
)
def test_bad_input_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, message: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    md = tmp_path / "r.md"
    code, out, err = run(capsys, "eval", str(bad), "--summarizer", "fallback", "--report", str(md))
    assert code == 1 and out == "" and message in err, err
    assert not md.exists()


def test_a_missing_file_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "eval", str(tmp_path / "none.json"))
    assert code == 1 and "none.json" in err


def test_recall_through_the_tool(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """--recall replays the transcript in a throwaway store: every tool output that left the
    context comes back byte-exact through session_recall, and references cost a few tokens."""
    md = tmp_path / "eval.md"
    argv = ["eval", EXAMPLE, "--summarizer", "fallback", "--context-length", "32000"]
    code, out, err = run(capsys, *argv, "--recall", "--json", "--report", str(md))
    assert code == 0, err
    report = json.loads(out)
    recall = report["recall"]
    assert recall["compactions"] == 5 and recall["archived_outputs"] > 20
    assert recall["recalled_outputs"] + recall["withheld_outputs"] == recall["archived_outputs"]
    assert recall["lost_outputs"] == 0 and recall["recall_share"] > 0.95
    assert 0 < recall["ref_tokens_per_stand_in"] < 12
    assert "## Recall through session_recall" in md.read_text(encoding="utf-8")
    code, out, _ = run(capsys, *argv, "--json")
    assert code == 0 and "recall" not in json.loads(out)  # only when asked: it costs a replay
    # the screen renders the same dict (report.py) the CLI filled before choosing JSON or text:
    # a second --recall replay only to read its screen would double the test's cost
    assert "came back byte-exact through session_recall" in to_text(report)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval.md", "home"]  # nothing left
