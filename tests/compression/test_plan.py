"""The ``plan`` outlet (``plan_compaction``): keep / drop / shorten marks on the span about
to be summarised are honoured, combined, and never break the transcript, whatever they are."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.compression.assemble import is_summary_message
from hermes_core.compression.engine import Compressor
from hermes_core.compression.guidance import Guidance
from hermes_core.compression.invariants import check_invariants
from hermes_core.compression.plan import MARKS, SHORTEN_CHARS, combine, shorten
from hermes_core.compression.prune import ARGUMENTS_MAX_CHARS
from hermes_core.compression.result import CompressionResult
from hermes_core.config.settings import Settings
from hermes_core.transcript.validation import validate_messages

Message = dict[str, Any]
KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
Answer = Callable[[Sequence[Mapping[str, Any]]], Any]


def transcript(rounds: int = 12, first: int = 0) -> list[Message]:
    """A coding session: each round a request, a ``read_file`` call, its 60-line result and
    a reply. At a 8,000-token window the middle runs from round 0's reply to round 9."""
    messages: list[Message] = [{"role": "system", "content": "You are a coding agent."}]
    for n in range(first, first + rounds):
        messages += [
            {"role": "user", "content": f"Round {n}: fix module_{n}.py. " + "Context. " * 40},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{n}",
                        "type": "function",
                        "function": {
                            "name": "read_file",
                            "arguments": json.dumps({"path": f"src/module_{n}.py"}),
                        },
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": f"call_{n}",
                "content": "\n".join(f"line {k} of module_{n}" for k in range(60)),
            },
            {"role": "assistant", "content": f"Module {n} fixed. " + "Ok. " * 30},
        ]
    return messages


class Run:
    """One forced compaction at an 8,000-token window with a recording summariser and a
    planner that answers what ``answer`` says about the span it is shown."""

    def __init__(self, *answers: Answer, raises: bool = False) -> None:
        self.answers = answers
        self.raises = raises
        self.summarised: list[Message] = []
        self.asked: list[tuple[list[Message], str, str | None]] = []

    def summarize(
        self, messages: Sequence[Mapping[str, Any]], _previous: Any, _budget: int, _ctx: Any
    ) -> str:
        self.summarised = [dict(m) for m in messages]
        return "## Goal\nFix the modules."

    def plan(self, span: Sequence[Mapping[str, Any]], task: str, focus: str | None) -> list[Any]:
        self.asked.append(([dict(m) for m in span], task, focus))
        if self.raises:
            raise RuntimeError(f"planner broke on {KEY}")
        return [answer(span) for answer in self.answers]

    def __call__(
        self,
        messages: list[Message] | None = None,
        *,
        guidance: Guidance | None = None,
        summarizer: Any = None,
        planned: bool = True,
    ) -> CompressionResult:
        compressor = Compressor(
            Settings(), context_length=8_000, summarizer=summarizer or self.summarize
        )
        if planned:
            compressor.hooks = replace(compressor.hooks, plan=self.plan)
        source = transcript() if messages is None else messages
        result = compressor.compress(source, force=True, guidance=guidance)
        assert result.status in ("compressed", "unchanged"), result.reason
        return result


def at(content_start: str) -> Callable[[Sequence[Mapping[str, Any]]], int]:
    """The span index of the message whose text starts with ``content_start``."""

    def find(span: Sequence[Mapping[str, Any]]) -> int:
        return next(
            i for i, m in enumerate(span) if str(m.get("content") or "").startswith(content_start)
        )

    return find


def marks(**by_start: str) -> Answer:
    """An answer marking the messages that start with each key (``_`` for a space)."""
    return lambda span: {at(k.replace("_", " "))(span): mark for k, mark in by_start.items()}


