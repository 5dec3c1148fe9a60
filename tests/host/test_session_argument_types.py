"""Wrong types through ``Hermes.session()`` and a ``Session``'s list are refused at the call,
saying what was expected (issue 16 §3), and nothing is opened or stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import hermes_core as hc
from hermes_core.errors import InvalidArgument, InvalidMessages


@pytest.fixture
def hermes(tmp_path: Path) -> Any:
    host = hc.Hermes.from_config(None, home=tmp_path)
    yield host
    host.close()


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"workspace": 5}, "workspace must be a folder path"),
        ({"toolsets": 5}, "toolsets must be a collection of toolset names"),
        ({"toolsets": "memory"}, "toolsets must be a collection of toolset names"),
        ({"toolsets": ["memory", 3]}, "toolsets must be a collection of toolset names"),
        ({"skip_memory": "yes"}, "skip_memory must be True or False"),
        ({"on_event": "print"}, "on_event must be a function"),
        ({"message_format": None}, "message_format must be one of 'openai'"),
    ],
)
def test_session_options_of_the_wrong_type(hermes: Any, options: dict[str, Any], said: str) -> None:
    with pytest.raises(InvalidArgument, match=said):
        hermes.session("s1", **options)
    hermes.session("s1").close()  # nothing was left open under that id


@pytest.mark.parametrize("bad", [[1], [{"role": "user", "content": "a"}, 2], [None, {}, {}]])
def test_a_list_holding_a_non_message_is_an_invalid_transcript(hermes: Any, bad: list[Any]) -> None:
    session = hermes.session("s2")
    for call in (session.prepare, session.end_turn):
        with pytest.raises(InvalidMessages, match=r"message \d+: expected a dict, got"):
            call(bad)
    assert session.messages == []
    session.close()
