"""A clock a test moves by hand, and a plain text turn of a given size: the host loops of the
compression tests (trigger, frequency limits, cost schedule) are built from them."""

from __future__ import annotations

from typing import Any


class Clock:
    """Monotonic seconds that pass only when a test adds to ``now``."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def text_turn(n: int, phrase: str, repeat: int) -> list[dict[str, Any]]:
    """A user request and the assistant's answer, each ``repeat`` numbered copies of
    ``phrase`` (``{n}`` and ``{k}`` in it are filled in)."""
    words = " ".join(phrase.format(n=n, k=k) for k in range(repeat))
    return [
        {"role": "user", "content": f"Request {n}: {words}"},
        {"role": "assistant", "content": f"Done {n}. {words}"},
    ]