def texts(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    return [str(m.get("content") or "") for m in messages]


def test_without_a_planner_nothing_changes_and_no_stats() -> None:
    run = Run()
    plain, planned = run(planned=False), Run(lambda span: None)()
    assert "plan" not in plain.stats and "plan" not in planned.stats
    assert texts(plain.messages) == texts(planned.messages)
    assert Compressor(Settings(), context_length=8_000).hooks.plan is None  # standalone: none


def test_keep_stays_verbatim_after_the_summary_with_its_tool_partner() -> None:
    run = Run(lambda span: {at("line 0 of module_3")(span): "keep"})
    result = run()
    out = result.messages
    summary = next(i for i, m in enumerate(out) if is_summary_message(m))
    source = transcript()
    result_at = next(i for i, m in enumerate(source) if m.get("tool_call_id") == "call_3")
    # the result and the call it answers, verbatim, right after the summary
    assert out[summary + 1 : summary + 3] == source[result_at - 1 : result_at + 1]
    assert source[result_at] not in result.archived
    assert not any(m.get("tool_call_id") == "call_3" for m in run.summarised)
    assert result.stats["plan"] == {
        "answers": 1,
        "widened": 1,  # the call came along with its result
        "refused": 0,
        "kept": 2,
        "shortened": 0,
        "dropped": 0,
        "warnings": [],
    }
    assert not validate_messages(out)


def test_drop_leaves_the_summary_input_but_stays_archived() -> None:
    run = Run(marks(Round_4="drop"))
    result = run()
    gone = next(m for m in transcript() if str(m.get("content")).startswith("Round 4:"))
    assert not any(texts([m])[0].startswith("Round 4:") for m in run.summarised)
    assert any(m == gone for m in result.archived)  # still recallable from the archive
    assert any(texts([m])[0].startswith("Round 5:") for m in run.summarised)
    assert result.stats["plan"]["dropped"] == 1


def test_drop_reaches_the_fallback_too() -> None:
    focus = Guidance("module_4.py")
    unplanned = Run()(summarizer="fallback", guidance=focus, planned=False)
    dropped = Run(marks(Round_4="drop"))(summarizer="fallback", guidance=focus)
    assert "Round 4: fix module_4.py" in str(unplanned.summary)
    assert "(no compacted message mentions it)" in str(dropped.summary)


def test_shorten_hands_the_summariser_one_line() -> None:
    unplanned = Run()
    unplanned(planned=False)
    long_user = next(m for m in unplanned.summarised if texts([m])[0].startswith("Round 5:"))
    assert len(long_user["content"]) > SHORTEN_CHARS
    run = Run(marks(Round_5="shorten"))
    run()
    short = next(m for m in run.summarised if texts([m])[0].startswith("Round 5:"))
    assert len(short["content"]) <= SHORTEN_CHARS and "\n" not in short["content"]
    assert run.asked and len(run.summarised) == len(unplanned.summarised)


def test_shorten_uses_the_pruners_line_for_a_tool_result() -> None:
    """The fallback reads the original middle (no pruning there): a shortened result is the
    pruner's line instead of 60 lines."""
    run = Run(lambda span: {at("line 0 of module_5")(span): "shorten"})
    result = run(summarizer="fallback")
    assert result.stats["plan"]["shortened"] == 1
    call = {"function": {"name": "read_file", "arguments": '{"path": "a.py"}'}}
    line = shorten(
        {"role": "tool", "tool_call_id": "c", "content": "x\n" * 500},
        ("read_file", call["function"]["arguments"]),
        lambda name, args, text, n: f"[{name}] read {args['path']}, {len(text)} chars",
    )
    assert line["content"] == "[read_file] read a.py, 1000 chars"
    failing = shorten(
        {"role": "tool", "tool_call_id": "c", "content": "y " * 500},
        ("read_file", "{}"),
        lambda *_: 1 / 0,
    )
    assert failing["content"].startswith("y y") and len(failing["content"]) == SHORTEN_CHARS
    bulky = json.dumps({"path": "a.py", "text": "z" * 2_000})
    message = {
        "role": "assistant",
        "content": "I will write it.",
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "w", "arguments": bulky}}
        ],
    }
    shrunk = shorten(message, None, lambda *_: None)["tool_calls"][0]["function"]["arguments"]
    assert len(bulky) > ARGUMENTS_MAX_CHARS and len(shrunk) < len(bulky)


def test_answers_combine_the_mark_that_keeps_more_wins() -> None:
    warnings: list[str] = []
    combined = combine(
        [{0: "drop", 1: "drop", 2: "shorten"}, {0: "keep", 1: "shorten"}, {2: "drop"}], 3, warnings
    )
    assert combined == {0: "keep", 1: "shorten", 2: "shorten"} and warnings == []
    result_6 = at("line 0 of module_6")
    run = Run(lambda span: {result_6(span): "drop"}, lambda span: {result_6(span): "keep"})
    result = run()
    kept = [m for m in result.messages if m.get("tool_call_id") == "call_6"]
    assert len(kept) == 1 and result.stats["plan"]["kept"] == 2
    assert MARKS == ("keep", "shorten", "drop")


def test_a_group_moves_as_one() -> None:
    """A drop on a call drops its result too; a drop next to a shorten in one group becomes a
    shorten."""
    run = Run(lambda span: {at("line 0 of module_7")(span) - 1: "drop"})
    result = run()
    assert not any(m.get("tool_call_id") == "call_7" for m in run.summarised)
    assert result.stats["plan"]["dropped"] == 2 and result.stats["plan"]["widened"] == 1
    both = Run(
        lambda span: {
            at("line 0 of module_7")(span) - 1: "drop",
            at("line 0 of module_7")(span): "shorten",
        }
    )
    both_result = both()
    assert any(m.get("tool_call_id") == "call_7" for m in both.summarised)
    assert both_result.stats["plan"]["shortened"] == 2


