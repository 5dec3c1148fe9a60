"""Secret shapes: each recognised and redacted, ordinary text left alone, no slow regexes."""

from __future__ import annotations

import time

import pytest

from hermes_core.redact import looks_like_secret, redact

SECRETS = {
    "openai_key": "sk-proj-AbCdEf0123456789AbCdEf0123",
    "stripe_key": "sk_live_51HabcdefGHIJKLmnop",
    "github_token": "ghp_0123456789abcdefABCDEF0123456789",
    "aws_access_key": "AKIAIOSFODNN7EXAMPLE",
    "slack_token": "xoxb-123456789012-abcdefghij",
    "google_api_key": "AIza" + "B" * 35,
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcDEF_123",
    "bearer_token": "Authorization: Bearer abcdefghijklmnopqrstuvwxyz",
    "url_password": "postgres://admin:hunter2@db.example:5432/app",
    "private_key": "-----BEGIN RSA PRIVATE KEY-----",
}

FINE_GRAINED_PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnop"

BENIGN = [
    "Store API keys in environment variables, not code",
    "The task-runner uses sk-learn style pipelines",
    "https://docs.example/guide?token=none",
    "ask the user for the password reset link",
    "git commit 4f3a2b1 fixed the bug",
    "postgres://db.example:5432/app",
]


@pytest.mark.parametrize(("pattern_id", "text"), sorted(SECRETS.items()))
def test_each_shape_is_recognised_and_redacted(pattern_id: str, text: str) -> None:
    assert looks_like_secret(text) == pattern_id
    cleaned = redact(f"before {text} after")
    assert f"[REDACTED:{pattern_id}]" in cleaned
    assert cleaned.startswith("before ") and cleaned.endswith(" after")


@pytest.mark.parametrize("text", BENIGN)
def test_ordinary_text_passes(text: str) -> None:
    assert looks_like_secret(text) is None
    assert redact(text) == text


def test_hostile_input_stays_fast() -> None:
    hostile = ["sk-" + "a" * 100_000, "Bearer " + "x" * 100_000 + "!", "://" + "a:" * 50_000]
    started = time.perf_counter()
    for text in hostile:
        redact(text)
    assert time.perf_counter() - started < 1.0


def test_fine_grained_github_tokens_count_as_github_tokens() -> None:
    assert looks_like_secret(FINE_GRAINED_PAT) == "github_token"
