"""The reference format (compression/references.py) and where the compressor writes it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from recall_cases import turn

from hermes_core.compression.engine import Compressor
from hermes_core.compression.images import IMAGE_NOTE, OVERFLOW_IMAGE_NOTE, strip_tool_images
from hermes_core.compression.prune import DUPLICATE_NOTE, TRUNCATED_MARK, prune_tool_results
from hermes_core.compression.references import (
    MAX_REF_CHARS,
    MAX_SPAN_RUNS,
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
        ("²:5", "depth"),
        ("[ref ³:1]", "depth"),
        ("①:2", "depth"),
        ("4,²", "neither a seq"),
        ("٣-٥", "neither a seq"),
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
    assert refs.span_tag(range(3)) == " [ref 2:5-9]"  # 6-8 are not in the view: archived
    assert ArchiveRefs.of([5, 7, 9]).span_tag([0, 2]) == " [ref 5,9]"  # 7 is still in the view


def test_a_wide_range_parses_without_being_expanded() -> None:
    ref = parse_ref("1-999999999999,5")
    assert ref.runs() == [(1, 999_999_999_999)] and ref.text() == "1-999999999999"


def test_a_summary_ref_stays_short_whatever_the_span() -> None:
    """Each earlier pruning gave the span's tool results new rows (10_001+): one run per turn
    before the gaps of archived originals were filled, past MAX_REF_CHARS at 600 turns."""
    seqs: list[int | None] = []
    for n in range(600):
        seqs += [4 * n + 1, 4 * n + 2, 10_001 + n, 4 * n + 4]
    seqs += [5_000, 20_001, None]  # the tail, still in the view (5,000 keeps a gap)
    span = range(len(seqs) - 3)
    tag = ArchiveRefs.of(seqs).span_tag(span)
    assert tag == " [ref 1-2400,10001-10600]"
    assert set(parse_ref(tag.strip()).seqs()) >= {s for s in seqs[:-3] if s is not None}
    # rows of the view scattered through the span: at most MAX_SPAN_RUNS runs, all named
    mixed = [s if i % 7 else 50_000 + i for i, s in enumerate(seqs)]
    inner = [i for i in span if i % 7]
    tag = ArchiveRefs.of(mixed).span_tag(inner)
    named = parse_ref(tag.strip())
    assert len(named.runs()) <= MAX_SPAN_RUNS and len(tag) < 120
    runs = named.runs()
    assert all(any(a <= mixed[i] <= b for a, b in runs) for i in inner if mixed[i])


@given(
    st.lists(st.one_of(st.none(), st.integers(1, 10**12)), min_size=1, max_size=300, unique=True),
    st.data(),
)
def test_span_refs_fit_the_tool_and_name_every_row(seqs: list[int | None], data: Any) -> None:
    span = data.draw(st.sets(st.integers(0, len(seqs) - 1)))
    tag = ArchiveRefs.of(seqs).span_tag(span)
    wanted = {seqs[i] for i in span} - {None}
    if not wanted:
        assert tag == ""
        return
    ref = parse_ref(tag.strip())  # the tool takes it: never too long
    assert len(ref.runs()) <= MAX_SPAN_RUNS
    assert all(any(a <= s <= b for a, b in ref.runs()) for s in wanted)


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
