"""The growth tests' yardstick (tests/support/scaling.py) tells linear from quadratic work by
counting calls, the same on every machine."""

from __future__ import annotations

from scaling import growth, work


def _linear(text: str) -> None:
    for char in text[::100]:
        char.isalpha()


def _quadratic(text: str) -> None:
    steps = len(text) // 1000
    for _ in range(steps):
        for char in text[: steps * 1000 : 1000]:
            char.isalpha()


def test_counting_is_deterministic() -> None:
    text = "a" * 40_000
    assert work(lambda: _linear(text)) == work(lambda: _linear(text)) > 0


def _quadratic_without_calls(text: str) -> None:
    steps = len(text) // 1000
    for _ in range(steps):
        for _ in range(steps):
            pass


def test_a_loop_that_makes_no_call_still_counts() -> None:
    assert growth(_quadratic_without_calls, "a" * 400_000) > 14


def test_linear_work_grows_about_four_times_and_quadratic_about_sixteen() -> None:
    text = "a" * 400_000
    assert 3.5 < growth(_linear, text) < 4.5
    assert growth(_quadratic, text) > 14
