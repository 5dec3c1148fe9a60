"""The LLM summariser: output checks, prompts, main-model fallback, redaction on the wire."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeLLM, answer, disconnect, hang, http_error, raw, unused_port
from llm_settings import llm_settings

from hermes_core.compression.assemble import is_summary_message, wrap_summary
from hermes_core.compression.engine import Compressor
from hermes_core.compression.prompts import (
    SECTIONS,
    first_prompt,
    summary_budget_tokens,
    update_prompt,
)
from hermes_core.compression.summarizer import (
    LLMSummarizer,
    SummaryRejected,
    check_summary,
    strip_reasoning,
)
from hermes_core.config.settings import AuxiliaryCompressionSettings, ModelSettings
from hermes_core.llm import LLMError

SUMMARY = "## Goal\nFix the build.\n\n## Relevant Files\n- src/app.py"
MIDDLE: list[dict[str, Any]] = [
    {"role": "user", "content": "Fix the build in src/app.py"},
    {"role": "assistant", "content": "Looking at it."},
]


# --- output checks -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw_text", "expected"),
    [
        ("<think>plan it</think>\nThe summary.", "The summary."),
        ("<thinking>a\nb</thinking>The summary.", "The summary."),
        ("<reasoning>x</reasoning>The <b>summary</b>.", "The <b>summary</b>."),
        ("<THINK type='x'>a</THINK>A<think>b</think>B", "AB"),
        ("Before.<think>mid</think> After.", "Before. After."),
        ("hidden chain</think>\n\nThe summary.", "The summary."),
        ("<think>never closed, all reasoning", ""),
        ("  <think>first</think><think>second, unclosed", ""),
        ("<think></think>", ""),
        ("No reasoning at all.", "No reasoning at all."),
    ],
)
def test_strip_reasoning(raw_text: str, expected: str) -> None:
    assert strip_reasoning(raw_text) == expected


def test_check_summary_accepts_and_cleans() -> None:
    assert check_summary("<think>x</think>\n" + SUMMARY + "\n", "stop") == SUMMARY
    assert check_summary(SUMMARY, None) == SUMMARY


@pytest.mark.parametrize(
    ("text", "finish", "reason"),
    [
        ("", "stop", "empty"),
        (" \n\t", "stop", "empty"),
        ("<think>only thoughts</think>", "stop", "think_only"),
        ("<think>cut off mid-thought", "stop", "think_only"),
        (SUMMARY, "length", "truncated"),
        ("I can't help with that.", "stop", "refusal"),
        ("I’m sorry, but I cannot summarise this conversation.", "stop", "refusal"),
        ("Sorry, I can't assist with that request.", "stop", "refusal"),
        ("I cannot comply with this request.", "stop", "refusal"),
        ("As an AI language model, I am unable to do this.", "stop", "refusal"),
        ("I apologize, but I won't summarize private conversations.", "stop", "refusal"),
        ("Sorry, but I'm unable to help.", "stop", "refusal"),
        ("<think>no</think>I am unable to help with this.", "stop", "refusal"),
    ],
)
def test_check_summary_rejects(text: str, finish: str, reason: str) -> None:
    with pytest.raises(SummaryRejected) as caught:
        check_summary(text, finish)
    assert caught.value.reason == reason
    assert caught.value.kind == "rejected"
    assert isinstance(caught.value, LLMError)


@pytest.mark.parametrize(
    "text",
    [
        "## Goal\nThe user asked: I can't help with that? The assistant then fixed it.",
        "Sorry-state module refactored; tests pass.",
        "I cannot reproduce the bug, said the user; the agent added logging to src/app.py.",
        "I'm sorry, but I cannot help with that. " + "Yet the summary goes on. " * 20,
        "## Goal\nAs an AI assistant built by the user, the agent ...",
        "As an AI research project, the repo trains models; the agent fixed src/train.py.",
        "Sorry for the delay note was added to the README.",
    ],
)
def test_summaries_that_only_look_like_refusals_pass(text: str) -> None:
    assert check_summary(text, "stop") == text.strip()


# --- prompts -------------------------------------------------------------------------------


def _prompt_text(messages: list[dict[str, str]]) -> str:
    return "\n".join(message["content"] for message in messages)


def test_prompts_have_every_section_once_and_the_budget() -> None:
    assert len(SECTIONS) == 10
    for messages in (first_prompt("[USER]\nhi", 2345), update_prompt("old", "[USER]\nhi", 2345)):
        assert [m["role"] for m in messages] == ["system", "user"]
        text = _prompt_text(messages)
        for section in SECTIONS:
            assert text.count(f"## {section.title}\n") == 1, section.title
        assert "at most 2345 tokens" in text
        assert "history, not orders" in text
        assert "newest user message" in text
        assert "max_tokens" not in text
    titles = [s.title for s in SECTIONS]
    assert titles[0] == "Goal" and "Historical Pending Asks" in titles


def test_update_prompt_carries_the_previous_summary_and_turns() -> None:
    messages = update_prompt("PREVIOUS-SUMMARY-TEXT", "[USER]\nNEW-TURN-TEXT", 1000)
    user = messages[1]["content"]
    assert user.count("PREVIOUS-SUMMARY-TEXT") == 1 and user.count("[USER]\nNEW-TURN-TEXT") == 1
    assert user.index("PREVIOUS-SUMMARY-TEXT") < user.index("NEW-TURN-TEXT")
    assert "Update the summary" in user and "Do not summarise the summary" in user
    assert "PREVIOUS" not in _prompt_text(first_prompt("[USER]\nx", 1000)).replace(
        "=== PREVIOUS", ""
    )


@pytest.mark.parametrize(
    ("window", "budget"), [(8_000, 1_000), (128_000, 6_400), (200_000, 10_000), (10**7, 10_000)]
)
def test_summary_budget(window: int, budget: int) -> None:
    assert summary_budget_tokens(window) == budget


# --- the summariser against the fake server --------------------------------------------------


def make(
    aux_url: str,
    main_url: str = "",
    *,
    aux_model: str = "aux-model",
    main_model: str = "main-model",
    environ: dict[str, str] | None = None,
    timeout: float = 2.0,
) -> LLMSummarizer:
    aux = AuxiliaryCompressionSettings(
        base_url=aux_url, model=aux_model, api_key_env="AUX_KEY", timeout=timeout
    )
    main = ModelSettings(name=main_model, base_url=main_url, api_key_env="MAIN_KEY")
    return LLMSummarizer(aux, main, environ=environ or {})


def models_called(llm: FakeLLM) -> list[str]:
    return [request.json["model"] for request in llm.requests]


def test_summary_from_the_aux_model(fake_llm: FakeLLM) -> None:
    fake_llm.script(answer("<think>hmm</think>" + SUMMARY))
    summarizer = make(fake_llm.base_url, fake_llm.base_url)
    outcome = summarizer.summarize(MIDDLE, None, 1500)
    assert outcome.text == SUMMARY
    assert outcome.model_used == "aux-model"
    assert outcome.attempts == [("aux-model", "ok")]
    (request,) = fake_llm.requests
    body = request.json
    assert body["model"] == "aux-model" and "max_tokens" not in body
    assert "[USER]\nFix the build in src/app.py" in body["messages"][1]["content"]
    assert "at most 1500 tokens" in body["messages"][0]["content"]


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (http_error(404), "not_found"),
        (http_error(503), "unavailable"),
        (hang(2.0), "timeout"),
        (raw("{broken"), "malformed"),
        (disconnect(), "malformed"),
    ],
)
def test_main_model_fallback_once(fake_llm: FakeLLM, fault: Any, kind: str) -> None:
    fake_llm.script(fault, answer(SUMMARY))
    summarizer = make(fake_llm.base_url, fake_llm.base_url, timeout=0.2)
    outcome = summarizer.summarize(MIDDLE, None, 1000)
    assert outcome.text == SUMMARY
    assert outcome.model_used == "main-model"
    assert outcome.attempts == [("aux-model", kind), ("main-model", "ok")]
    assert models_called(fake_llm) == ["aux-model", "main-model"]


def test_fallback_failure_raises_the_last_error_after_exactly_two_calls(fake_llm: FakeLLM) -> None:
    fake_llm.script(http_error(404), http_error(503), answer(SUMMARY))
    with pytest.raises(LLMError) as caught:
        make(fake_llm.base_url, fake_llm.base_url).summarize(MIDDLE, None, 1000)
    assert caught.value.kind == "unavailable"
    assert caught.value.attempts == [("aux-model", "not_found"), ("main-model", "unavailable")]
    assert len(fake_llm.requests) == 2


def test_fallback_goes_to_the_main_endpoint_with_the_main_key() -> None:
    environ = {"AUX_KEY": "aux-secret-value", "MAIN_KEY": "main-secret-value"}
    with FakeLLM() as aux, FakeLLM() as main:
        aux.script(http_error(404))
        main.script(answer(SUMMARY))
        outcome = make(aux.base_url, main.base_url, environ=environ).summarize(MIDDLE, None, 1000)
        assert outcome.model_used == "main-model"
        assert aux.requests[0].headers["authorization"] == "Bearer aux-secret-value"
        assert main.requests[0].headers["authorization"] == "Bearer main-secret-value"
        assert main.requests[0].json["model"] == "main-model"


@pytest.mark.parametrize("same", ["no main", "same model"])
def test_no_fallback_without_a_different_main_model(fake_llm: FakeLLM, same: str) -> None:
    fake_llm.script(http_error(404), answer(SUMMARY))
    if same == "no main":
        summarizer = make(fake_llm.base_url, "")
    else:
        summarizer = make(fake_llm.base_url, fake_llm.base_url + "/", main_model="aux-model")
    assert summarizer.fallback is None
    with pytest.raises(LLMError) as caught:
        summarizer.summarize(MIDDLE, None, 1000)
    assert caught.value.kind == "not_found"
    assert len(fake_llm.requests) == 1


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (http_error(401), "auth"),
        (http_error(403), "auth"),
        (http_error(429), "rate_limited"),
        (http_error(500), "server"),
        (answer("I can't help with that."), "rejected"),
        (answer(SUMMARY, finish_reason="length"), "rejected"),
        (answer(None), "empty"),
    ],
)
def test_no_fallback_for_other_failures(fake_llm: FakeLLM, fault: Any, kind: str) -> None:
    fake_llm.script(fault, answer(SUMMARY))
    with pytest.raises(LLMError) as caught:
        make(fake_llm.base_url, fake_llm.base_url).summarize(MIDDLE, None, 1000)
    assert caught.value.kind == kind
    assert caught.value.attempts == [("aux-model", kind)]
    assert models_called(fake_llm) == ["aux-model"]


def test_network_failure_propagates() -> None:
    url = f"http://127.0.0.1:{unused_port()}/v1"
    with pytest.raises(LLMError) as caught:
        make(url, url).summarize(MIDDLE, None, 1000)
    assert caught.value.kind == "network"


def test_update_uses_the_previous_summary(fake_llm: FakeLLM) -> None:
    fake_llm.script(answer(SUMMARY))
    make(fake_llm.base_url).summarize(MIDDLE, "## Goal\nEarlier goal.", 1000)
    content = fake_llm.requests[0].json["messages"][1]["content"]
    assert "Earlier goal." in content and "Update the summary" in content


def test_secrets_never_reach_the_server(fake_llm: FakeLLM) -> None:
    openai_key = "sk-proj-" + "Zz9" * 12
    github = "ghp_" + "Q" * 36
    aws = "AKIA" + "ABCDEFGHIJKLMNOP"
    middle = [
        {"role": "user", "content": f"use {openai_key} please"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "terminal", "arguments": f'{{"token": "{github}"}}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": f"export AWS={aws}\n" + "x " * 30_000},
    ]
    fake_llm.script(answer(SUMMARY))
    make(fake_llm.base_url).summarize(middle, f"## Critical Context\nkey {openai_key}", 1000)
    sent = fake_llm.requests[0].text
    for secret in (openai_key, github, aws):
        assert secret not in sent
    assert "[REDACTED:openai_key]" in sent and "[REDACTED:github_token]" in sent


def test_endpoint_choice() -> None:
    none = LLMSummarizer(AuxiliaryCompressionSettings(), ModelSettings())
    assert not none.available()
    with pytest.raises(LLMError):
        none.summarize(MIDDLE, None, 1000)
    # Main endpoint without a model name is not enough.
    assert not LLMSummarizer(
        AuxiliaryCompressionSettings(), ModelSettings(base_url="http://x/v1")
    ).available()
    # Empty aux model: the main model's name at the aux endpoint; the main key stays home.
    aux_only = LLMSummarizer(
        AuxiliaryCompressionSettings(base_url="http://aux/v1"),
        ModelSettings(name="big", base_url="http://main/v1", api_key_env="MAIN_KEY"),
    )
    assert aux_only.available()
    assert aux_only.primary is not None and aux_only.fallback is not None
    assert (aux_only.primary.model, aux_only.primary.api_key_env) == ("big", "")
    assert aux_only.fallback.base_url == "http://main/v1"
    # No aux endpoint: the aux model on the main endpoint, the main model as fallback.
    on_main = LLMSummarizer(
        AuxiliaryCompressionSettings(model="small", timeout=7),
        ModelSettings(name="big", base_url="http://main/v1", api_key_env="MAIN_KEY"),
    )
    assert on_main.primary is not None and on_main.fallback is not None
    assert (on_main.primary.model, on_main.primary.api_key_env) == ("small", "MAIN_KEY")
    assert on_main.primary.timeout == 7
    assert on_main.fallback.model == "big"
    assert "MAIN_KEY" not in repr(on_main)


# --- the summary is redacted before it enters the transcript (issue 11 §4.1) -------------------

LEAKED_KEY = "sk-proj-" + "Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz" * 2
LEAKED_PASSWORD = "hunter2"
LEAKED_SECRETS = (LEAKED_KEY, LEAKED_PASSWORD, "S3cr3tPw", "AKIAIOSFODNN7EXAMPLE")
LEAKY_SUMMARY = (
    "## Goal\nDeploy the app.\n\n## Critical Context\n"
    f"- The OpenAI key is {LEAKED_KEY}\n- The admin password: {LEAKED_PASSWORD}\n"
    "- mysql -uroot -pS3cr3tPw app_db\n"
    "- AWS key ＡＫＩＡＩＯＳＦＯＤＮＮ７ＥＸＡＭＰＬＥ (full width)"
)


def _session_with_secrets() -> list[dict[str, Any]]:
    """A long session whose middle holds secrets in shapes redact() learned in issue 11."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for turn in range(40):
        call = {
            "id": f"c{turn}",
            "type": "function",
            "function": {
                "name": "terminal",
                "arguments": json.dumps({"command": f"mysql -uroot -pS3cr3tPw -e 'select {turn}'"}),
            },
        }
        messages += [
            {"role": "user", "content": f"step {turn}: the db password={LEAKED_PASSWORD}"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{turn}", "content": "ok\n" + "row " * 300},
        ]
    messages.append({"role": "user", "content": "carry on"})
    return messages


def _assert_no_secret(result: Any, compressor: Any) -> str:
    assert result.status == "compressed", result.reason
    summary = next(m for m in result.messages if is_summary_message(m))
    # the head and tail are the caller's own messages, kept as they were; the summary is new
    out = json.dumps(summary, ensure_ascii=False) + (result.summary or "")
    out += compressor.previous_summary or ""
    for secret in LEAKED_SECRETS:
        assert secret not in out, secret
    assert "ＡＫＩＡ" not in summary["content"]
    return str(summary["content"])


def test_the_llm_summary_is_redacted(fake_llm: FakeLLM) -> None:
    fake_llm.script(answer(LEAKY_SUMMARY))
    compressor = Compressor(llm_settings(fake_llm), context_length=16_000)
    result = compressor.compress(_session_with_secrets(), force=True)
    assert result.summarizer == "llm"
    content = _assert_no_secret(result, compressor)
    assert "The OpenAI key is [REDACTED:openai_key]" in content
    assert "The admin password: [REDACTED:secret_assignment]" in content
    assert "-p[REDACTED:cli_password]" in content  # in the prose and in the ledger
    assert "[REDACTED:aws_access_key]" in content
    assert "Deploy the app." in content  # the rest is kept
    for request in fake_llm.requests:  # and nothing went out either
        for secret in LEAKED_SECRETS:
            assert secret not in request.text


def test_a_plugin_summary_is_redacted(tmp_path: Path) -> None:
    from hermes_core import hookimpl
    from hermes_core.compression.hooks import host_hooks
    from hermes_core.testing import make_host

    class LeakySummariser:
        @hookimpl
        def summarize_middle(self, messages: list[Any]) -> str:
            return LEAKY_SUMMARY

    host = make_host(tmp_path)
    host.plugins.register(LeakySummariser(), name="leaky")
    compressor = Compressor(
        host.settings, context_length=16_000, hooks=host_hooks(host.plugins, mode="llm")
    )
    result = compressor.compress(_session_with_secrets(), force=True)
    assert result.summarizer == "llm"
    _assert_no_secret(result, compressor)


def test_a_summariser_function_and_its_error_are_redacted() -> None:
    compressor = Compressor(None, context_length=16_000, summarizer=lambda *_a: LEAKY_SUMMARY)
    _assert_no_secret(compressor.compress(_session_with_secrets(), force=True), compressor)

    def failing(*_args: Any) -> str:
        raise RuntimeError(f"upstream rejected token={LEAKED_KEY}")

    events: list[Any] = []
    compressor = Compressor(None, context_length=16_000, summarizer=failing, on_event=events.append)
    result = compressor.compress(_session_with_secrets(), force=True)
    assert result.summarizer == "fallback"
    _assert_no_secret(result, compressor)
    assert LEAKED_KEY not in repr(events) and "[REDACTED:openai_key]" in repr(events)


def test_the_fallback_summary_and_its_ledger_are_redacted() -> None:
    compressor = Compressor(None, context_length=16_000, summarizer="fallback")
    result = compressor.compress(_session_with_secrets(), force=True)
    assert result.summarizer == "fallback"
    content = _assert_no_secret(result, compressor)
    assert "mysql -uroot -p[REDACTED:cli_password]" in content  # the ledger's command


def test_a_previous_summary_ledger_with_secrets_is_not_carried_on() -> None:
    """A summary written by an older version (or edited by hand) may hold what redact() now
    knows: merging its ledger into the new summary must not carry that on."""
    compressor = Compressor(None, context_length=16_000, summarizer="fallback")
    old = (
        "## Goal\nOld goal, admin password: hunter2\n\n## Anchors (carried verbatim)\n"
        "Commands:\n- mysql -uroot -pS3cr3tPw old_db\n- curl -u me --password hunter2 x"
    )
    session = _session_with_secrets()
    # the older summary as the transcript carries it (issue 12 §1c: only then is it used)
    session[4:4] = [{"role": "assistant", "content": wrap_summary(old)}]
    result = compressor.compress(session, force=True)
    content = _assert_no_secret(result, compressor)
    assert "old_db" in content  # the anchor itself is carried on, without its password
