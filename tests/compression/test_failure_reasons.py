"""The failure reason of a failed run's one-line stand-in (issue 25): pytest's assertion line
first, else the exception raised, else the first error line; after the test tally."""

from __future__ import annotations

import json

import pytest

from hermes_core.compression.tool_summaries import summarize_tool_result


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("ok no error: all good\nTypeError: unsupported operand", "TypeError: unsupported operand"),
        (
            "note: error: in dependency foo (ignored)\nE   AssertionError: assert 1 == 2\n"
            "1 failed, 2 passed in 0.1s",
            "1 failed, 2 passed; E AssertionError: assert 1 == 2",
        ),
        (
            "Traceback\nKeyError: 1\nDuring handling\nTraceback\nRuntimeError: boom",
            "RuntimeError: boom",
        ),
        ("make: *** [all] Error 2", "make: *** [all] Error 2"),
    ],
)
def test_a_failed_run_names_the_error_that_matters(output: str, reason: str) -> None:
    """pytest's assertion line first, else the exception raised (the last), else the first
    error line; after the test tally."""
    result = json.dumps({"output": output, "exit_code": 1})
    line = summarize_tool_result("terminal", {"command": "run"}, result)
    assert line.endswith(f"FAILED: {reason}"), line
