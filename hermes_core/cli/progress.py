"""A one-line progress display for long commands: drawn on a terminal, silent anywhere else.

Why our own: a bar is a few dozen lines (redraw one line with ``\\r``, at most every
``interval`` seconds, erase it at the end), not worth a dependency. Output that is piped or
redirected never sees it, so logs and ``2> file`` stay clean.

Two shapes: a *bar* when the amount of work is known (``phase(label, total=N)`` then
``advance()``), and a *spinner with the elapsed time* when it is not (a phase without a
total, redrawn by ``tick()``; ``start_ticker()`` calls it from a thread while the main
thread is busy in one long call).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

__all__ = ["Progress"]

ERASE_LINE = "\033[K"
SPINNER = "|/-\\"
BAR_WIDTH = 24


class Progress:
    """The progress line of one command. Every method is a no-op when disabled."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        enabled: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        interval: float = 0.1,
        width: int | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = is_terminal(self.stream) if enabled is None else enabled
        self._clock = clock
        self._interval = interval
        self._width = width
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._label = ""
        self._unit = ""
        self._total: int | None = None
        self._done = 0
        self._frame = 0
        self._started = clock()
        self._drawn_at: float | None = None  # when the line was last drawn; None: blank

    # --- the work --------------------------------------------------------------------

    def phase(self, label: str, *, total: int | None = None, unit: str = "") -> None:
        """Start a step of the work (drawn at once): a bar over ``total`` ``unit`` when the
        amount is known, else a spinner with the seconds spent in the step."""
        with self._lock:
            self._label = _printable(label)
            self._total = total if total is None else max(0, total)
            self._unit = unit
            self._done = 0
            self._started = self._clock()
            self._draw(force=True)

    def advance(self, amount: int = 1) -> None:
        """``amount`` more of the phase's total is done; redrawn at most every ``interval``
        (and always at the last item, so a finished bar reads 100%)."""
        if not self.enabled:
            return
        with self._lock:
            self._done += amount
            self._draw(force=self._total is not None and self._done >= self._total)

    def tick(self) -> None:
        """Redraw (rate-limited) so a step without a total still shows it is alive."""
        with self._lock:
            self._frame += 1
            self._draw(force=False)

    def start_ticker(self, every: float = 0.25) -> None:
        """Tick from a daemon thread until :meth:`done`: for one long call that reports
        nothing while it runs."""
        if not self.enabled or self._ticker is not None:
            return

        def loop() -> None:
            while not self._stop.wait(every):
                self.tick()

        self._ticker = threading.Thread(target=loop, name="hermes-context progress", daemon=True)
        self._ticker.start()

    def done(self) -> None:
        """Stop the ticker and erase the line, leaving the terminal as it was."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        with self._lock:
            if self.enabled and self._drawn_at is not None:
                self._write("\r" + ERASE_LINE)
            self._drawn_at = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.done()  # an error message must start on a clean line

    # --- drawing ---------------------------------------------------------------------

    def line(self) -> str:
        """The text of the progress line as it stands (without the redraw codes)."""
        elapsed = max(0.0, self._clock() - self._started)
        if self._total is None:
            spinner = SPINNER[self._frame % len(SPINNER)]
            text = f"{self._label} {spinner} {elapsed:.0f}s"
        else:
            done = min(self._done, self._total)
            share = done / self._total if self._total else 1.0
            filled = int(share * BAR_WIDTH)
            bar = "#" * filled + "." * (BAR_WIDTH - filled)
            unit = f" {self._unit}" if self._unit else ""
            text = (
                f"{self._label} [{bar}] {share:4.0%} {done:,}/{self._total:,}{unit} {elapsed:.0f}s"
            )
        limit = self._columns() - 1  # never wrap: a wrapped line cannot be redrawn with \r
        return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"

    def _draw(self, *, force: bool) -> None:
        if not self.enabled or not self._label:
            return
        now = self._clock()
        if not force and self._drawn_at is not None and now - self._drawn_at < self._interval:
            return
        self._write("\r" + self.line() + ERASE_LINE)
        self._drawn_at = now

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: progress is not worth an error
            self.enabled = False

    def _columns(self) -> int:
        if self._width is not None:
            return self._width
        try:
            return os.get_terminal_size(self.stream.fileno()).columns or 80
        except (OSError, ValueError, AttributeError):
            return 80


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal that understands ``\\r`` and erase-line."""
    try:
        tty = stream.isatty()
    except (OSError, ValueError, AttributeError):
        return False
    return bool(tty) and os.environ.get("TERM") != "dumb"


def _printable(text: str) -> str:
    """A label with control characters shown as escapes (a file name could hold any)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
