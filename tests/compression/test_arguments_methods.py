"""The rest of the compressor's public surface checks its arguments too (review 16, 7).

``set_model(5)`` used to fail with ``AttributeError: 'int' object has no attribute
'lower'``, ``set_model("gpt", context_length="5")`` and ``should_compress("5")`` with a
``TypeError`` about ``'<='``, ``note_overflow(None)`` with one about a regex, and
``Compressor(clock=5)`` only at the first ``compress``. Each is now an
:class:`~hermes_core.errors.InvalidArgument` (a HermesError and a TypeError) naming the
argument, what it expects and what it got; ``Session.set_model`` the same, before it changes
anything.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import hermes_core as hc
from hermes_core.config.loader import load_config

MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]


def compressor() -> hc.Compressor:
    return hc.Compressor(context_length=32_000, summarizer="fallback")


CASES: dict[str, tuple[Callable[[], object], str]] = {
    "set_model name int": (
        lambda: compressor().set_model(5),  # type: ignore[arg-type]
        "name must be a model name (a str; '' keeps the configured one), got int 5",
    ),
    "set_model name None": (
        lambda: compressor().set_model(None),  # type: ignore[arg-type]
        "name must be a model name (a str; '' keeps the configured one), got None",
    ),
    "set_model context_length str": (
        lambda: compressor().set_model("gpt-4o", context_length="5"),  # type: ignore[arg-type]
        "context_length must be an int or None, got str '5'",
    ),
    "set_model context_length float": (
        lambda: compressor().set_model("gpt-4o", context_length=5.0),  # type: ignore[arg-type]
        "context_length must be an int or None, got float 5.0",
    ),
    "set_model context_length bool": (
        lambda: compressor().set_model("gpt-4o", context_length=True),
        "context_length must be an int or None, got bool True",
    ),
    "set_model max_tokens str": (
        lambda: compressor().set_model("gpt-4o", max_tokens="5"),  # type: ignore[arg-type]
        "max_tokens must be an int or None, got str '5'",
    ),
    "note_overflow None": (
        lambda: compressor().note_overflow(None),  # type: ignore[arg-type]
        "message must be the provider's error text (a str, e.g. str(exc)), got None",
    ),
    "note_overflow bytes": (
        lambda: compressor().note_overflow(b"too long"),  # type: ignore[arg-type]
        "message must be the provider's error text (a str, e.g. str(exc)), got bytes",
    ),
    "note_overflow exception": (
        lambda: compressor().note_overflow(ValueError("too long")),  # type: ignore[arg-type]
        "got ValueError",
    ),
    "should_compress str": (
        lambda: compressor().should_compress("5"),  # type: ignore[arg-type]
        "prompt_tokens must be an int or None, got str '5'",
    ),
    "should_compress float": (
        lambda: compressor().should_compress(5.0),  # type: ignore[arg-type]
        "prompt_tokens must be an int or None, got float 5.0",
    ),
    "count None": (
        lambda: compressor().count(None),  # type: ignore[arg-type]
        "messages must be a list of message dicts (OpenAI chat format), got None",
    ),
    "Compressor clock": (
        lambda: hc.Compressor(context_length=32_000, clock=5),  # type: ignore[arg-type]
        "clock must be a function returning seconds, got int 5",
    ),
    "Compressor wall_clock": (
        lambda: hc.Compressor(context_length=32_000, wall_clock=5),  # type: ignore[arg-type]
        "wall_clock must be a function returning seconds, got int 5",
    ),
    "Compressor on_event": (
        lambda: hc.Compressor(context_length=32_000, on_event="log"),  # type: ignore[arg-type]
        "on_event must be a function taking an event, or None, got str 'log'",
    ),
    "Compressor hooks": (
        lambda: hc.Compressor(context_length=32_000, hooks={}),  # type: ignore[arg-type]
        "hooks must be a CompressionHooks or None, got dict {}",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_wrong_type_is_an_invalid_argument(case: str, isolated_home: Path) -> None:
    call, expected = CASES[case]
    with pytest.raises(hc.InvalidArgument) as err:
        call()
    assert isinstance(err.value, hc.HermesError) and isinstance(err.value, TypeError)
    assert expected in str(err.value)


def test_a_refused_set_model_changes_nothing() -> None:
    c = compressor()
    before = (c.model, c.context_length, c.max_tokens, c.threshold_tokens)
    with pytest.raises(hc.InvalidArgument):
        c.set_model("gpt-4.1", context_length=1_000_000, max_tokens="1")  # type: ignore[arg-type]
    assert (c.model, c.context_length, c.max_tokens, c.threshold_tokens) == before


def test_the_right_types_still_work() -> None:
    c = compressor()
    c.set_model("gpt-4.1", context_length=1_000_000, max_tokens=32_000)
    assert (c.model, c.context_length, c.max_tokens) == ("gpt-4.1", 1_000_000, 32_000)
    c.set_model("")  # '' keeps the configured model (none here): the window stays
    assert c.context_length == 1_000_000
    assert c.note_overflow("maximum context length is 16385 tokens") == 16_385
    assert c.should_compress() == (True, None)  # the overflow makes it due at once
    assert c.should_compress(None)[0] is True
    assert c.count(MESSAGES) == c.count(tuple(MESSAGES)) > 0
    assert c.set_model.__name__ == "set_model" and "Switch" in (c.set_model.__doc__ or "")


def test_session_set_model_refuses_a_wrong_type_before_changing_anything(
    tmp_path: Path,
) -> None:
    with hc.Hermes(load_config({}, home=tmp_path, environ={})) as host:
        session = host.session("s")
        before = (session.info.model, session.state.model, session.state.context_length)
        with pytest.raises(hc.InvalidArgument, match="name must be a model name"):
            session.set_model(5)  # type: ignore[arg-type]
        with pytest.raises(hc.InvalidArgument, match="context_length must be an int or None"):
            session.set_model("gpt-4o", context_length="5")  # type: ignore[arg-type]
        assert (session.info.model, session.state.model, session.state.context_length) == before
        session.set_model("gpt-4o", context_length=64_000)
        assert session.compressor.context_length == 64_000
        session.close()