GARBAGE: list[Any] = [
    "keep",
    ["keep", "drop"],
    {"one": "keep"},
    {10_000: "keep"},
    {-1: "drop"},
    {True: "keep"},
    {1: "KEEP"},
    {1: None},
    {1.0: "keep"},
]


class Exploding(Mapping[int, str]):
    def __repr__(self) -> str:  # a stable test id, the same in every xdist worker
        return "Exploding()"

    def __getitem__(self, key: int) -> str:
        raise KeyError(key)

    def __iter__(self) -> Any:
        raise RuntimeError("no")

    def __len__(self) -> int:
        return 1


class HostileMark(str):
    """A plugin's mark whose comparison raises (a str subclass, so it looks like one)."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq boom")

    __hash__ = str.__hash__


class HostileIndex(int):
    def __lt__(self, other: object) -> bool:
        raise RuntimeError("lt boom")

    __le__ = __ge__ = __gt__ = __lt__


HOSTILE = [{0: HostileMark("keep")}, {HostileIndex(0): "keep"}]


@pytest.mark.parametrize("answer", [*GARBAGE, Exploding(), *HOSTILE], ids=repr)
def test_garbage_answers_are_ignored_with_a_warning(answer: Any) -> None:
    plain = Run()(planned=False)
    result = Run(lambda _span: answer)()
    assert result.status == "compressed"
    assert texts(result.messages) == texts(plain.messages)
    assert result.stats["plan"]["warnings"] and result.stats["plan"]["kept"] == 0


def test_a_planner_that_raises_plans_nothing() -> None:
    plain = Run()(planned=False)
    result = Run(raises=True)()
    assert result.status == "compressed"
    assert texts(result.messages) == texts(plain.messages)
    warning = result.stats["plan"]["warnings"][0]
    assert "planner broke on [REDACTED:openai_key]" in warning and KEY not in warning


def test_keeping_everything_changes_nothing() -> None:
    run = Run(lambda span: dict.fromkeys(range(len(span)), "keep"))
    result = run()
    assert result.status == "unchanged" and "would not shrink" in str(result.reason)
    assert result.messages == transcript()


def test_a_keep_that_would_pair_two_user_messages_is_refused() -> None:
    """The tail opens with a user message: a user message kept alone would sit next to it."""
    result = Run(marks(Round_8="keep"))()
    plan = result.stats["plan"]
    assert plan["kept"] == 0 and plan["refused"] == 1
    assert "would sit next to another user message" in plan["warnings"][0]
    kept_whole_round = Run(
        lambda span: {at("Round 8:")(span) + k: "keep" for k in range(4)}  # request to reply
    )()
    assert kept_whole_round.stats["plan"]["kept"] == 4
    assert not validate_messages(kept_whole_round.messages)


def test_an_earlier_summary_is_never_kept() -> None:
    first = Run()(planned=False)
    again = [*first.messages, *transcript(5, first=20)[1:]]
    result = Run(lambda span: {i: "keep" for i, m in enumerate(span) if is_summary_message(m)})(
        again
    )
    assert result.status == "compressed"
    assert result.stats["plan"]["refused"] == 1
    assert sum(1 for m in result.messages if is_summary_message(m)) == 1


def test_the_task_and_the_focus_reach_the_planner() -> None:
    run = Run(lambda _span: None)
    run(guidance=Guidance("module_3.py"))
    span, task, focus = run.asked[0]
    assert task == transcript()[-4]["content"] and task.startswith("Round 11:")
    assert focus == "module_3.py"
    assert span[0]["content"].startswith("Module 0 fixed.")  # the middle, not the head


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(
    st.lists(
        st.dictionaries(
            st.integers(min_value=-2, max_value=40),
            st.sampled_from([*MARKS, "nope"]),
            max_size=12,
        ),
        max_size=3,
    )
)
def test_any_plan_keeps_the_invariants(answers: list[dict[int, str]]) -> None:
    source = transcript()
    result = Run(*[lambda _span, a=a: a for a in answers])(source)
    assert result.status in ("compressed", "unchanged")
    assert not validate_messages(result.messages)
    if result.status == "compressed":
        assert check_invariants(source, result.messages, archived=result.archived) == []
    kept = {json.dumps(m, sort_keys=True) for m in [*result.messages, *result.archived]}
    assert all(json.dumps(m, sort_keys=True) in kept for m in source)  # nothing is lost
