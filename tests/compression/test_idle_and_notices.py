"""``compression.idle_compact_after_seconds`` (a fake clock, no sleeping) and
``compression.progress_notices`` (``status`` events a chat surface can show)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_core.compression.engine import Compressor
from hermes_core.compression.result import CompressionEvent
from hermes_core.llm import LLMError

DATA = Path(__file__).resolve().parent.parent / "data" / "transcripts"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def transcript() -> list[dict[str, Any]]:
    return json.loads((DATA / "coding-50turns.json").read_text(encoding="utf-8"))


def idle_compressor(seconds: int, clock: Clock, window: int = 200_000) -> Compressor:
    config = {"compression": {"idle_compact_after_seconds": seconds}}
    return Compressor(config, context_length=window, summarizer="fallback", clock=clock)


def test_after_an_idle_gap_half_the_threshold_is_enough() -> None:
    clock = Clock()
    compressor = idle_compressor(300, clock)  # threshold 150,000
    messages = transcript()
    tokens = compressor.observe(messages)
    assert 75_000 <= tokens < 150_000
    assert compressor.should_compress() == (False, None)
    clock.now += 300  # exactly the setting: not more than it
    compressor.observe(messages)
    assert compressor.should_compress() == (False, None)
    clock.now += 301
    compressor.observe(messages)
    assert compressor.should_compress() == (True, None)
    result = compressor.compress(messages)
    assert result.status in ("compressed", "pruned")
    follow_up = [*result.messages, {"role": "user", "content": "next"}]
    compressor.observe(follow_up)
    assert compressor.should_compress() == (False, None)  # the idle trigger was used up


def test_an_idle_gap_does_not_compress_a_small_transcript() -> None:
    clock = Clock()
    compressor = idle_compressor(60, clock, window=1_000_000)  # threshold 500,000
    messages = transcript()
    compressor.observe(messages)
    clock.now += 3_600
    assert compressor.observe(messages) < 250_000
    assert compressor.should_compress() == (False, None)
    assert compressor.compress(messages).status == "unchanged"


def test_a_request_in_between_means_the_cache_is_warm_again() -> None:
    clock = Clock()
    compressor = idle_compressor(300, clock)  # threshold 150,000: half is 75,000
    messages = transcript()
    early = messages[:79]
    compressor.observe(early)
    clock.now += 900
    assert compressor.observe(early) < 75_000  # idle, but under half: sent as it is
    assert compressor.should_compress()[0] is False
    compressor.update_from_usage({"prompt_tokens": compressor.observe(early)})
    assert compressor.observe(messages) >= 75_000  # right after: the cache is warm
    assert compressor.should_compress() == (False, None)


def test_zero_disables_the_idle_trigger() -> None:
    clock = Clock()
    compressor = idle_compressor(0, clock)
    messages = transcript()
    compressor.observe(messages)
    clock.now += 86_400
    compressor.observe(messages)
    assert compressor.should_compress() == (False, None)


def test_idle_time_survives_a_restart() -> None:
    clock, wall = Clock(), Clock()
    config = {"compression": {"idle_compact_after_seconds": 300}}
    compressor = Compressor(
        config, context_length=200_000, summarizer="fallback", clock=clock, wall_clock=wall
    )
    messages = transcript()
    compressor.observe(messages)
    state = compressor.export_state()
    wall.now += 600  # the process was down for ten minutes
    restored = Compressor(
        config, context_length=200_000, summarizer="fallback", clock=Clock(), wall_clock=wall
    )
    restored.restore_state(state)
    restored.observe(messages)
    assert restored.should_compress() == (True, None)


# --- progress notices --------------------------------------------------------------------


def run(notices: bool, **kwargs: Any) -> tuple[Any, list[CompressionEvent]]:
    events: list[CompressionEvent] = []
    config = {"compression": {"progress_notices": notices}}
    compressor = Compressor(config, context_length=32_000, on_event=events.append, **kwargs)
    result = compressor.compress(transcript(), force=True)
    return result, events


def statuses(events: list[CompressionEvent]) -> list[tuple[str, str]]:
    return [(e.data["phase"], e.data["text"]) for e in events if e.kind == "status"]


def test_progress_notices_tell_a_chat_surface_what_happened() -> None:
    result, events = run(True, summarizer="fallback")
    assert result.status == "compressed"
    before, after = f"{result.tokens_before:,}", f"{result.tokens_after:,}"
    assert statuses(events) == [
        ("started", f"Compressing context: {before} tokens…"),
        ("finished", f"Context compressed: {before} -> {after} tokens"),
    ]


def test_a_failed_compression_says_the_conversation_was_kept() -> None:
    def unauthorised(*_args: Any) -> str:
        raise LLMError("HTTP 401: invalid key", kind="auth", status=401)  # layer 4: abort

    result, events = run(True, summarizer=unauthorised)
    assert result.status == "aborted"
    assert statuses(events) == [
        ("started", f"Compressing context: {result.tokens_before:,} tokens…"),
        ("failed", "Compression failed; kept the conversation as it was"),
    ]


def test_nothing_to_compress_ends_the_started_notice() -> None:
    events: list[CompressionEvent] = []
    config = {"compression": {"progress_notices": True}}
    compressor = Compressor(
        config, context_length=4_096, summarizer="fallback", on_event=events.append
    )
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "word " * 4_000}]
    assert compressor.compress(messages).status == "unchanged"
    assert [phase for phase, _text in statuses(events)] == ["started", "skipped"]


def test_without_progress_notices_there_are_no_status_events() -> None:
    result, events = run(False, summarizer="fallback")
    assert result.status == "compressed"
    assert statuses(events) == []
    assert {e.kind for e in events} == {"compression_started", "compression_finished"}
