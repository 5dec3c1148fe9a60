"""Tests for Phase 1 pruning (hermes_core.compression.prune and .images).

Every run goes through ``run``/``check``, which also prove the two invariants that matter to the
rest of the pipeline: the input is never mutated, and ``replaced`` holds exactly the changed
indices with their original objects.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.compression.images import IMAGE_NOTE, strip_historical_images
from hermes_core.compression.prune import (
    DUPLICATE_NOTE,
    TRUNCATED_MARK,
    PruneResult,
    proactive_prune,
    prune_tool_results,
    shrink_arguments,
)
from hermes_core.compression.tool_summaries import summarize_tool_result
from hermes_core.tokens import count_tokens, get_counter, message_tokens
from hermes_core.transcript.validation import validate_messages

DATA = Path(__file__).parent.parent / "data" / "transcripts"
Msg = dict[str, Any]
ESTIMATE = get_counter(mode="estimate")


def cost(msg: Mapping[str, Any]) -> int:
    return message_tokens(msg, ESTIMATE)


def call(cid: str, name: str = "terminal", arguments: Any = None) -> Msg:
    args = json.dumps({"command": f"run {cid}"}) if arguments is None else arguments
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def assistant(*calls: Msg, content: Any = None) -> Msg:
    msg: Msg = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = list(calls)
    return msg


def result(cid: str, content: Any) -> Msg:
    return {"role": "tool", "tool_call_id": cid, "content": content, "_meta": {"n": 1}}


def user(content: Any = "go on") -> Msg:
    return {"role": "user", "content": content}


def image(url: str = "https://x.test/a.png") -> Msg:
    return {"type": "image_url", "image_url": {"url": url}}


def text(value: str) -> Msg:
    return {"type": "text", "text": value}


def keep(name: str, args: Mapping[str, Any], result: str, max_chars: int) -> str | None:
    return None


def one_line(name: str, args: Mapping[str, Any], result: str, max_chars: int) -> str:
    return f"[{name}] pruned {len(result)}"


def check(messages: Sequence[Any], res: PruneResult) -> None:
    assert len(res.messages) == len(messages)
    for i, (old, new) in enumerate(zip(messages, res.messages, strict=True)):
        if i in res.replaced:
            assert res.replaced[i] is old
            assert new is not old
            assert new != old
            assert new.keys() == old.keys()
            for key in old.keys() - {"content", "tool_calls"}:
                assert new[key] == old[key], key
        else:
            assert new is old, i


def run(messages: list[Any], **kw: Any) -> PruneResult:
    before = copy.deepcopy(messages)
    kw.setdefault("protect_from", len(messages))
    kw.setdefault("prune", one_line)
    res = prune_tool_results(messages, **kw)
    assert messages == before, "input mutated"
    check(messages, res)
    return res


def long(tag: str, n: int = 300) -> str:
    return (tag + " ") * (n // (len(tag) + 1) + 1)


# --- pass 1: dedup -------------------------------------------------------------------------------


def test_dedup_keeps_the_newest_copy() -> None:
    body = long("same output")
    msgs = [
        user(),
        assistant(call("a")),
        result("a", body),
        assistant(call("b")),
        result("b", body),
        assistant(call("c")),
        result("c", body),
    ]
    res = run(msgs, prune=keep)
    assert res.messages[2]["content"] == DUPLICATE_NOTE
    assert res.messages[4]["content"] == DUPLICATE_NOTE
    assert res.messages[6] is msgs[6]
    assert res.messages[2]["tool_call_id"] == "a"
    assert res.messages[2]["_meta"] == {"n": 1}
    assert res.passes["dedup"] == 2
    assert sorted(res.replaced) == [2, 4]


def test_dedup_against_a_copy_in_the_tail_but_never_inside_it() -> None:
    body = long("log")
    msgs = [
        assistant(call("a")),
        result("a", body),
        assistant(call("b")),
        result("b", body),
        assistant(call("c")),
        result("c", body),
    ]
    res = run(msgs, prune=keep, protect_from=2)
    assert res.messages[1]["content"] == DUPLICATE_NOTE
    assert res.messages[3] is msgs[3]  # protected, though a newer copy exists
    assert res.passes["dedup"] == 1


def test_dedup_negative_cases() -> None:
    short = "x" * 199
    msgs = [
        assistant(call("a"), call("b"), call("c"), call("d")),
        result("a", short),
        result("b", short),
        result("c", long("one")),
        result("d", long("two")),
    ]
    res = run(msgs, prune=keep)
    assert res.replaced == {}
    assert res.passes["dedup"] == 0


def test_dedup_reads_text_parts() -> None:
    body = long("part")
    msgs = [
        assistant(call("a"), call("b")),
        result("a", [text(body)]),
        result("b", body),
    ]
    res = run(msgs, prune=keep)
    assert res.messages[1]["content"] == DUPLICATE_NOTE


# --- pass 2: one-line summaries ------------------------------------------------------------------


def test_summaries_get_name_and_parsed_arguments_of_the_answered_call() -> None:
    seen: list[tuple[str, Any, int]] = []

    def record(name: str, args: Mapping[str, Any], result: str, max_chars: int) -> str:
        seen.append((name, dict(args), max_chars))
        return f"[{name}] summary"

    msgs = [
        user(),
        assistant(call("a", "read_file", json.dumps({"path": "x.py"})), call("b", "odd", "{bad")),
        result("a", long("file body")),
        result("b", long("odd body")),
        result("zz", long("orphan")),
    ]
    res = run(msgs, prune=record, max_summary_chars=120)
    assert seen == [("read_file", {"path": "x.py"}, 120), ("odd", {}, 120), ("", {}, 120)]
    assert res.messages[2]["content"] == "[read_file] summary"
    assert res.passes["summaries"] == 3


def test_summaries_only_before_protect_from_and_only_long_results() -> None:
    msgs = [
        assistant(call("a"), call("b")),
        result("a", long("old", 400)),
        result("b", "y" * 200),  # not longer than min_prune_chars
        assistant(call("c")),
        result("c", long("tail", 400)),
    ]
    res = run(msgs, protect_from=3)
    assert sorted(res.replaced) == [1]
    assert res.messages[4] is msgs[4]


def test_min_prune_chars_is_configurable() -> None:
    msgs = [assistant(call("a")), result("a", "line\n" * 200)]
    assert run(msgs, min_prune_chars=5000).replaced == {}
    assert sorted(run(msgs, min_prune_chars=100).replaced) == [1]


def test_real_summary_of_a_terminal_result() -> None:
    output = {"output": "ok\n" * 80, "exit_code": 0, "error": None}
    msgs = [user(), assistant(call("a")), result("a", json.dumps(output)), user("next")]
    res = run(msgs, prune=summarize_tool_result)
    assert res.messages[2]["content"] == "[terminal] ran `run a` -> exit 0, 80 lines output"


@pytest.mark.parametrize(
    "pruner",
    [
        pytest.param(keep, id="declines"),
        pytest.param(lambda *a: (_ for _ in ()).throw(RuntimeError("boom")), id="raises"),
        pytest.param(lambda *a: "", id="empty"),
        pytest.param(lambda *a: 42, id="not-a-string"),
        pytest.param(lambda n, a, r, m: r + "!", id="longer"),
    ],
)
def test_a_pruner_that_declines_or_fails_keeps_the_original(pruner: Any) -> None:
    msgs = [assistant(call("a")), result("a", "z\n" * 140)]  # 280 chars
    res = run(msgs, prune=pruner)
    assert res.messages[1] is msgs[1]
    assert res.replaced == {}


def test_an_overlong_answer_is_clipped_to_max_summary_chars() -> None:
    msgs = [assistant(call("a")), result("a", "z\n" * 5000)]
    res = run(msgs, prune=lambda *a: "w" * 1000, max_summary_chars=100)
    assert len(res.messages[1]["content"]) == 100


def test_one_line_results_that_already_fit_are_not_resummarised() -> None:
    line = "[terminal] " + "x" * 250  # a previous summary longer than min_prune_chars
    msgs = [assistant(call("a")), result("a", line)]
    assert run(msgs).replaced == {}


def test_results_with_a_kept_image_or_odd_content_are_left_alone() -> None:
    msgs = [
        assistant(call("a"), call("b"), call("c")),
        result("a", [text(long("shot")), image()]),
        result("b", None),
        result("c", [{"type": "text", "text": 5}, text(long("bad"))]),
    ]
    res = run(msgs)
    assert res.replaced == {}


# --- pass 3: oversized arguments ----------------------------------------------------------------


def test_long_argument_values_are_cut_and_stay_valid_json_with_the_same_keys() -> None:
    args = {
        "path": "src/x.py",
        "content": "a" * 5000,
        "nested": {"list": ["b" * 300, 7, None], "flag": True},
    }
    raw = json.dumps(args)
    msgs = [
        user(),
        assistant(call("a", "write_file", raw), call("b", "terminal")),
        result("a", "ok"),
        result("b", "ok"),
    ]
    res = run(msgs)
    new_calls = res.messages[1]["tool_calls"]
    shrunk = json.loads(new_calls[0]["function"]["arguments"])
    assert shrunk.keys() == args.keys()
    assert shrunk["path"] == "src/x.py"
    assert shrunk["content"] == "a" * 200 + TRUNCATED_MARK
    assert shrunk["nested"] == {"list": ["b" * 200 + TRUNCATED_MARK, 7, None], "flag": True}
    assert new_calls[1] is msgs[1]["tool_calls"][1]
    assert new_calls[0]["id"] == "a"
    assert res.passes["arguments"] == 1
    assert validate_messages(res.messages) == []


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("{" + "x" * 600, id="not-json"),
        pytest.param(json.dumps(["y" * 600]), id="json-array"),
        pytest.param(json.dumps({"c": "z" * 400}), id="under-500"),
        pytest.param(json.dumps({f"k{i}": "v" * 150 for i in range(10)}), id="nothing-long"),
    ],
)
def test_arguments_left_alone(raw: str) -> None:
    assert shrink_arguments(raw) is None
    msgs = [assistant(call("a", "write_file", raw)), result("a", "ok")]
    assert run(msgs).replaced == {}


def test_arguments_in_the_tail_are_left_alone() -> None:
    raw = json.dumps({"content": "a" * 5000})
    msgs = [user(), assistant(call("a", "write_file", raw)), result("a", "ok")]
    assert run(msgs, protect_from=1).replaced == {}
    assert sorted(run(msgs, protect_from=2).replaced) == [1]


def test_shrunk_arguments_with_unicode_and_lone_surrogates() -> None:
    assert json.loads(shrink_arguments(json.dumps({"t": "日本語" * 300})) or "")["t"].startswith(
        "日本語"
    )
    lone = '{"t": "' + "\\ud800" * 300 + '"}'
    shrunk = shrink_arguments(lone)
    assert shrunk is not None
    shrunk.encode("utf-8")  # escaped, so it can go on the wire


# --- pass 4: tail pressure ----------------------------------------------------------------------


def tail_transcript(first_bulk: int = 400) -> list[Msg]:
    return [
        user("old"),
        assistant(call("a")),
        result("a", "old\n" * 50),
        user("x" * 8000),  # huge user text in the tail: never touched
        assistant(call("b")),
        result("b", "bulky one\n" * first_bulk),
        assistant(call("c")),
        result("c", "bulky two\n" * 400),
        assistant(call("d"), call("e")),
        result("d", "newest round\n" * 400),
        result("e", "newest round too\n" * 400),
    ]


def test_tail_pressure_demotes_oldest_first_until_it_fits() -> None:
    msgs = tail_transcript(first_bulk=5000)
    tail_cost = sum(cost(m) for m in msgs[3:])
    after_one = tail_cost - cost(msgs[5]) + cost({**msgs[5], "content": "[terminal] pruned 50000"})
    assert tail_cost > 1.5 * after_one
    res = run(msgs, protect_from=3, tail_budget_tokens=after_one, cost=cost)
    assert sorted(res.replaced) == [5]  # one demotion was enough; "c" kept
    assert res.passes["tail"] == 1
    assert res.messages[2] is msgs[2]  # short result before the tail


def test_tail_pressure_never_touches_the_newest_round_or_user_text() -> None:
    msgs = tail_transcript()
    res = run(msgs, protect_from=3, tail_budget_tokens=10, cost=cost)
    assert sorted(res.replaced) == [5, 7]
    assert res.passes["tail"] == 2
    for i in (3, 8, 9, 10):
        assert res.messages[i] is msgs[i]


def test_no_tail_pressure_under_one_and_a_half_budgets_or_without_cost() -> None:
    msgs = tail_transcript()
    tail_cost = sum(cost(m) for m in msgs[3:])
    assert (
        run(msgs, protect_from=3, tail_budget_tokens=int(tail_cost / 1.5) + 1, cost=cost).replaced
        == {}
    )
    assert run(msgs, protect_from=3, tail_budget_tokens=10).replaced == {}


# --- images --------------------------------------------------------------------------------------


def test_images_older_than_the_newest_user_image_are_stripped() -> None:
    msgs = [
        user([text("look"), image("https://x.test/1.png")]),
        assistant(call("a", "browser_screenshot")),
        result("a", [text("shot 1"), image("https://x.test/2.png")]),
        assistant(call("b", "browser_screenshot")),
        result("b", [text("shot 2"), image("https://x.test/3.png")]),
        user([text("and this"), image("https://x.test/4.png"), {"type": "input_image"}]),
        assistant(call("c", "browser_screenshot")),
        result("c", [image("https://x.test/5.png")]),
        assistant(call("d", "browser_screenshot")),
        result("d", [image("https://x.test/6.png")]),
    ]
    res = run(msgs, prune=keep)
    note = text(IMAGE_NOTE)
    assert res.messages[0]["content"] == [text("look"), note]
    assert res.messages[2]["content"] == [text("shot 1"), note]
    assert res.messages[4]["content"] == [text("shot 2"), note]
    assert res.messages[5] is msgs[5]  # the newest user image stays
    assert res.messages[7]["content"] == [note]  # an older tool image
    assert res.messages[9] is msgs[9]  # the newest tool image stays
    assert res.passes["images"] == 4
    assert validate_messages(res.messages) == []


def test_newest_tool_image_older_than_the_newest_user_image_is_stripped_too() -> None:
    msgs = [
        assistant(call("a")),
        result("a", [image()]),
        user([image()]),
    ]
    out, replaced, count = strip_historical_images(msgs)
    assert out[1]["content"] == [text(IMAGE_NOTE)]
    assert list(replaced) == [1] and count == 1
    assert out[2] is msgs[2]


def test_malformed_image_parts_and_images_without_a_newer_user_image_stay() -> None:
    msgs = [
        user([{"type": "image_url", "image_url": "not-a-dict"}]),
        user([image()]),
        assistant(content=[image()]),
    ]
    res = run(msgs)
    assert res.replaced == {}
    assert validate_messages(res.messages) == validate_messages(msgs)


# --- proactive prune -----------------------------------------------------------------------------


def proactive_transcript(size: int) -> list[Msg]:
    big = {"output": "line of output\n" * (size // 15), "exit_code": 0, "error": None}
    return [
        user(),
        assistant(call("a")),
        result("a", json.dumps(big)),
        assistant(call("b")),
        result("b", "small\n" * 1000),  # 6,000 chars: under min_result_chars
        user("next"),
    ]


def test_proactive_prune_only_touches_results_over_the_threshold() -> None:
    msgs = proactive_transcript(40_000)
    before = copy.deepcopy(msgs)
    res = proactive_prune(msgs, protect_from=5, prune=summarize_tool_result, cost=cost)
    assert res is not None
    assert msgs == before
    check(msgs, res)
    assert sorted(res.replaced) == [2]
    assert res.messages[2]["content"].startswith("[terminal] ran `run a` -> exit 0")
    assert res.passes == {"dedup": 0, "summaries": 1, "arguments": 0, "tail": 0, "images": 0}


def test_proactive_prune_needs_enough_reclaim() -> None:
    msgs = proactive_transcript(10_000)  # a few thousand tokens at most
    assert proactive_prune(msgs, protect_from=5, prune=summarize_tool_result, cost=cost) is None
    res = proactive_prune(
        msgs, protect_from=5, prune=summarize_tool_result, cost=cost, min_reclaim_tokens=100
    )
    assert res is not None and sorted(res.replaced) == [2]
    nothing = proactive_prune(msgs, protect_from=2, prune=summarize_tool_result, cost=cost)
    assert nothing is None


def test_proactive_dedup_over_the_threshold() -> None:
    body = "same\n" * 3000
    msgs = [assistant(call("a"), call("b")), result("a", body), result("b", body)]
    res = proactive_prune(msgs, protect_from=2, prune=keep, cost=cost, min_reclaim_tokens=1)
    assert res is not None
    assert res.messages[1]["content"] == DUPLICATE_NOTE


# --- the sample transcripts ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["coding-50turns", "coding-200turns"])
def test_sample_transcripts_stay_valid_and_shrink(name: str) -> None:
    msgs = json.loads((DATA / f"{name}.json").read_text())
    counter = get_counter()
    res = run(msgs, protect_from=len(msgs) - 20, prune=summarize_tool_result)
    assert validate_messages(msgs) == []
    assert validate_messages(res.messages) == []
    before, after = count_tokens(msgs, counter=counter), count_tokens(res.messages, counter=counter)
    # Measured with o200k_base: 50 turns 112,614 -> 30,396 tokens (-73%);
    # 200 turns 453,227 -> 50,158 (-89%). The protected tail is what remains.
    assert after < before * 0.40, (before, after)
    assert res.passes["summaries"] > 30 and res.passes["dedup"] > 10
    for i in range(len(msgs) - 20, len(msgs)):
        if i not in res.replaced:
            assert res.messages[i] is msgs[i]


# --- property: any transcript --------------------------------------------------------------------

unicode_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60
)  # no lone surrogates in generated text; they are covered above
shared_bodies = ["dup body " * 40, "日本語の出力\n" * 60, '{"output": "x\\n", "exit_code": 1}' * 20]


@st.composite
def tool_content(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["text", "huge", "dup", "dup", "none", "parts", "image", "json"]))
    if kind == "text":
        return draw(unicode_text)
    if kind == "huge":
        return draw(unicode_text) * draw(st.integers(50, 400)) + "\n" * draw(st.integers(0, 3))
    if kind == "dup":
        return draw(st.sampled_from(shared_bodies))
    if kind == "none":
        return None
    if kind == "parts":
        return [text(draw(st.sampled_from(shared_bodies))), text(draw(unicode_text))]
    if kind == "image":
        return [text(draw(unicode_text)), image()]
    return json.dumps({"output": draw(unicode_text) * 30, "exit_code": draw(st.integers(-1, 2))})


@st.composite
def arguments(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["small", "big", "bad", "array", "dict"]))
    if kind == "small":
        return json.dumps({"command": draw(unicode_text)})
    if kind == "big":
        return json.dumps({"path": "a.py", "content": draw(unicode_text) * 40 + "x" * 600})
    if kind == "bad":
        return "{" + "x" * draw(st.integers(0, 700))
    if kind == "array":
        return json.dumps(["y" * 700])
    return {"not": "a string"}


@st.composite
def transcripts(draw: st.DrawFn) -> list[Any]:
    msgs: list[Any] = []
    if draw(st.booleans()):
        msgs.append({"role": "system", "content": "sys"})
    counter = 0
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["user", "image_user", "assistant", "calls", "orphan"]))
        if kind == "user":
            msgs.append(user(draw(st.one_of(unicode_text, st.none()))))
        elif kind == "image_user":
            msgs.append(user([text(draw(unicode_text)), image()]))
        elif kind == "assistant":
            msgs.append(assistant(content=draw(st.one_of(unicode_text, st.none()))))
        elif kind == "orphan":
            msgs.append(result("nope", draw(tool_content())))
        else:
            ids = []
            for _ in range(draw(st.integers(1, 3))):
                counter += 1
                ids.append(f"c{counter}")
            name = draw(st.sampled_from(["terminal", "read_file", "web_extract", "x"]))
            msgs.append(assistant(*(call(i, name, draw(arguments())) for i in ids)))
            answered = draw(st.permutations(ids))[: draw(st.integers(0, len(ids)))]
            msgs.extend(result(i, draw(tool_content())) for i in answered)
    return msgs


def raising(*_: Any) -> str:
    raise ValueError("pruner bug")


pruners = st.sampled_from([summarize_tool_result, keep, one_line, raising, lambda *a: "q" * 5000])


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    msgs=transcripts(),
    cut=st.integers(-2, 40),
    prune=pruners,
    budget=st.one_of(st.none(), st.integers(0, 1500)),
)
def test_prune_is_total_pure_and_keeps_the_validators_verdict(
    msgs: list[Any], cut: int, prune: Any, budget: int | None
) -> None:
    problems = validate_messages(msgs)
    pending = validate_messages(msgs, allow_pending_tool_calls=True)
    res = run(msgs, protect_from=cut, prune=prune, tail_budget_tokens=budget, cost=cost)
    assert validate_messages(res.messages) == problems
    assert validate_messages(res.messages, allow_pending_tool_calls=True) == pending
    assert set(res.passes) == {"dedup", "summaries", "arguments", "tail", "images"}
    proactive = proactive_prune(
        msgs, protect_from=cut, prune=prune, cost=cost, min_result_chars=300, min_reclaim_tokens=1
    )
    if proactive is not None:
        check(msgs, proactive)
        assert validate_messages(proactive.messages) == problems


def test_skipped_span_counts_for_dedup_but_is_never_edited() -> None:
    body = long("same output")
    msgs = [
        assistant(call("a")),
        result("a", body),
        assistant(call("b", arguments=json.dumps({"content": "x" * 900}))),
        result("b", body),
        assistant(call("c")),
        result("c", long("other output")),
        user(),
    ]
    res = run(msgs, skip=range(2, 6))
    assert res.messages[1]["content"] == DUPLICATE_NOTE  # its newer copy sits in the span
    assert all(res.messages[i] is msgs[i] for i in range(2, 7))
    assert sorted(res.replaced) == [1]
