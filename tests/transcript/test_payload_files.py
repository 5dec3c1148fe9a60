"""``read_payload`` and ``write_payload``: transcripts in any message format, read and written
with the same checks as ``read_transcript`` and ``write_transcript``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.errors import TranscriptError
from hermes_core.transcript.files import (
    read_payload,
    read_transcript,
    transcript_messages,
    write_payload,
)


def test_objects_come_back_whole_and_lines_as_a_list(tmp_path: Path) -> None:
    request = {"system": "s", "messages": [{"role": "user", "content": "hi"}], "model": "m"}
    (tmp_path / "a.json").write_text(json.dumps(request))
    assert read_payload(tmp_path / "a.json") == request
    responses = {"input": [{"role": "user", "content": "hi"}], "instructions": "be brief"}
    (tmp_path / "r.json").write_text(json.dumps(responses))
    assert read_payload(tmp_path / "r.json") == responses
    lines = '{"role": "user", "content": "a"}\n{"type": "reasoning", "id": "r"}\n'
    (tmp_path / "l.jsonl").write_text(lines)
    assert read_payload(tmp_path / "l.jsonl") == [
        {"role": "user", "content": "a"},
        {"type": "reasoning", "id": "r"},
    ]
    (tmp_path / "one.json").write_text('{"role": "user", "content": "a"}')
    assert read_payload(tmp_path / "one.json") == [{"role": "user", "content": "a"}]


def test_openai_shape_checks_stay_those_of_read_transcript(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text('{"input": []}')
    with pytest.raises(TranscriptError, match='no "messages" key'):
        read_transcript(tmp_path / "r.json")
    with pytest.raises(TranscriptError, match=r"messages\[1\] is a string"):
        transcript_messages({"messages": [{"role": "user", "content": "a"}, "x"]}, "f")
    with pytest.raises(TranscriptError, match="f: got a number"):
        transcript_messages(3, "f")


def test_write_payload_names_what_cannot_be_written_and_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")
    bad = {"system": "s", "messages": [{"role": "user", "content": "a"}, {"x": object()}]}
    with pytest.raises(TranscriptError, match=r'"messages" item 1 is not JSON-serialisable'):
        write_payload(bad, target)
    assert target.read_text() == "old"
    good = {"system": "s", "messages": [{"role": "user", "content": "a"}]}
    write_payload(good, target)
    assert json.loads(target.read_text()) == good
