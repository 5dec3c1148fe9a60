"""What the summariser cost: ``stats["summarizer_usage"]`` and the ``compression_finished``
event, against the loopback OpenAI server (its ``usage`` objects, retries, no usage at all)
and for a summariser that returns only text."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fake_openai import FakeLLM, answer, http_error, raw

from hermes_core.compression.engine import Compressor
from hermes_core.compression.result import CompressionEvent
from hermes_core.compression.summary_usage import SummarizerUsage, record_summarizer_call
from hermes_core.config.settings import Settings
from hermes_core.types import SummaryContext

DATA = Path(__file__).resolve().parent.parent / "data" / "transcripts"
SUMMARY = "## Goal\nAudit the error handling.\n\n## Completed Actions\nRead and patched files."


def transcript() -> list[dict[str, Any]]:
    return json.loads((DATA / "coding-50turns.json").read_text(encoding="utf-8"))


def llm_settings(server: FakeLLM, *, main_model: bool = False) -> Settings:
    settings = Settings()
    settings.auxiliary.compression.base_url = server.base_url
    settings.auxiliary.compression.model = "aux-model"
    settings.auxiliary.compression.timeout = 5.0
    if main_model:  # the layer-1 fallback: same server, another model
        settings.model.base_url = server.base_url
        settings.model.name = "main-model"
    return settings


def sent_messages(server: FakeLLM) -> list[list[dict[str, Any]]]:
    return [r.json["messages"] for r in server.requests if r.path.endswith("/chat/completions")]


def chars(messages: list[dict[str, Any]]) -> int:
    return sum(len(m["content"]) for m in messages)


def compress_with(settings: Settings) -> tuple[Compressor, Any, list[CompressionEvent]]:
    events: list[CompressionEvent] = []
    compressor = Compressor(settings, context_length=32_000, on_event=events.append)
    result = compressor.compress(transcript(), force=True)
    return compressor, result, events


def finished(events: list[CompressionEvent]) -> dict[str, Any]:
    (event,) = [e for e in events if e.kind == "compression_finished"]
    return event.data


def test_the_api_usage_and_our_count_of_the_prompt_are_reported(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        answer(SUMMARY, usage={"prompt_tokens": 9_876, "completion_tokens": 321, "total": 1})
    )
    compressor, result, events = compress_with(llm_settings(fake_llm))
    assert result.status == "compressed" and result.summarizer == "llm"
    (prompt,) = sent_messages(fake_llm)
    assert result.stats["summarizer_usage"] == {
        "calls": 1,
        "input_chars": chars(prompt),
        "input_tokens": compressor.count(prompt),
        "prompt_tokens": 9_876,
        "completion_tokens": 321,
    }
    assert finished(events)["summarizer_usage"] == result.stats["summarizer_usage"]


def test_usage_is_summed_over_the_main_model_retry(fake_llm: FakeLLM) -> None:
    """The aux model answers 200 without choices (malformed: retried on the main model) but
    bills tokens; both requests count, and both usages are summed."""
    billed = {"usage": {"prompt_tokens": 5_000, "completion_tokens": 7}, "model": "aux-model"}
    fake_llm.script(
        raw(json.dumps(billed)),
        answer(SUMMARY, usage={"prompt_tokens": 5_100, "completion_tokens": 400}),
    )
    compressor, result, events = compress_with(llm_settings(fake_llm, main_model=True))
    assert result.summarizer == "llm"
    first, second = sent_messages(fake_llm)
    assert result.stats["summarizer_usage"] == {
        "calls": 2,
        "input_chars": chars(first) + chars(second),
        "input_tokens": compressor.count(first) + compressor.count(second),
        "prompt_tokens": 10_100,
        "completion_tokens": 407,
    }
    assert finished(events)["summarizer_usage"] == result.stats["summarizer_usage"]


def test_a_failed_request_counts_as_a_call_without_usage(fake_llm: FakeLLM) -> None:
    fake_llm.script(http_error(503), answer(SUMMARY, usage={"prompt_tokens": 42}))
    _compressor, result, _events = compress_with(llm_settings(fake_llm, main_model=True))
    usage = result.stats["summarizer_usage"]
    assert usage["calls"] == 2
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (42, None)


def test_an_answer_without_usage_reports_none(fake_llm: FakeLLM) -> None:
    body = {"choices": [{"message": {"role": "assistant", "content": SUMMARY}}]}
    fake_llm.script(raw(json.dumps(body)))
    _compressor, result, events = compress_with(llm_settings(fake_llm))
    usage = result.stats["summarizer_usage"]
    assert usage["calls"] == 1 and usage["input_tokens"] > 1_000
    assert usage["prompt_tokens"] is None and usage["completion_tokens"] is None
    assert finished(events)["summarizer_usage"] == usage


def test_a_summariser_returning_only_text_reports_calls_and_input() -> None:
    handed: list[list[dict[str, Any]]] = []

    def summarize(
        messages: Sequence[Mapping[str, Any]],
        previous: str | None,
        budget: int,
        context: SummaryContext,
    ) -> str:
        assert previous is None
        handed.append([dict(m) for m in messages])
        return SUMMARY

    events: list[CompressionEvent] = []
    compressor = Compressor(context_length=32_000, summarizer=summarize, on_event=events.append)
    result = compressor.compress(transcript(), force=True)
    assert result.summarizer == "llm"
    (middle,) = handed
    text = sum(len(m["content"]) for m in middle if isinstance(m.get("content"), str))
    text += sum(  # the text parts of multi-part contents (images are not text)
        len(part.get("text", ""))
        for m in middle
        if isinstance(m.get("content"), list)
        for part in m["content"]
    )
    arguments = sum(
        len(call["function"]["arguments"]) for m in middle for call in m.get("tool_calls") or ()
    )
    assert result.stats["summarizer_usage"] == {
        "calls": 1,
        "input_chars": text + arguments,
        "input_tokens": compressor.count(middle),
        "prompt_tokens": None,
        "completion_tokens": None,
    }
    assert finished(events)["summarizer_usage"] == result.stats["summarizer_usage"]


def test_no_summariser_call_reports_zero() -> None:
    result = Compressor(context_length=32_000, summarizer="fallback").compress(
        transcript(), force=True
    )
    assert result.summarizer == "fallback"
    assert result.stats["summarizer_usage"] == {
        "calls": 0,
        "input_chars": 0,
        "input_tokens": 0,
        "prompt_tokens": None,
        "completion_tokens": None,
    }


def test_recording_outside_a_compression_is_a_no_op_and_bad_usage_is_ignored() -> None:
    record_summarizer_call([{"role": "user", "content": "x"}], {"prompt_tokens": 5})
    meter = SummarizerUsage(count=lambda messages: 10 * len(messages))
    meter.add(
        [{"role": "user", "content": "abc"}], {"prompt_tokens": -1, "completion_tokens": True}
    )
    meter.add(
        [
            {
                "role": "user",
                "content": None,
                "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            }
        ],
        {"prompt_tokens": 3},
    )
    assert meter.as_dict() == {
        "calls": 2,
        "input_chars": 5,
        "input_tokens": 20,
        "prompt_tokens": 3,
        "completion_tokens": None,
    }
