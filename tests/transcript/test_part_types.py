"""Issue 26 item 9: a content part whose "type" is not a string (a number, a list, an object,
null) is an invalid transcript everywhere, reported or refused with the message index, never
a ``TypeError`` from a set or dict lookup deep inside."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import hermes_core as hc
from hermes_core.cli import main
from hermes_core.compression.images import _is_image_part
from hermes_core.compression.serialize import _part_text
from hermes_core.formats import detect, to_openai
from hermes_core.sessions.recall_pages import segments

BAD_TYPES: list[Any] = [1, ["text"], {"a": 1}, None]
IDS = ["int", "list", "dict", "null"]


def openai(kind: Any) -> list[dict[str, Any]]:
    part = {"type": kind, "text": "hi"}
    return [{"role": "user", "content": "hi"}, {"role": "user", "content": [part]}]


def anthropic(kind: Any) -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": kind, "text": "r"}]}
    return [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
    ]


def responses(kind: Any) -> dict[str, Any]:
    return {"input": [{"role": "user", "content": [{"type": kind, "text": "hi"}]}]}


@pytest.mark.parametrize("kind", BAD_TYPES, ids=IDS)
def test_validate_names_the_message_and_counting_refuses(kind: Any) -> None:
    messages = openai(kind)
    assert detect(messages) is None  # no vote, no TypeError
    problems = hc.validate_messages(messages)
    assert len(problems) == 1 and problems[0].startswith('message 1: content[0] has a "type"')
    with pytest.raises(hc.InvalidMessages, match=r'message 1: .*content\[0\] has a "type"'):
        hc.count_tokens(messages)
    with pytest.raises(hc.InvalidMessages, match=r'message 1: content\[0\] has a "type"'):
        hc.compress(messages, context_length=100_000)


@pytest.mark.parametrize("kind", BAD_TYPES, ids=IDS)
def test_the_other_formats_report_it_in_their_checks(kind: Any) -> None:
    assert detect(anthropic(kind)) == "anthropic"
    with pytest.raises(hc.InvalidMessages) as caught:
        to_openai(anthropic(kind), "anthropic")
    assert any('content[0] has a "type"' in p for p in caught.value.problems)
    assert detect(responses(kind)) == "responses"
    with pytest.raises(hc.InvalidMessages) as caught:
        to_openai(responses(kind), "responses")
    assert any('content[0] has a "type"' in p for p in caught.value.problems)


@pytest.mark.parametrize("kind", BAD_TYPES, ids=IDS)
def test_session_prepare_refuses_it_and_stays_usable(tmp_path: Path, kind: Any) -> None:
    cases: list[tuple[str, Any]] = [
        ("openai", openai(kind)),
        ("anthropic", anthropic(kind)),
        ("responses", responses(kind)["input"]),
    ]
    with hc.Hermes(hc.load_config({}, home=tmp_path, environ={})) as host:
        for fmt, messages in cases:
            session = host.session(f"s-{fmt}", message_format=fmt)
            with pytest.raises(hc.InvalidMessages, match='content\\[0\\] has a "type"'):
                session.prepare(messages)
            assert session.prepare([{"role": "user", "content": "hi"}])  # nothing was kept
            session.close()


@pytest.mark.parametrize("kind", BAD_TYPES, ids=IDS)
def test_the_commands_exit_1_with_the_problem_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: Any
) -> None:
    import json

    path = tmp_path / "t.json"
    path.write_text(json.dumps(openai(kind)))
    home = ["--home", str(tmp_path / "home")]
    assert main(["validate", str(path), *home]) == 1
    out, err = capsys.readouterr()
    assert 'message 1: content[0] has a "type"' in out + err
    for command in ("tokens", "compress"):
        assert main([command, str(path), *home]) == 1
        out, err = capsys.readouterr()
        assert "message 1: " in err and 'content[0] has a "type"' in err
        assert "Traceback" not in err


@pytest.mark.parametrize("kind", BAD_TYPES, ids=IDS)
def test_the_lookups_inside_read_it_as_no_type(kind: Any) -> None:
    part = {"type": kind, "text": "x"}
    assert _is_image_part(part) is False
    assert _part_text(part) == ""
    assert segments({"role": "user", "content": [part]}, "r")  # session_search's pages
