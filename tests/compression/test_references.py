"""The reference format (compression/references.py) and where the compressor writes it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from recall_cases import turn

from hermes_core.compression.engine import Compressor
from hermes_core.compression.images import IMAGE_NOTE, OVERFLOW_IMAGE_NOTE, strip_tool_images
from hermes_core.compression.prune import DUPLICATE_NOTE, TRUNCATED_MARK, prune_tool_results
from hermes_core.compression.references import (
    MAX_REF_CHARS,
    ArchiveRefs,
    Ref,
    format_ref,
    parse_ref,
    ranges,
    ref_tag,
)
from hermes_core.errors import InvalidArgument
from hermes_core.tokens import get_counter


def test_ranges_and_format() -> None:
    assert ranges([7, 3, 1, 2, 3]) == [(1, 3), (7, 7)]
    assert format_ref(range(120, 182)) == "120-181"
    assert format_ref([*range(120, 182), 300]) == "120-181,300"
    assert format_ref([7], depth=1) == "1:7"
    assert ref_tag([None, 42, None]) == " [ref 42]"
    assert ref_tag([None]) == ""
    with pytest.raises(ValueError):
        format_ref([])


@pytest.mark.parametrize(
    ("text", "depth", "seqs"),
    [
        ("42", 0, [42]),
        ("[ref 42]", 0, [42]),
        (" [ref 1:7] ", 1, [7]),
        ("120-123,300", 0, [120, 121, 122, 123, 300]),
        ("2:5,5,4", 2, [4, 5]),
    ],
)
def test_parse(text: str, depth: int, seqs: list[int]) -> None:
    ref = parse_ref(text)
    assert (ref.depth, ref.seqs()) == (depth, seqs)
    assert parse_ref(ref.text()) == Ref(depth, tuple(ranges(seqs)))


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "empty"),
        ("[ref ]", "empty"),
        ("abc", "neither a seq nor a range"),
        ("0", "seqs start at 1"),
        ("9-3", "runs backwards"),
        ("x:4", "depth"),
        ("1-999999999", "more than"),
        ("1," * MAX_REF_CHARS, "longer than"),
        ("4;DROP TABLE", "neither a seq"),
    ],
)
def test_parse_refuses_bad_input_clearly(text: str, says: str) -> None:
    with pytest.raises(InvalidArgument, match=says) as raised:
        parse_ref(text)
    assert "pass it as printed" in str(raised.value)


def test_parse_refuses_non_text() -> None:
    with pytest.raises(InvalidArgument, match="must be text"):
        parse_ref(42)


def test_archive_refs_checks_its_values() -> None:
    with pytest.raises(InvalidArgument):
        ArchiveRefs.of([0])
    with pytest.raises(InvalidArgument):
        ArchiveRefs.of([1], depth=-1)
    refs = ArchiveRefs.of([5, None, 9], depth=2)
    assert refs.tag(0) == " [ref 2:5]" and refs.tag(1) == "" and refs.tag(99) == ""
    assert refs.span_tag(range(3)) == " [ref 2:5,9]"


def _call(n: int, arguments: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"c{n}", "type": "function", "function": {"name": "run", "arguments": arguments}}
        ],
    }


def _transcript() -> list[dict[str, Any]]:
    body = "\n".join(f"line {i} of a long output" for i in range(60))
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    long_args = json.dumps({"cmd": "x" * 600})
    return [
        {"role": "user", "content": [{"type": "text", "text": "see"}, image]},
        _call(1, long_args),
        {"role": "tool", "tool_call_id": "c1", "content": body},
        _call(2, "{}"),
        {"role": "tool", "tool_call_id": "c2", "content": body},
        {"role": "user", "content": [{"type": "text", "text": "and now"}, image]},
        {"role": "assistant", "content": "ok"},
    ]


def _line(name: str, arguments: Any, result: str, max_chars: int) -> str:
    return f"[{name}] {len(result)} chars"


def test_each_stand_in_names_its_original_row() -> None:
    messages = _transcript()
    refs = ArchiveRefs.of([10, 11, 12, 13, 14, 15, 16])
    out = prune_tool_results(messages, protect_from=5, prune=_line, refs=refs)
    assert out.messages[0]["content"][1]["text"] == IMAGE_NOTE + " [ref 10]"
    arguments = out.messages[1]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(arguments)["cmd"].endswith(TRUNCATED_MARK + " [ref 11]")
    assert out.messages[2]["content"] == DUPLICATE_NOTE + " [ref 12]"
    assert out.messages[4]["content"].endswith(" [ref 14]")
    bare = prune_tool_results(messages, protect_from=5, prune=_line)
    assert "[ref " not in json.dumps(bare.messages)
    assert bare.messages[2]["content"] == DUPLICATE_NOTE


def test_overflow_image_notes_carry_the_ref() -> None:
    messages = _transcript()
    stripped, count = strip_tool_images(messages, tag=ArchiveRefs.of([3] * 7).tag)
    assert count == 1 and stripped[0]["content"][1]["text"] == OVERFLOW_IMAGE_NOTE + " [ref 3]"


def test_the_summary_names_its_span_and_bare_compress_names_nothing() -> None:
    messages = [m for n in range(8) for m in turn(n, 1, 200, False, False)]
    refs = ArchiveRefs.of(range(1, len(messages) + 1))
    made = Compressor(context_length=8_000, summarizer="fallback")
    result = made.compress(messages, force=True, references=refs)
    assert result.status == "compressed"
    summary = next(m for m in result.messages if "END OF CONTEXT SUMMARY" in str(m["content"]))
    tag = summary["content"].rsplit("---", 1)[1]
    middle = parse_ref(tag).seqs()
    assert middle and len(middle) < len(messages)
    plain = Compressor(context_length=8_000, summarizer="fallback").compress(messages, force=True)
    assert "[ref " not in json.dumps(plain.messages)


def test_references_must_match_the_messages() -> None:
    made = Compressor(context_length=8_000, summarizer="fallback")
    with pytest.raises(InvalidArgument, match="one seq"):
        made.compress(_transcript(), force=True, references=ArchiveRefs.of([1]))
    with pytest.raises(InvalidArgument, match="ArchiveRefs"):
        made.compress(_transcript(), force=True, references=[1] * 7)  # type: ignore[arg-type]


def test_a_reference_costs_a_few_tokens() -> None:
    counter = get_counter("gpt-4o", "auto")
    for tag in (" [ref 42]", " [ref 1:7]", " [ref 120-181,300]", " [ref 12345]"):
        assert counter.count_text(tag) <= 9


def test_proactive_pruning_names_the_rows_too() -> None:
    messages = [m for n in range(6) for m in turn(n, 1, 600, False, False)]
    settings = {
        "compression": {"protect_first_n": 0, "proactive_prune_tokens": 1,
                        "proactive_prune_min_reclaim_tokens": 1,
                        "proactive_prune_min_result_chars": 1_000},
    }  # fmt: skip
    refs = ArchiveRefs.of(range(101, 101 + len(messages)))
    made = Compressor(settings, context_length=1_000_000, summarizer="fallback")
    result = made.compress(messages, references=refs)
    assert result.status == "pruned"
    changed = [(i, m) for i, m in enumerate(result.messages) if m is not messages[i]]
    assert changed and all(m["content"].endswith(f" [ref {101 + i}]") for i, m in changed)
