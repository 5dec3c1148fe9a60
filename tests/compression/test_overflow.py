"""The provider said the prompt is too long: compress at once, learn the stated window, and
strip images as the last resort. Error texts are real ones, as providers send them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_core.compression.engine import Compressor
from hermes_core.compression.images import OVERFLOW_IMAGE_NOTE, strip_tool_images
from hermes_core.compression.overflow import is_context_overflow, stated_window
from hermes_core.transcript.validation import validate_messages

DATA = Path(__file__).resolve().parent.parent / "data" / "transcripts"

#: (provider, error text, the window it states or None)
ERRORS: list[tuple[str, str, int | None]] = [
    (
        "openai",
        "This model's maximum context length is 16385 tokens. However, your messages resulted "
        "in 17012 tokens. Please reduce the length of the messages.",
        16_385,
    ),
    (
        "openai-completion",
        "This model's maximum context length is 128000 tokens. However, you requested 130512 "
        "tokens (126512 in the messages, 4000 in the completion). Please reduce the length of "
        "the messages or completion.",
        128_000,
    ),
    (
        "azure-separators",
        "This model's maximum context length is 8,192 tokens, however you requested 9,003 "
        "tokens (9,003 in your prompt; 0 for the completion).",
        8_192,
    ),
    ("anthropic", "prompt is too long: 210000 tokens > 200000 maximum", 200_000),
    (
        "anthropic-json",
        '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too '
        'long: 215,443 tokens > 200,000 maximum"}}',
        200_000,
    ),
    (
        "anthropic-max-tokens",
        "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease "
        "input length or `max_tokens` and try again",
        200_000,
    ),
    (
        "vllm",
        "This model's maximum context length is 4096 tokens. However, you requested 5000 "
        "tokens (4000 in the messages, 1000 in the completion). Please reduce the length of "
        "the messages or completion.",
        4_096,
    ),
    (
        "vllm-decoder",
        "The decoder prompt (length 40961) is longer than the maximum model length of 32768. "
        "Make sure that `max_model_len` is no smaller than the number of text tokens.",
        32_768,
    ),
    (
        "vllm-max-tokens",
        "'max_tokens' or 'max_completion_tokens' is too large: 2048. This model's maximum "
        "context length is 8192 tokens and your request has 7000 input tokens "
        "(2048 > 8192 - 7000).",
        8_192,
    ),
    (
        "llama.cpp",
        "request (9216 tokens) exceeds the available context size (8192 tokens), try increasing it",
        8_192,
    ),
    (
        "llama.cpp-json",
        '{"error":{"code":400,"message":"the request exceeds the available context size, try '
        'increasing it","type":"exceed_context_size_error","n_prompt_tokens":9216,"n_ctx":8192}}',
        8_192,
    ),
    (
        "gemini",
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
        1_048_576,
    ),
    (
        "mistral",
        "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 "
        "maximum context length",
        32_768,
    ),
    (
        "tgi",
        "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 32769. Given: "
        "32000 `inputs` tokens and 2000 `max_new_tokens`",
        32_769,
    ),
    (
        "tgi-inputs",
        "Input validation error: `inputs` must have less than 4096 tokens. Given: 5000",
        4_096,
    ),
    ("context-window", "This request exceeds the context window of 128,000 tokens.", 128_000),
    (
        "openrouter",
        "This endpoint's maximum context length is 200000 tokens. However, you requested about "
        "250123 tokens (242123 of text input, 8000 in the output). Please reduce the length of "
        'either one, or use the "middle-out" transform to compress your prompt automatically.',
        200_000,
    ),
    ("thin-space", "maximum context length is 131\u202f072 tokens", 131_072),
    (
        "openai-responses",
        "Your input exceeds the context window of this model. Please adjust your input and try "
        "again.",
        None,
    ),
    ("bedrock", "Input is too long for requested model.", None),
    ("llama.cpp-old", "the request exceeds the available context size, try increasing it", None),
    ("openai-code", "context_length_exceeded", None),
]


@pytest.mark.parametrize("text, window", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_the_stated_window_is_read_and_the_error_recognised(text: str, window: int | None) -> None:
    assert stated_window(text) == window
    assert is_context_overflow(text)


@pytest.mark.parametrize(
    "text",
    [
        "Rate limit reached for gpt-4o: 30000 tokens per min. Please try again in 2s.",
        "Invalid API key provided",
        "The model `gpt-5-large` does not exist",
        "Request timed out after 600 seconds",
    ],
)
def test_other_errors_are_not_overflows(text: str) -> None:
    assert not is_context_overflow(text)
    assert stated_window(text) is None


def test_a_413_is_an_overflow_whatever_its_text() -> None:
    assert is_context_overflow("Request Entity Too Large", 413)
    assert is_context_overflow("", 413)


def test_implausible_figures_are_not_windows() -> None:
    assert stated_window("maximum context length is 12 tokens") is None
    assert stated_window("maximum context length is 999999999999 tokens") is None


def transcript() -> list[dict[str, Any]]:
    return json.loads((DATA / "coding-50turns.json").read_text(encoding="utf-8"))


def test_an_overflow_compresses_at_once_and_learns_the_window() -> None:
    compressor = Compressor(context_length=200_000, summarizer="fallback")
    assert compressor.threshold_tokens == 150_000
    messages = transcript()
    tokens = compressor.observe(messages)
    assert tokens < 150_000 and compressor.should_compress() == (False, None)
    learned = compressor.note_overflow(ERRORS[0][1])  # "maximum context length is 16385"
    assert learned == 16_385
    assert compressor.context_length == 16_385
    assert compressor.threshold_tokens == int(16_385 * 0.75)
    assert "learned from the provider's overflow error" in compressor.threshold_provenance[0]
    assert compressor.should_compress() == (True, None)
    result = compressor.compress(messages)
    assert result.status == "compressed"
    assert result.tokens_after < compressor.threshold_tokens
    assert validate_messages(result.messages) == []


def test_an_overflow_without_a_window_still_compresses_at_once_but_only_once() -> None:
    compressor = Compressor(context_length=200_000, summarizer="fallback")
    messages = transcript()
    compressor.observe(messages)
    assert compressor.should_compress() == (False, None)  # well under the 150,000 trigger
    assert compressor.note_overflow("Input is too long for requested model.") is None
    assert compressor.threshold_tokens == 150_000
    assert compressor.should_compress() == (True, None)
    result = compressor.compress(messages)
    assert result.status == "compressed"  # cut hard: the real window is not known
    follow_up = [*result.messages, {"role": "user", "content": "go on"}]
    compressor.observe(follow_up)
    assert compressor.should_compress() == (False, None)  # consumed by that compaction


def test_a_successful_request_clears_a_pending_overflow() -> None:
    compressor = Compressor(context_length=128_000, summarizer="fallback")
    compressor.observe(transcript())
    compressor.note_overflow("context_length_exceeded")
    compressor.update_from_usage({"prompt_tokens": 30_000})
    assert compressor.should_compress()[0] is False


def test_the_window_is_only_ever_lowered() -> None:
    compressor = Compressor(context_length=32_000, summarizer="fallback")
    assert compressor.note_overflow("maximum context length is 128000 tokens") is None
    assert compressor.context_length == 32_000 and compressor.threshold_tokens == 24_000
    assert compressor.note_overflow("prompt is too long: 30000 tokens > 20000 maximum") == 20_000
    assert compressor.note_overflow("prompt is too long: 30000 tokens > 25000 maximum") is None
    assert compressor.context_length == 20_000 and compressor.threshold_tokens == 15_000


def test_a_smaller_window_never_raises_the_trigger() -> None:
    """Under 512K windows the fraction rises to 0.75; a learned 500K window of a configured
    600K one would otherwise trigger later (375K) than before (300K)."""
    compressor = Compressor(context_length=600_000, summarizer="fallback")
    assert compressor.threshold_tokens == 300_000
    assert compressor.note_overflow("maximum context length is 500000 tokens") == 500_000
    assert compressor.threshold_tokens == 300_000
    assert "kept at 300,000: a smaller window never raises the trigger" in (
        compressor.threshold_provenance
    )


def test_an_output_reservation_larger_than_the_learned_window_is_dropped() -> None:
    compressor = Compressor(context_length=200_000, max_tokens=65_535, summarizer="fallback")
    assert compressor.note_overflow("maximum context length is 16385 tokens") == 16_385
    assert compressor.threshold_tokens == int(16_385 * 0.75)


def test_disabled_compression_stays_disabled_after_an_overflow() -> None:
    compressor = Compressor(
        {"compression": {"enabled": False}}, context_length=128_000, summarizer="fallback"
    )
    messages = transcript()
    compressor.observe(messages)
    compressor.note_overflow(ERRORS[0][1])
    assert compressor.should_compress() == (False, "compression disabled")
    assert compressor.compress(messages).status == "unchanged"


def test_an_overflow_bypasses_the_anti_thrash_block() -> None:
    compressor = Compressor(context_length=32_000, summarizer="fallback")
    messages = transcript()
    for _ in range(2):
        compressor.compress(messages, force=True)
        compressor.update_from_usage({"prompt_tokens": 40_000})
    assert compressor.should_compress(40_000)[0] is False
    compressor.note_overflow("context_length_exceeded")
    assert compressor.should_compress(40_000) == (True, None)


# --- strip_tool_images ----------------------------------------------------------------------

PNG = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}


def screenshot_turn(i: int) -> list[dict[str, Any]]:
    call = {"id": f"c{i}", "type": "function", "function": {"name": "browser", "arguments": "{}"}}
    return [
        {"role": "user", "content": [{"type": "text", "text": f"look {i}"}, PNG]},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{i}", "content": [{"type": "text", "text": "ok"}, PNG]},
        {"role": "assistant", "content": f"seen {i}"},
    ]


def test_strip_tool_images_keeps_only_the_newest_user_images() -> None:
    messages = [{"role": "system", "content": "s"}, *screenshot_turn(1), *screenshot_turn(2)]
    messages.append({"role": "user", "content": [{"type": "text", "text": "and this?"}, PNG]})
    pristine = json.dumps(messages)
    stripped, count = strip_tool_images(messages)
    assert json.dumps(messages) == pristine  # pure: the input is not touched
    assert count == 4  # two tool screenshots (the newest too) and two older user images
    assert stripped[-1] is messages[-1]  # the message being answered keeps its image
    for before, after in zip(messages[:-1], stripped[:-1], strict=True):
        if isinstance(before.get("content"), list):
            assert after["content"][1] == {"type": "text", "text": OVERFLOW_IMAGE_NOTE}
            assert after["content"][0] == before["content"][0]
        else:
            assert after is before
    assert validate_messages(stripped) == []


def test_strip_tool_images_without_images_changes_nothing() -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    stripped, count = strip_tool_images(messages)
    assert count == 0 and all(a is b for a, b in zip(stripped, messages, strict=True))
