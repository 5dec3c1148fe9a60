"""Outputs that are one of the command's own files under another name are refused, before
any work (review 16, 4 and 5).

``eval`` never changes its input (docs/eval.md), so ``--report``/``--plot`` naming the input,
by itself, through a symbolic link or a hard link, is a usage error (exit 2), as are
``--report`` and ``--plot`` naming one file. ``compress --json`` prints the report on
stdout, so an ``--out`` that *is* stdout (``/dev/stdout``, ``/proc/self/fd/1``, the file
stdout is redirected to) would replace the file the report goes to: refused too. Without
``--json`` nothing else goes to stdout, and that stays allowed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "coding-session.json"

pytestmark = pytest.mark.usefixtures("isolated_home")


def _input(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_bytes(EXAMPLE.read_bytes())
    return path


def _eval(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["eval", *argv, "--summarizer", "fallback", "--rounds", "1"])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--report", "--plot"])
@pytest.mark.parametrize("how", ["itself", "symlink", "hardlink", "dotted"])
def test_eval_refuses_to_write_over_its_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str, how: str
) -> None:
    suffix = ".md" if flag == "--report" else ".png"
    source = _input(tmp_path, f"in{suffix}")
    target = {
        "itself": source,
        "symlink": tmp_path / f"link{suffix}",
        "hardlink": tmp_path / f"hard{suffix}",
        "dotted": tmp_path / "." / f"in{suffix}",
    }[how]
    if how == "symlink":
        target.symlink_to(source)
    elif how == "hardlink":
        os.link(source, target)
    code, err = _eval(capsys, str(source), flag, str(target))
    assert code == 2, err
    assert f"{flag} {target} is the input transcript {source}" in err
    assert "eval never changes its input" in err
    assert source.read_bytes() == EXAMPLE.read_bytes()


def test_eval_refuses_a_report_and_a_plot_that_are_one_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = _input(tmp_path, "in.json")
    plot = tmp_path / "chart.png"
    plot.write_bytes(b"old")
    report = tmp_path / "report.md"
    report.symlink_to(plot)
    code, err = _eval(capsys, str(source), "--report", str(report), "--plot", str(plot))
    assert code == 2, err
    assert "are the same file: give two names" in err
    assert plot.read_bytes() == b"old" and report.is_symlink()


def _compress(tmp_path: Path, stdout: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """The command in a process of its own, its stdout a file (what the shell's ``>`` does)."""
    env = {**os.environ, "MEM0_TELEMETRY": "False", "HERMES_HOME": str(tmp_path / "home")}
    with stdout.open("w") as handle:
        return subprocess.run(
            [sys.executable, "-m", "hermes_core", "compress", str(EXAMPLE), *argv],
            stdout=handle,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
            check=False,
        )


@pytest.mark.skipif(not os.path.exists("/proc/self/fd/1"), reason="needs /dev/stdout, /proc")
@pytest.mark.parametrize("out", ["/dev/stdout", "/proc/self/fd/1", "stdout.txt", "link.txt"])
def test_compress_json_refuses_an_out_that_is_stdout(tmp_path: Path, out: str) -> None:
    stdout = tmp_path / "stdout.txt"
    (tmp_path / "link.txt").symlink_to(stdout)
    done = _compress(tmp_path, stdout, "--json", "--out", out, "--summarizer", "fallback")
    assert done.returncode == 2, done.stderr
    assert f"--out {out} is standard output, where --json prints the report" in done.stderr
    assert stdout.read_text() == ""  # nothing was read, compressed or written


@pytest.mark.skipif(not os.path.exists("/proc/self/fd/1"), reason="needs /dev/stdout, /proc")
def test_compress_without_json_may_write_the_messages_to_stdout_by_name(tmp_path: Path) -> None:
    stdout = tmp_path / "stdout.txt"
    done = _compress(tmp_path, stdout, "--out", "/dev/stdout", "--summarizer", "fallback")
    assert done.returncode == 0, done.stderr
    assert "wrote /dev/stdout" in done.stderr  # the report went to stderr
    assert isinstance(json.loads(stdout.read_text()), list)


def test_compress_json_with_another_out_still_works(tmp_path: Path) -> None:
    stdout, out = tmp_path / "stdout.txt", tmp_path / "messages.json"
    done = _compress(tmp_path, stdout, "--json", "--out", str(out), "--summarizer", "fallback")
    assert done.returncode == 0, done.stderr
    assert json.loads(stdout.read_text())["status"] in ("compressed", "pruned")
    assert isinstance(json.loads(out.read_text()), list)
