"""Every compression setting and event changes what the compressor does (issue 12 §2).

Each test sets one setting to a value other than its default and checks an outcome that the
default would not give (the trigger, the verbatim head or tail, which tool results are pruned,
what an image costs, which events arrive with which data), so a compressor that read the
default instead fails here. Sizes are checked against the compressor's own count rather than
hard-coded, so the tests hold with either token counter (tiktoken or the estimate).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from fake_openai import FakeLLM, http_error

import hermes_core as hc
from hermes_core.compression.assemble import is_summary_message
from hermes_core.compression.hooks import CompressionHooks, builtin_prune
from hermes_core.transcript.messages import is_real_user_message

Message = dict[str, Any]
WINDOW = 10_000  # below 512K the fraction is raised to 0.75: the trigger is 7,500 by default
DEFAULT_TRIGGER = 7_500
BIG_WINDOW = 1_000_000  # no floor: the default 0.50 gives 500,000
IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
PROACTIVE = {  # proactive pruning on, at any size: only the protected tail decides
    "proactive_prune_tokens": 1,
    "proactive_prune_min_result_chars": 100,
    "proactive_prune_min_reclaim_tokens": 1,
}


# --------------------------------------------------------------------------- transcripts


def words(tag: str, n: int) -> str:
    return " ".join(f"{tag}w{j}" for j in range(n))


def system() -> Message:
    return {"role": "system", "content": "You are a careful assistant."}


def chat_turn(i: int, n: int) -> list[Message]:
    return [
        {"role": "user", "content": f"u{i} " + words(f"u{i}", n)},
        {"role": "assistant", "content": f"a{i} " + words(f"a{i}", n)},
    ]


def chat(turns: int, n: int, start: int = 0) -> list[Message]:
    """A plain conversation: user and assistant text of ``n`` words each."""
    out = [system()] if start == 0 else []
    for i in range(start, start + turns):
        out += chat_turn(i, n)
    return out


def log(tag: str, chars: int) -> str:
    lines: list[str] = []
    while sum(len(line) + 1 for line in lines) < chars:
        lines.append(f"{tag} line {len(lines)}: ok {tag}-{len(lines)}-{'x' * 20}")
    return "\n".join(lines)[:chars]


def tool_chat(turns: int, result_chars: Sequence[int], n: int = 10) -> list[Message]:
    """Turns of user ask, a terminal call, its multi-line result, and the assistant's reply;
    result sizes cycle through ``result_chars``."""
    out = [system()]
    for i in range(turns):
        cid = f"call_{i}"
        function = {"name": "terminal", "arguments": json.dumps({"command": f"make step{i}"})}
        call = {"id": cid, "type": "function", "function": function}
        result = log(f"r{i}", result_chars[i % len(result_chars)])
        out += [
            {"role": "user", "content": f"u{i} " + words(f"u{i}", n)},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": cid, "content": result},
            {"role": "assistant", "content": f"a{i} " + words(f"a{i}", n)},
        ]
    return out


def sized_chat(low: int, high: int, n: int = 10) -> list[Message]:
    """A plain conversation whose prompt count lies in ``[low, high)``."""
    count = hc.Compressor(context_length=BIG_WINDOW).count
    messages = chat(1, n)
    while count(messages) < low:
        messages += chat_turn(len(messages) // 2, n)
    assert count(messages) < high, "a turn is larger than the range: choose a smaller n"
    return messages


def image_chat(images: int, text_turns: int = 0) -> list[Message]:
    """User turns that each attach one image, answered in text; then short text turns."""
    out = [system()]
    for i in range(images):
        out.append({"role": "user", "content": [{"type": "text", "text": f"look {i}"}, IMAGE]})
        out.append({"role": "assistant", "content": f"I see picture {i}."})
    return out + chat(text_turns, 10, start=images)


# --------------------------------------------------------------------------- reading results


def config(**compression: Any) -> dict[str, Any]:
    return {"compression": compression}


def forced(messages: list[Message], **compression: Any) -> hc.CompressionResult:
    result = hc.compress(
        messages,
        context_length=WINDOW,
        config=config(**compression),
        summarizer="fallback",
        force=True,
    )
    assert result.status == "compressed", result.reason
    return result


def kept_tail(out: Sequence[Mapping[str, Any]], source: Sequence[Mapping[str, Any]]) -> int:
    """How many of the newest messages came through verbatim."""
    k = 0
    while k < min(len(out), len(source)) and out[-1 - k] == source[-1 - k]:
        k += 1
    return k


def kept_head(out: Sequence[Mapping[str, Any]], source: Sequence[Mapping[str, Any]]) -> int:
    """How many messages after the system message came through verbatim."""
    k = 0
    while 1 + k < min(len(out), len(source)) and out[1 + k] == source[1 + k]:
        k += 1
    return k


def after_summary(out: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    index = next(i for i, m in enumerate(out) if is_summary_message(m))
    return list(out[index + 1 :])


def real_users(messages: Sequence[Mapping[str, Any]]) -> int:
    return sum(1 for m in messages if is_real_user_message(m))


def verbatim_results(out: Sequence[Mapping[str, Any]], source: Sequence[Mapping[str, Any]]) -> int:
    """Tool results left as they were (pruning keeps positions)."""
    assert len(out) == len(source)
    return sum(1 for a, b in zip(out, source, strict=True) if a["role"] == "tool" and a == b)


def proactive(messages: list[Message], **compression: Any) -> hc.CompressionResult:
    result = hc.compress(messages, context_length=WINDOW, config=config(**PROACTIVE, **compression))
    assert result.status == "pruned", result.reason
    assert "proactive" in (result.reason or "")
    return result


# --------------------------------------------------------------------------- threshold


def test_threshold_above_the_small_window_floor_delays_the_trigger() -> None:
    compressor = hc.Compressor(config(threshold=0.8), context_length=WINDOW, summarizer="fallback")
    assert compressor.threshold_tokens == 8_000
    messages = sized_chat(DEFAULT_TRIGGER + 100, 8_000)
    result = compressor.compress(messages)
    assert result.status == "unchanged" and "under the threshold" in (result.reason or "")
    default = hc.compress(messages, context_length=WINDOW, summarizer="fallback")
    assert default.status in ("compressed", "pruned")  # the same transcript is due by default


def test_threshold_below_the_default_on_a_large_window() -> None:
    compressor = hc.Compressor(config(threshold=0.3), context_length=BIG_WINDOW)
    assert compressor.threshold_tokens == 300_000
    assert compressor.should_compress(400_000) == (True, None)
    assert hc.Compressor(context_length=BIG_WINDOW).should_compress(400_000) == (False, None)


# --------------------------------------------------------------------------- model_thresholds


TABLE = {"gpt-4o": 0.6, "gpt-4o-mini": 0.3}


def test_model_thresholds_longest_matching_key_sets_the_trigger() -> None:
    compressor = hc.Compressor(
        config(model_thresholds=TABLE), context_length=BIG_WINDOW, model="acme/gpt-4o-mini-0718"
    )
    assert compressor.threshold_tokens == 300_000
    assert any("model_thresholds['gpt-4o-mini']" in s for s in compressor.threshold_provenance)
    assert compressor.should_compress(400_000) == (True, None)
    other = hc.Compressor(config(model_thresholds=TABLE), context_length=BIG_WINDOW, model="qwen3")
    assert other.threshold_tokens == 500_000  # no key matches: compression.threshold


def test_model_thresholds_apply_after_set_model() -> None:
    compressor = hc.Compressor(
        config(model_thresholds=TABLE), context_length=BIG_WINDOW, model="qwen3"
    )
    compressor.set_model("gpt-4o")
    assert compressor.threshold_tokens == 600_000


def test_model_thresholds_delay_compression_of_a_due_transcript() -> None:
    messages = sized_chat(DEFAULT_TRIGGER + 100, 8_500)
    settings = config(model_thresholds={"tiny": 0.85})
    matched = hc.Compressor(
        settings, context_length=WINDOW, model="tiny-model", summarizer="fallback"
    )
    assert matched.threshold_tokens == 8_500
    assert matched.compress(messages).status == "unchanged"
    unmatched = hc.Compressor(
        settings, context_length=WINDOW, model="big-model", summarizer="fallback"
    )
    assert unmatched.compress(messages).status in ("compressed", "pruned")


# --------------------------------------------------------------------------- threshold_tokens


def test_threshold_tokens_caps_the_trigger_and_compression_runs_below_the_fraction() -> None:
    compressor = hc.Compressor(
        config(threshold_tokens=3_000), context_length=WINDOW, summarizer="fallback"
    )
    assert compressor.threshold_tokens == 3_000
    assert "capped by threshold_tokens: 3,000" in compressor.threshold_provenance
    messages = sized_chat(4_000, 5_000)
    result = compressor.compress(messages)
    assert result.status == "compressed" and result.tokens_after < 3_000
    default = hc.compress(messages, context_length=WINDOW, summarizer="fallback")
    assert default.status == "unchanged"


# --------------------------------------------------------------------------- target_ratio


@pytest.mark.parametrize(("ratio", "longer"), [(0.1, False), (0.25, True)])
def test_target_ratio_sets_the_tail_budget(ratio: float, longer: bool) -> None:
    """Small messages, so the token budget (threshold x target_ratio) leads, not the floor."""
    messages = chat(60, 10)
    tail = kept_tail(forced(messages, target_ratio=ratio).messages, messages)
    default = kept_tail(forced(messages).messages, messages)
    assert tail >= 8  # the message floor still holds
    assert (tail > default) if longer else (tail < default)
    budget = int(DEFAULT_TRIGGER * ratio)
    count = hc.Compressor(context_length=WINDOW).count
    assert count(messages[-tail:]) <= budget + 10  # within the budget (plus the reply priming)


def test_target_ratio_sets_the_tail_that_proactive_pruning_spares() -> None:
    messages = tool_chat(14, [600])
    default = verbatim_results(proactive(messages).messages, messages)
    small = verbatim_results(proactive(messages, target_ratio=0.1).messages, messages)
    large = verbatim_results(proactive(messages, target_ratio=0.3).messages, messages)
    assert small < default < large


# --------------------------------------------------------------------------- protect_first_n


@pytest.mark.parametrize("first_n", [0, 5])
def test_protect_first_n_sets_the_verbatim_head(first_n: int) -> None:
    messages = chat(60, 10)
    result = forced(messages, protect_first_n=first_n)
    assert kept_head(result.messages, messages) == first_n
    assert is_summary_message(result.messages[1 + first_n])
    assert kept_head(forced(messages).messages, messages) == 3  # the default


def test_protect_first_n_decays_after_this_compressors_first_compaction() -> None:
    """The second compaction keeps no head, even of a transcript without a summary (the host
    did not adopt the first result): early turns do not fossilise."""
    messages = chat(60, 10)
    compressor = hc.Compressor(
        config(protect_first_n=4), context_length=WINDOW, summarizer="fallback"
    )
    first = compressor.compress(messages, force=True)
    assert kept_head(first.messages, messages) == 4
    second = compressor.compress(messages, force=True)
    assert second.status == "compressed"
    assert kept_head(second.messages, messages) == 0
    assert is_summary_message(second.messages[1])
    assert messages[1] in second.archived


def test_protect_first_n_decays_on_a_transcript_that_holds_a_summary() -> None:
    """A fresh compressor sees the earlier summary: that transcript was compacted already."""
    messages = chat(60, 10)
    first = forced(messages, protect_first_n=4)
    grown = first.messages + chat(20, 10, start=60)
    second = forced(grown, protect_first_n=4)
    assert kept_head(second.messages, grown) == 0
    assert is_summary_message(second.messages[1])
    assert messages[1] not in second.messages and messages[1] in second.archived


# --------------------------------------------------------------------------- protect_last_n


def big_chat() -> list[Message]:
    """Messages so large that the 1,500-token tail budget holds at most four of them."""
    messages = chat(20, 80)
    count = hc.Compressor(context_length=WINDOW).count
    assert count(messages[-5:]) > DEFAULT_TRIGGER * 0.2
    return messages


def test_protect_last_n_sets_the_tail_floor() -> None:
    messages = big_chat()
    assert kept_tail(forced(messages).messages, messages) == 8  # min(20, 8): the default floor
    assert kept_tail(forced(messages, protect_last_n=6).messages, messages) == 6
    assert kept_tail(forced(messages, protect_last_n=2).messages, messages) < 6  # the budget


def test_protect_last_n_sets_the_tail_that_proactive_pruning_spares() -> None:
    messages = tool_chat(4, [600], n=150)
    count = hc.Compressor(context_length=WINDOW).count
    assert count(messages[-5:]) > DEFAULT_TRIGGER * 0.2  # the budget holds one turn, the floor two
    default = verbatim_results(proactive(messages).messages, messages)
    without_floor = verbatim_results(proactive(messages, protect_last_n=0).messages, messages)
    assert without_floor < default


# --------------------------------------------------------------------------- min_tail_user_messages


def test_min_tail_user_messages_keeps_that_many_user_turns() -> None:
    messages = tool_chat(10, [1_000], n=60)
    default = real_users(after_summary(forced(messages).messages))
    result = forced(messages, min_tail_user_messages=4)
    assert real_users(after_summary(result.messages)) == 4
    assert default < 4
    newest_users = [m for m in messages if is_real_user_message(m)][-4:]
    assert all(m in result.messages for m in newest_users)


def test_min_tail_user_messages_sets_the_tail_that_proactive_pruning_spares() -> None:
    messages = tool_chat(14, [600])
    default = verbatim_results(proactive(messages).messages, messages)
    more = verbatim_results(proactive(messages, min_tail_user_messages=6).messages, messages)
    assert more == 6 > default


# --------------------------------------------------------------------------- min_prune_chars


def results_before_tail(result: hc.CompressionResult, messages: list[Message]) -> list[int]:
    """Sizes of the tool results outside the protected tail (what pruning may shorten)."""
    tail_start = result.stats["window"]["tail_start"]
    return [len(m["content"]) for m in messages[:tail_start] if m["role"] == "tool"]


def test_min_prune_chars_spares_shorter_results() -> None:
    # pruning runs either way; whether it alone ends the compaction is the cache-cost
    # verdict's business (tests/compression/test_cache_cost.py)
    messages = tool_chat(16, [600, 3_000])
    default = hc.compress(messages, context_length=WINDOW, summarizer="fallback")
    sizes = results_before_tail(default, messages)
    assert default.stats["passes"]["summaries"] == len(sizes)  # every result outside the tail
    result = hc.compress(
        messages, context_length=WINDOW, config=config(min_prune_chars=1_000), summarizer="fallback"
    )
    long_ones = [n for n in results_before_tail(result, messages) if n >= 1_000]
    assert 0 < result.stats["passes"]["summaries"] == len(long_ones) < len(sizes)


def test_min_prune_chars_above_every_result_leaves_pruning_nothing_to_do() -> None:
    messages = tool_chat(16, [600, 3_000])
    result = hc.compress(
        messages, context_length=WINDOW, config=config(min_prune_chars=5_000), summarizer="fallback"
    )
    assert result.status == "compressed"  # pruning alone no longer gets it under
    assert result.stats["passes"]["summaries"] == 0


# --------------------------------------------------------------------------- image_tokens


def test_image_tokens_price_each_image_in_the_result() -> None:
    messages = image_chat(4)
    cheap = hc.compress(messages, context_length=WINDOW, config=config(image_tokens=0))
    dear = hc.compress(messages, context_length=WINDOW, config=config(image_tokens=100))
    assert cheap.status == dear.status == "unchanged"
    assert dear.tokens_before - cheap.tokens_before == 4 * 100


def test_image_tokens_price_each_image_in_the_running_count() -> None:
    messages = image_chat(4)
    cheap = hc.Compressor(config(image_tokens=0), context_length=WINDOW)
    dear = hc.Compressor(config(image_tokens=100), context_length=WINDOW)
    assert dear.observe(messages) - cheap.observe(messages) == 4 * 100
    assert dear.count(messages) - cheap.count(messages) == 4 * 100


def test_image_tokens_survive_a_tokenizer_switch() -> None:
    messages = image_chat(4)
    cheap = hc.Compressor(config(image_tokens=0), context_length=WINDOW, model="gpt-4o")
    dear = hc.Compressor(config(image_tokens=100), context_length=WINDOW, model="gpt-4o")
    for compressor in (cheap, dear):
        compressor.observe(messages)
        encoding = compressor.counter.name
        compressor.set_model("gpt-4")  # another encoding: a new running count
        if compressor.counter.name == encoding:
            pytest.skip(f"one encoding for both models ({encoding}): the count is kept")
    assert dear.observe(messages) - cheap.observe(messages) == 4 * 100


@pytest.mark.parametrize(("image_tokens", "due"), [(3_000, True), (0, False)])
def test_image_tokens_decide_whether_compression_triggers(image_tokens: int, due: bool) -> None:
    """Three images: 4,500 tokens at the default price, under the trigger; six: 9,000, over
    (pruning then retires the older images)."""
    images = 3 if due else 6
    messages = image_chat(images, text_turns=10)
    assert hc.Compressor(context_length=WINDOW).count(messages) - 1_500 * images < 2_000
    default = hc.compress(messages, context_length=WINDOW, summarizer="fallback")
    assert (default.status == "unchanged") is due
    result = hc.compress(
        messages,
        context_length=WINDOW,
        config=config(image_tokens=image_tokens),
        summarizer="fallback",
    )
    if due:
        assert result.status != "unchanged", result.reason
    else:  # under the threshold, not merely "nothing to compress"
        assert result.status == "unchanged" and "under the threshold" in (result.reason or "")


# --------------------------------------------------------------------------- events


def kinds(events: list[hc.CompressionEvent], kind: str) -> list[dict[str, Any]]:
    return [e.data for e in events if e.kind == kind]


def test_compression_blocked_is_emitted_once_per_blocked_period() -> None:
    events: list[hc.CompressionEvent] = []
    compressor = hc.Compressor(
        context_length=WINDOW, summarizer="fallback", clock=lambda: 1_000.0, on_event=events.append
    )
    messages = sized_chat(9_000, 11_000)
    # (a clock that stands still: the 300 s until a probe never pass)
    for _ in range(2):  # two compactions that the provider says left it over the threshold
        assert compressor.compress(messages).status == "compressed"
        compressor.update_from_usage({"prompt_tokens": 9_000})
    assert kinds(events, "compression_blocked") == []
    tokens = compressor.observe(messages)
    due, reason = compressor.should_compress()
    assert not due and reason
    assert kinds(events, "compression_blocked") == [{"reason": reason, "tokens": tokens}]
    assert compressor.should_compress() == (False, reason)
    assert compressor.compress(messages).status == "unchanged"
    assert len(kinds(events, "compression_blocked")) == 1  # once per blocked period


def test_compression_failed_reports_the_fallback_layer() -> None:
    def broken(*_args: Any) -> str:
        raise RuntimeError("summariser exploded")

    events: list[hc.CompressionEvent] = []
    compressor = hc.Compressor(context_length=WINDOW, summarizer=broken, on_event=events.append)
    result = compressor.compress(chat(60, 10), force=True)
    assert result.status == "compressed" and result.summarizer == "fallback"
    assert kinds(events, "compression_failed") == [
        {"layer": "fallback", "kind": "other", "reason": "summariser exploded"}
    ]


def test_compression_failed_reports_the_abort_layer(fake_llm: FakeLLM) -> None:
    fake_llm.script(http_error(401))
    settings = hc.Settings()
    settings.auxiliary.compression.base_url = fake_llm.base_url
    settings.auxiliary.compression.model = "aux-model"
    events: list[hc.CompressionEvent] = []
    compressor = hc.Compressor(settings, context_length=WINDOW, on_event=events.append)
    result = compressor.compress(chat(60, 10), force=True)
    assert result.status == "aborted"
    assert kinds(events, "compression_failed") == [{"layer": "abort", "reason": result.reason}]


def test_compression_failed_reports_an_internal_error() -> None:
    def failing_notes(_messages: Sequence[Mapping[str, Any]]) -> list[str]:
        raise ValueError("provider notes broke")

    hooks = CompressionHooks(
        prune=builtin_prune, summarize=None, scan=lambda _t: [], pre_compress=failing_notes
    )
    events: list[hc.CompressionEvent] = []
    compressor = hc.Compressor(context_length=WINDOW, hooks=hooks, on_event=events.append)
    messages = chat(60, 10)
    result = compressor.compress(messages, force=True)
    assert result.status == "aborted" and result.messages == messages
    assert kinds(events, "compression_failed") == [
        {"layer": "internal", "reason": "provider notes broke"}
    ]
