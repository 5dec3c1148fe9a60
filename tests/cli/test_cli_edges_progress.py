"""The progress line (issue 16 §3): drawn on a terminal, redrawn in place and rate-limited,
erased at the end, silent off a terminal. A fake terminal stream and a fake clock stand in
for the real ones: the tests count redraws, they never time anything."""

from __future__ import annotations

import io
import re
import sys
import threading
from pathlib import Path

import pytest

from hermes_core.cli import main
from hermes_core.cli.progress import ERASE_LINE, Progress

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "coding-session.json"

pytestmark = pytest.mark.usefixtures("isolated_home")


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def _a_real_terminal_type(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm")


def frames(text: str) -> list[str]:
    """Each redraw of the line, without its control codes."""
    return [f.replace(ERASE_LINE, "") for f in text.split("\r") if f.replace(ERASE_LINE, "")]


def test_a_bar_is_redrawn_in_place_at_most_once_an_interval() -> None:
    stream, clock = FakeTerminal(), Clock()
    progress = Progress(stream, clock=clock, interval=0.1, width=100)
    progress.phase("counting tokens", total=1000, unit="messages")
    for i in range(999):
        progress.advance()
        if i == 499:
            clock.now += 0.5  # half way, time has passed: one redraw
    progress.advance()  # the last item always draws: the bar ends at 100%
    drawn = frames(stream.getvalue())
    assert len(drawn) == 3, drawn
    assert drawn[0].startswith("counting tokens [....") and "0/1,000 messages" in drawn[0]
    assert "50%" in drawn[1] and "501/1,000 messages" in drawn[1]
    assert "100%" in drawn[2] and "1,000/1,000 messages" in drawn[2] and "#" * 24 in drawn[2]
    assert "\n" not in stream.getvalue()
    progress.done()
    assert stream.getvalue().endswith("\r" + ERASE_LINE)  # erased: the terminal is clean


def test_a_step_without_a_total_shows_a_spinner_and_its_seconds() -> None:
    stream, clock = FakeTerminal(), Clock()
    progress = Progress(stream, clock=clock, interval=0.1, width=100)
    progress.phase("compressing 115,115 tokens")
    progress.tick()  # too soon after the phase: not redrawn
    clock.now += 12.0
    progress.tick()
    drawn = frames(stream.getvalue())
    assert drawn == ["compressing 115,115 tokens | 0s", "compressing 115,115 tokens - 12s"]


def test_the_line_never_wraps_and_shows_controls_as_escapes() -> None:
    stream = FakeTerminal()
    progress = Progress(stream, clock=Clock(), width=30)
    progress.phase("reading /tmp/\x1b[31mevil-and-a-very-long-name.json")
    (line,) = frames(stream.getvalue())
    assert len(line) <= 29 and line.endswith("…")
    assert "\x1b[31m" not in stream.getvalue() and "\\x1b" in line


def test_silent_off_a_terminal_and_on_a_dumb_one(monkeypatch: pytest.MonkeyPatch) -> None:
    piped = io.StringIO()
    progress = Progress(piped)
    progress.phase("counting", total=3)
    progress.advance(3)
    progress.done()
    assert not progress.enabled and piped.getvalue() == ""
    monkeypatch.setenv("TERM", "dumb")
    dumb = FakeTerminal()
    Progress(dumb).phase("counting")
    assert dumb.getvalue() == ""


def test_done_stops_the_ticker_thread() -> None:
    stream = FakeTerminal()
    progress = Progress(stream, clock=Clock())
    progress.phase("compressing")
    progress.start_ticker(every=0.01)
    assert any(t.name == "hermes-context progress" for t in threading.enumerate())
    progress.done()
    assert not any(t.name == "hermes-context progress" for t in threading.enumerate())
    assert stream.getvalue().endswith("\r" + ERASE_LINE)


def test_nothing_drawn_nothing_erased() -> None:
    stream = FakeTerminal()
    Progress(stream).done()
    assert stream.getvalue() == ""


# --- the commands --------------------------------------------------------------------------


def test_tokens_draws_a_bar_over_the_messages_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    code = main(["tokens", str(EXAMPLE)])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith(f"{EXAMPLE}: 129 messages, 112,614 tokens")
    drawn = frames(terminal.getvalue())
    assert any(f.startswith("counting tokens [") for f in drawn), drawn
    assert "129/129 messages" in drawn[-1] and "100%" in drawn[-1]
    assert terminal.getvalue().endswith("\r" + ERASE_LINE)


def test_compress_names_its_steps_and_erases_the_line_before_the_report(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    argv = ["compress", str(EXAMPLE), "--context-length", "32000", "--force"]
    code = main([*argv, "--out", str(tmp_path / "o.json")])
    assert code == 0
    text = terminal.getvalue()
    drawn = frames(text.split("\r" + ERASE_LINE + "compressed:")[0])
    labels = [f.rsplit(" ", 2)[0] for f in drawn]
    assert labels[0].startswith("reading ") and "counting 129 messages" in labels
    # the figure is the compressor's own (estimated or exact, as its cost cache stands)
    assert any(re.fullmatch(r"compressing \d{1,3}(,\d{3})* tokens", label) for label in labels)
    assert any(f.startswith("writing ") for f in drawn)
    assert "\r" + ERASE_LINE + "compressed: 129 -> " in text  # the report starts on a clean line


def test_commands_print_no_progress_when_stderr_is_not_a_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["tokens", str(EXAMPLE)]) == 0
    argv = ["compress", str(EXAMPLE), "--force", "--out", str(tmp_path / "o.json")]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and ERASE_LINE not in err
