"""Issue 16 §3: wrong types through the Python API raise a HermesError saying what was
expected and what was given (not a bare ``TypeError`` about ``'<='`` or ``.get``).

A wrong argument is :class:`~hermes_core.errors.InvalidArgument` (a ``TypeError`` too, so
code catching that keeps working); a list holding something that is not a message is an
invalid transcript (:class:`~hermes_core.errors.InvalidMessages`).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import hermes_core as hc

MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]


def compressor() -> hc.Compressor:
    return hc.Compressor(context_length=32_000, summarizer="fallback")


CASES: dict[str, tuple[Callable[[], object], str]] = {
    "compress context_length str": (
        lambda: hc.compress(MESSAGES, context_length="32000"),  # type: ignore[arg-type]
        "context_length must be an int, got str '32000'",
    ),
    "compress context_length float": (
        lambda: hc.compress(MESSAGES, context_length=32000.0),  # type: ignore[arg-type]
        "context_length must be an int, got float 32000.0",
    ),
    "compress context_length bool": (
        lambda: hc.compress(MESSAGES, context_length=True),
        "context_length must be an int, got bool True",
    ),
    "compress max_tokens": (
        lambda: hc.compress(MESSAGES, context_length=32_000, max_tokens="1"),  # type: ignore[arg-type]
        "max_tokens must be an int, got str '1'",
    ),
    "compress messages str": (
        lambda: hc.compress("x", context_length=32_000),  # type: ignore[arg-type]
        "messages must be a list of message dicts (OpenAI chat format), got str 'x'",
    ),
    "compress messages None": (
        lambda: hc.compress(None, context_length=32_000),  # type: ignore[arg-type]
        "messages must be a list of message dicts (OpenAI chat format), got None",
    ),
    "compress one message": (
        lambda: hc.compress(MESSAGES[0], context_length=32_000),  # type: ignore[arg-type]
        "(wrap one message in a list), got dict",
    ),
    "compress config": (
        lambda: hc.compress(MESSAGES, context_length=32_000, config=[1]),  # type: ignore[arg-type]
        "config must be a Settings, a mapping of settings or None, got list [1]",
    ),
    "compress summarizer": (
        lambda: hc.compress(MESSAGES, context_length=32_000, summarizer=3),  # type: ignore[arg-type]
        "summarizer must be 'auto', 'llm', 'fallback', a function or None, got int 3",
    ),
    "compress force": (
        lambda: hc.compress(MESSAGES, context_length=32_000, force="no"),  # type: ignore[arg-type]
        "force must be True or False, got str 'no'",
    ),
    "Compressor context_length": (
        lambda: hc.Compressor(context_length="32000"),  # type: ignore[arg-type]
        "context_length must be an int, got str '32000'",
    ),
    "Compressor model": (
        lambda: hc.Compressor(context_length=32_000, model=4),  # type: ignore[arg-type]
        "model must be a model name (str) or None, got int 4",
    ),
    "Compressor.compress messages": (
        lambda: compressor().compress("x"),  # type: ignore[arg-type]
        "messages must be a list of message dicts",
    ),
    "Compressor.observe messages": (
        lambda: compressor().observe("x"),  # type: ignore[arg-type]
        "messages must be a list of message dicts",
    ),
    "update_from_usage None": (
        lambda: compressor().update_from_usage(None),  # type: ignore[arg-type]
        "usage must be the API response's usage as a mapping ({'prompt_tokens': ...}",
    ),
    "update_from_usage messages": (
        lambda: compressor().update_from_usage({"prompt_tokens": 5}, "x"),  # type: ignore[arg-type]
        "messages must be a list of message dicts",
    ),
    "count_tokens None": (
        lambda: hc.count_tokens(None),  # type: ignore[arg-type]
        "must be a str or a list of message dicts, got None",
    ),
    "to_wire str": (
        lambda: hc.to_wire("x"),  # type: ignore[arg-type]
        "messages must be a list of message dicts, got str 'x'",
    ),
    "to_wire item": (
        lambda: hc.to_wire(["x"]),  # type: ignore[list-item]
        "messages[0] must be a message dict, got str 'x'",
    ),
    "read_transcript int": (
        lambda: hc.read_transcript(3),  # type: ignore[arg-type]
        "source must be a path, '-' (standard input) or an open stream, got int 3",
    ),
    "load_config int": (
        lambda: hc.load_config(3),  # type: ignore[arg-type]
        "the config must be a path to config.yaml, a mapping of settings or None, got int 3",
    ),
    "load_config home": (
        lambda: hc.load_config({}, home=3),  # type: ignore[arg-type]
        "home must be a directory path or None, got int 3",
    ),
    "Hermes.from_config list": (
        lambda: hc.Hermes.from_config([1]),  # type: ignore[arg-type]
        "the config must be a path to config.yaml, a mapping of settings or None, got list",
    ),
    "Hermes dict": (
        lambda: hc.Hermes({}),  # type: ignore[arg-type]
        "config must be a LoadedConfig (use Hermes.from_config(path or dict)), got dict {}",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_wrong_type_is_a_hermes_error_saying_what_was_expected(
    case: str, isolated_home: Path
) -> None:
    call, expected = CASES[case]
    with pytest.raises(hc.HermesError) as err:
        call()
    assert isinstance(err.value, hc.InvalidArgument)
    assert isinstance(err.value, TypeError)  # callers catching TypeError still do
    assert expected in str(err.value)


def test_a_list_holding_a_non_message_is_an_invalid_transcript() -> None:
    with pytest.raises(hc.InvalidMessages) as err:
        hc.compress(["x"], context_length=32_000)  # type: ignore[list-item]
    assert "messages[0]: expected a message dict, got str" in str(err.value)
    assert err.value.problems == ["messages[0]: expected a message dict, got str"]


def test_the_right_types_still_work(isolated_home: Path) -> None:
    result = hc.compress(tuple(MESSAGES), context_length=32_000, summarizer="fallback")
    assert result.status == "unchanged"
    c = compressor()
    c.update_from_usage({"prompt_tokens": 10}, MESSAGES)
    assert c.last_prompt_tokens == 10
    assert hc.to_wire(iter(MESSAGES)) == MESSAGES
    assert hc.read_transcript(io.StringIO('[{"role": "user", "content": "hi"}]')) == MESSAGES
