"""What is not a secret value (second review of issue 26, defect 9): a name that only ends in
``PASS`` (``COMPASS``), an ``*_AUTH`` setting holding a word, a variable reference
(``$TOKEN``, ``${PW}``), a dotted identifier (``self.token``), a type annotation and the
other side of a comparison. The secrets beside each still go."""

from __future__ import annotations

import pytest

from hermes_core.redact import redact

PASS = [
    # PASS is a whole name segment
    "COMPASS=north", "OVERPASS=quick", "The COMPASS=north and BYPASS=true settings",
    "ENCOMPASS=1", "UNDERPASS_ENABLED=yes", "TRESPASS=no", "--- PASS: TestLogin2 (0.00s)",
    # *_AUTH holding a word
    "MY_AUTH=basic", "X_AUTH=header name", "NO_AUTH=true", "REQUIRE_AUTH=false",
    # dotted identifiers, annotations, comparisons
    "token = self.token", "api_key = settings.api_key", "secret_key = config.SECRET_KEY",
    "password = user.password", "client_secret = creds.client_secret",
    "if token != expected_token:", "if password == confirm_password: return True",
    "password: Optional[str] = None", "api_token: Dict[str, str] = {}",
    "secret = self._secret_store.get(name)",
    # variable references
    "curl -u $USER:$TOKEN https://api", "curl -u admin:${PW} https://api",
    "openssl req -passout pass:$PW", "openssl rsa -passin 'pass:${KEY_PW}' -in k",
]  # fmt: skip


@pytest.mark.parametrize("text", PASS)
def test_not_a_secret_value(text: str) -> None:
    assert redact(text) == text


SECRETS = [
    ("DB_PASS=hunter2x", "hunter2x"),
    ("SSHPASS=Ssh9pw", "Ssh9pw"),
    ("REDISCLI_AUTH=R3dis", "R3dis"),
    ("NPM_AUTH=s3cr3tTok", "s3cr3tTok"),
    ("token = 'Zq8vR2mXkL9pT4wN'", "Zq8vR2mXkL9pT4wN"),
    ("password = hunter2.example", "hunter2.example"),
    ("password = Summer2024.Secure", "Summer2024.Secure"),
    ("if token == 'Zq8vR2mXkL9pT4wN':", "Zq8vR2mXkL9pT4wN"),
    ("curl -u admin:Zq8vR2mX https://api", "Zq8vR2mX"),
    ("openssl req -passout pass:Zq8vR2mX", "Zq8vR2mX"),
]


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_secrets_beside_them_still_go(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out, out
    assert redact(out) == out
