"""The chat client against a real loopback server: request shape and failure kinds."""

from __future__ import annotations

import subprocess
import sys

import pytest
from fake_openai import (
    FakeLLM,
    Step,
    answer,
    disconnect,
    hang,
    http_error,
    raw,
    truncated,
    unused_port,
)

from hermes_core.errors import HermesError
from hermes_core.llm import (
    ChatClient,
    ChatEndpoint,
    LLMError,
    aborts,
    cooldown_kind,
    retry_on_main_model,
)

KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]


def client_for(
    llm: FakeLLM, *, key_env: str = "", environ: dict[str, str] | None = None, timeout: float = 2.0
) -> ChatClient:
    endpoint = ChatEndpoint(llm.base_url, "aux-model", key_env, timeout)
    return ChatClient(endpoint, environ=environ or {})


def failure(llm: FakeLLM, *, timeout: float = 2.0) -> LLMError:
    with client_for(llm, timeout=timeout) as client, pytest.raises(LLMError) as caught:
        client.complete(MESSAGES)
    return caught.value


def test_request_shape_and_reply(fake_llm: FakeLLM) -> None:
    fake_llm.script(answer("the summary", model="served-model"))
    with client_for(fake_llm) as client:
        reply = client.complete(MESSAGES)
    assert reply.text == "the summary"
    assert reply.finish_reason == "stop"
    assert reply.model == "served-model"
    assert reply.usage["prompt_tokens"] == 10
    (request,) = fake_llm.requests
    assert request.path == "/v1/chat/completions"
    assert request.json == {"model": "aux-model", "messages": MESSAGES}
    assert "max_tokens" not in request.text
    assert "authorization" not in request.headers
    assert request.headers["content-type"] == "application/json"


def test_trailing_slash_and_temperature(fake_llm: FakeLLM) -> None:
    endpoint = ChatEndpoint(fake_llm.base_url + "/", "m")
    with ChatClient(endpoint, environ={}) as client:
        client.complete(MESSAGES, temperature=0.2)
    (request,) = fake_llm.requests
    assert request.path == "/v1/chat/completions"
    assert request.json["temperature"] == 0.2


def test_authorization_only_when_the_variable_is_set(fake_llm: FakeLLM) -> None:
    client_for(fake_llm, key_env="AUX_KEY", environ={"AUX_KEY": KEY}).complete(MESSAGES)
    client_for(fake_llm, key_env="AUX_KEY", environ={}).complete(MESSAGES)
    client_for(fake_llm, key_env="AUX_KEY", environ={"AUX_KEY": "  "}).complete(MESSAGES)
    with_key, unset, blank = fake_llm.requests
    assert with_key.headers["authorization"] == f"Bearer {KEY}"
    assert "authorization" not in unset.headers
    assert "authorization" not in blank.headers


def test_key_never_in_errors_or_repr(fake_llm: FakeLLM) -> None:
    odd_key = "not-a-known-shape-but-secret-12345"
    fake_llm.script(http_error(401, f"invalid key {KEY} / {odd_key}"))
    environ = {"AUX_KEY": odd_key}
    client = ChatClient(ChatEndpoint(fake_llm.base_url, "m", "AUX_KEY"), environ=environ)
    with client, pytest.raises(LLMError) as caught:
        client.complete(MESSAGES)
    text = str(caught.value) + repr(caught.value) + repr(client)
    assert KEY not in text and odd_key not in text
    assert "$AUX_KEY" in str(caught.value)
    assert caught.value.kind == "auth"


def test_credentials_in_base_url_are_not_shown() -> None:
    port = unused_port()
    endpoint = ChatEndpoint(f"http://user:hunter2pass@127.0.0.1:{port}/v1", "m", timeout=1)
    with ChatClient(endpoint, environ={}) as client, pytest.raises(LLMError) as caught:
        client.complete(MESSAGES)
    assert "hunter2pass" not in str(caught.value) and "hunter2pass" not in repr(client)


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "bad_request"),
        (401, "auth"),
        (403, "auth"),
        (404, "not_found"),
        (408, "timeout"),
        (413, "bad_request"),
        (429, "rate_limited"),
        (500, "server"),
        (502, "server"),
        (503, "unavailable"),
        (504, "server"),
    ],
)
def test_http_status_kinds(fake_llm: FakeLLM, status: int, kind: str) -> None:
    fake_llm.script(http_error(status, "upstream said no"))
    error = failure(fake_llm)
    assert isinstance(error, HermesError)
    assert (error.kind, error.status) == (kind, status)
    assert f"HTTP {status}" in str(error) and "upstream said no" in str(error)
    assert "aux-model" in str(error)


