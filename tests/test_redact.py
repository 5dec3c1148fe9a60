"""Secret shapes: each recognised and redacted, ordinary text left alone, no slow regexes."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.compression.serialize import _REDACT_MARGIN
from hermes_core.redact import SECRET_PATTERNS, _may_hold_secret, looks_like_secret, redact

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


# --- new shapes ------------------------------------------------------------------------------

PEM_BODY = "\n".join(["MIIEowIBAAKCAQEAx4Yb" + "Q" * 44] * 5 + ["ZmFrZSBrZXk="])
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
OPENSSH_NO_END = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAABG5vbmU="
LONG_OPENAI = "sk-proj-" + "Ab3dEf9hIjK1mN0pQr5tUv7xYz2" * 3

#: id -> (text, the part that must be gone after redaction)
NEW_SHAPES = {
    "huggingface_token": ("HF_TOKEN is hf_" + "A1b2C3d4" * 4, "A1b2C3d4" * 4),
    "npm_token": ("//registry.npmjs.org/:_authToken=npm_" + "a1B2c3" * 6, "a1B2c3" * 6),
    "slack_webhook": (
        "post to https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/abcdEFGHijklMNOPqrst1234",
        "T0ABCDEF1/B0ABCDEF2",
    ),
    "google_oauth_token": ("access: ya29.a0AfH6SMC" + "x7Y-z_Q" * 10, "a0AfH6SMC"),
    "stripe_webhook_secret": ("STRIPE_WH=whsec_" + "Zx9Yw8Vu7" * 4, "Zx9Yw8Vu7"),
    "private_key": (f"key follows\n{PEM}\ndone", "MIIEowIBAAKCAQEA"),
    "openai_key": ("OPENAI_API_KEY=x" + LONG_OPENAI, LONG_OPENAI[3:]),
}


@pytest.mark.parametrize(("pattern_id", "case"), sorted(NEW_SHAPES.items()))
def test_new_shapes_are_recognised_and_redacted(pattern_id: str, case: tuple[str, str]) -> None:
    text, secret = case
    assert looks_like_secret(text) == pattern_id
    cleaned = redact(text)
    assert secret not in cleaned
    assert f"[REDACTED:{pattern_id}]" in cleaned


def test_anthropic_keys_are_openai_shaped() -> None:
    key = "sk-ant-api03-" + "Ab1_Cd2-Ef3" * 8 + "AA"
    assert looks_like_secret(f"ANTHROPIC_API_KEY={key}") == "openai_key"
    assert redact(f"use {key} now") == "use [REDACTED:openai_key] now"


def test_glued_keys_need_a_long_mixed_body() -> None:
    assert redact(f"x{LONG_OPENAI}") == "x[REDACTED:openai_key]"
    assert redact(f"KEY_{LONG_OPENAI}") == "KEY_[REDACTED:openai_key]"
    for text in [
        "the Kiosk-Mode-2024-Release-Notes-Final-Version page",
        "https://blog.example/how-to-ask-questions-about-your-data-effectively",
        "xsk-short0123456789AB",
    ]:
        assert looks_like_secret(text) is None, text


# --- PEM blocks ------------------------------------------------------------------------------


def test_a_whole_pem_block_goes() -> None:
    cleaned = redact(f"key follows\n{PEM}\ndone")
    assert cleaned == "key follows\n[REDACTED:private_key]\ndone"


@pytest.mark.parametrize(
    "label", ["PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK"]
)
def test_pem_kinds(label: str) -> None:
    block = f"-----BEGIN {label}-----\nVersion: x 1\n\n{PEM_BODY}\n-----END {label}-----"
    assert redact(f"a\n{block}\nb") == "a\n[REDACTED:private_key]\nb"


def test_pem_block_in_json_and_yaml() -> None:
    escaped = PEM.replace("\n", "\\n")
    assert redact(f'{{"key": "{escaped}\\n"}}') == '{"key": "[REDACTED:private_key]\\n"}'
    indented = PEM.replace("\n", "\n  ")
    assert redact(f"tls:\n  key: |\n  {indented}\n  ca: x") == (
        "tls:\n  key: |\n  [REDACTED:private_key]\n  ca: x"
    )


def test_pem_without_end_loses_its_base64_lines() -> None:
    cleaned = redact(f"{OPENSSH_NO_END}\nThen we rotate it.")
    assert cleaned == "[REDACTED:private_key]\nThen we rotate it."
    cut = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,AB12\n\n"
    cut += PEM_BODY + "\n[... 900 chars omitted ...]\ntail"
    assert redact(cut) == "[REDACTED:private_key]\n[... 900 chars omitted ...]\ntail"


# --- secret assignments ----------------------------------------------------------------------

ASSIGNMENTS = [
    ("DB_PASSWORD=hunter2butlonger", "DB_PASSWORD=[R]"),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key = [R]",
    ),
    ('export GITHUB_TOKEN="abc123def456ghi789"', 'export GITHUB_TOKEN="[R]"'),
    ('{"password": "s3cr3t-value", "user": "bob"}', '{"password": "[R]", "user": "bob"}'),
    ("SECRET_KEY: 'xyz-dev-key-42'", "SECRET_KEY: '[R]'"),
    ("Authorization: token abcdef0123456789", "Authorization: token [R]"),
    ("authorization: Basic dXNlcjpwYXNzd29yZA==", "authorization: Basic [R]"),
    ('{\\"api_key\\": \\"abcdef12\\"}', '{\\"api_key\\": \\"[R]\\"}'),
    ('password: "it\'s a secret"', 'password: "[R]"'),
    (
        "curl https://api.example/v1?access_token=abcdEFGH1234&x=1",
        "curl https://api.example/v1?access_token=[R]&x=1",
    ),
    ("mysql DB_PWD=Passw0rdLong", "mysql DB_PWD=[R]"),
    ("client_secret => 'Zm9vYmFyYmF6'", "client_secret => '[R]'"),
    ('if password == "letmein!!"', 'if password == "[R]"'),
    ('password="123456"', 'password="[R]"'),
    ("GOOGLE_CREDENTIALS:service-account-json-blob", "GOOGLE_CREDENTIALS:[R]"),
]


@pytest.mark.parametrize(("text", "expected"), ASSIGNMENTS)
def test_assignments_lose_the_value_and_keep_the_name(text: str, expected: str) -> None:
    assert looks_like_secret(text) == "secret_assignment"
    assert redact(text) == expected.replace("[R]", "[REDACTED:secret_assignment]")


def test_a_known_key_in_an_assignment_keeps_its_own_id() -> None:
    key = "ghp_" + "a1B2" * 9
    assert looks_like_secret(f"GITHUB_TOKEN={key}") == "github_token"
    assert redact(f"GITHUB_TOKEN={key}") == "GITHUB_TOKEN=[REDACTED:github_token]"


# --- what must pass --------------------------------------------------------------------------

MORE_BENIGN = [
    "Store API keys in environment variables, not code",
    "password reset link",
    "max_tokens: 4096",
    '"max_tokens": 100000',
    "token budget 4096",
    "token budget: 4096",
    "the token budget is 4096",
    "api_key_env: OPENAI_API_KEY",
    '"api_key_env": "OPENAI_API_KEY"',
    "export OPENAI_API_KEY=$OPENAI_API_KEY",
    "TOKEN=${GITHUB_TOKEN}",
    "password: {$env: DB_PASSWORD}",
    "api_key = os.environ['OPENAI_API_KEY']",
    "token = os.getenv('TOKEN')",
    "const apiKey = process.env.OPENAI_KEY",
    "set PASSWORD=%DB_PASSWORD%",
    "token = get_token(user)",
    "password=12345678",
    "token_type: bearer",
    "tokenizer: cl100k_base",
    "token_url: https://auth.example/oauth/token",
    "password=<your password>",
    "OLDPWD=/home/user/project",
    "PWD=/home/user",
    "secrets: inherit",
    "https://docs.example/guide",
    "the secret sauce is caching",
    "See SECRET_KEY in settings.py",
    "Password: see the vault",
    "prompt_tokens=1234 completion_tokens=56",
]

CONFIG_VALUES = ["http://localhost:8000/v1", "gpt-4o", "/home/user/.hermes", "OPENAI_API_KEY"]


@pytest.mark.parametrize("text", MORE_BENIGN + CONFIG_VALUES)
def test_more_ordinary_text_passes(text: str) -> None:
    assert looks_like_secret(text) is None
    assert redact(text) == text


# --- idempotence, prefilter, bounds, speed ---------------------------------------------------

ALL_SAMPLES = (
    list(SECRETS.values())
    + [text for text, _ in NEW_SHAPES.values()]
    + [text for text, _ in ASSIGNMENTS]
    + [FINE_GRAINED_PAT, PEM, OPENSSH_NO_END, "https://user:sk-" + "a" * 20 + "@h.io/x"]
)


@pytest.mark.parametrize("text", ALL_SAMPLES)
def test_redacting_twice_changes_nothing(text: str) -> None:
    once = redact(text)
    assert redact(once) == once
    assert looks_like_secret(once) is None


def test_redacting_everything_at_once_is_idempotent() -> None:
    text = "\n".join(ALL_SAMPLES + MORE_BENIGN)
    once = redact(text)
    assert redact(once) == once
    assert looks_like_secret(once) is None
    assert all(line in once for line in MORE_BENIGN)


_VOCAB = [
    "sk-",
    "proj-",
    "ant-",
    "sk_live_",
    "whsec_",
    "ghp_",
    "github_pat_",
    "AKIA",
    "ASIA",
    "xoxb-",
    "hooks.slack.com/services/",
    "https://",
    "AIza",
    "ya29.",
    "hf_",
    "npm_",
    "eyJ",
    ".",
    "Bearer",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "PASSWORD",
    "Secret",
    "token",
    "ApiKey",
    "api-key",
    "private_key",
    "Credentials",
    "_pwd",
    "Authorization",
    "token ",
    "basic ",
    "=",
    ": ",
    "==",
    "=>",
    '"',
    "'",
    "\\",
    "\n",
    " ",
    "_",
    "-",
    "@",
    ":",
    "/",
    "$",
    "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv",
    "0123456789",
    "x",
    "Z",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_VOCAB), max_size=12))
def test_prefilter_lets_every_match_through(parts: list[str]) -> None:
    text = "".join(parts)
    if any(pattern.search(text) for _, pattern in SECRET_PATTERNS):
        assert _may_hold_secret(text)
        assert looks_like_secret(text) is not None


@pytest.mark.parametrize("text", ALL_SAMPLES)
def test_prefilter_matches_each_sample(text: str) -> None:
    assert _may_hold_secret(text)


def test_no_match_is_longer_than_the_serialize_margin() -> None:
    # serialize.redacted_head_tail relies on it: see hermes_core/compression/serialize.py.
    longest = [
        "-----BEGIN "
        + "A" * 40
        + "PRIVATE KEY BLOCK-----"
        + "b" * 7_000
        + "-----END "
        + "A" * 40
        + "PRIVATE KEY BLOCK-----",
        "-----BEGIN RSA PRIVATE KEY-----" + ("  \\r\\n  \\r\\n" + " " * 8 + "Q" * 76) * 200,
        "password" + "x" * 60 + '\\"     :=     \\"' + "v" * 5_000,
        "eyJ" + "a" * 2_000 + ".eyJ" + "b" * 4_000 + "." + "c" * 5_000,
    ]
    for text in longest:
        lengths = [len(m.group()) for _, p in SECRET_PATTERNS for m in p.finditer(text)]
        assert lengths and max(lengths) < _REDACT_MARGIN


HOSTILE = {
    "equals": "=" * 100_000,
    "letters": "a" * 100_000,
    "begin lines": "-----BEGIN RSA PRIVATE KEY-----" * 3_300,
    "begin then letters": "-----BEGIN RSA PRIVATE KEY-----" + "a" * 100_000,
    "begin then lines": "-----BEGIN RSA PRIVATE KEY-----" + ("\n" + "A" * 64) * 1_500,
    "begin then dashes": "-----BEGIN RSA PRIVATE KEY-----" + "-aaa" * 25_000,
    "password then letters": "password=" + "a" * 100_000,
    "password then equals": "password=" + "=" * 100_000,
    "password then quote": 'password="' + "a" * 100_000,
    "names": "token" * 20_000,
    "assignments": "api_key=" * 12_500,
    "quotes": "password:'" * 10_000,
    "glued sk": "x" + "sk-" * 33_000,
    "sk body": "sk-" + "aB1" * 33_000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_each_hostile_input_stays_fast(name: str) -> None:
    text = HOSTILE[name]
    started = time.perf_counter()
    redact(text)
    looks_like_secret(text)
    assert time.perf_counter() - started < 0.5