def test_connection_refused_is_network() -> None:
    endpoint = ChatEndpoint(f"http://127.0.0.1:{unused_port()}/v1", "m", timeout=1)
    with ChatClient(endpoint, environ={}) as client, pytest.raises(LLMError) as caught:
        client.complete(MESSAGES)
    assert caught.value.kind == "network"
    assert caught.value.status is None
    assert "refused" in str(caught.value).lower()


def test_unsupported_scheme_is_network() -> None:
    client = ChatClient(ChatEndpoint("ftp://example.invalid/v1", "m"), environ={})
    with client, pytest.raises(LLMError) as caught:
        client.complete(MESSAGES)
    assert caught.value.kind == "network"


def test_read_timeout(fake_llm: FakeLLM) -> None:
    fake_llm.script(hang(2.0))
    error = failure(fake_llm, timeout=0.2)
    assert error.kind == "timeout"
    assert "0.2 s" in str(error)


@pytest.mark.parametrize(
    ("step", "kind"),
    [
        (raw("{not json"), "malformed"),
        (raw("<html>gateway</html>", content_type="text/html"), "malformed"),
        (raw('{"object": "chat.completion"}'), "malformed"),
        (raw('{"choices": []}'), "malformed"),
        (raw('{"choices": [{"finish_reason": "stop"}]}'), "malformed"),
        (raw('{"error": {"message": "quota exceeded"}}'), "malformed"),
        (raw("[1, 2]"), "malformed"),
        (disconnect(), "malformed"),
        (truncated(), "malformed"),
        (answer(None), "empty"),
        (answer(""), "empty"),
        (answer("  \n "), "empty"),
    ],
)
def test_body_faults(fake_llm: FakeLLM, step: Step, kind: str) -> None:
    fake_llm.script(step)
    assert failure(fake_llm).kind == kind


def test_content_parts_are_joined(fake_llm: FakeLLM) -> None:
    fake_llm.script(answer([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]))
    assert client_for(fake_llm).complete(MESSAGES).text == "ab"


def test_shared_client_is_not_closed(fake_llm: FakeLLM) -> None:
    import httpx

    with httpx.Client() as shared:
        for _ in range(2):
            ChatClient(ChatEndpoint(fake_llm.base_url, "m"), client=shared).close()
        client = ChatClient(ChatEndpoint(fake_llm.base_url, "m"), environ={}, client=shared)
        assert client.complete(MESSAGES).text == "OK"
        assert not shared.is_closed


def test_empty_base_url_is_refused() -> None:
    with pytest.raises(ValueError, match="base_url"):
        ChatClient(ChatEndpoint("", "m"))


@pytest.mark.parametrize(
    ("kind", "retry", "abort", "cooldown"),
    [
        ("not_found", True, False, "other"),
        ("unavailable", True, False, "other"),
        ("timeout", True, False, "timeout"),
        ("malformed", True, False, "other"),
        ("auth", False, True, "other"),
        ("network", False, True, "other"),
        ("rate_limited", False, False, "other"),
        ("server", False, False, "other"),
        ("bad_request", False, False, "other"),
        ("empty", False, False, "other"),
        ("rejected", False, False, "other"),
    ],
)
def test_layer_helpers(kind: str, retry: bool, abort: bool, cooldown: str) -> None:
    assert retry_on_main_model(kind) is retry
    assert aborts(kind) is abort
    assert cooldown_kind(kind) == cooldown


def test_importing_llm_does_not_import_httpx() -> None:
    code = "import sys, hermes_core.llm; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
