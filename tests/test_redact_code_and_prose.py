"""Code and prose the redactor took for secrets (final review F of issue 26, defect 6):
MSBuild properties (``/p:Configuration=Release``), a value that is the variable's own name
(``password=password``, ``self.credentials = credentials``), a kind compared with a quoted
word (``token.type == "lbracket"``), an enum or label whose name only starts with a secret
word (``TOKEN_COMMENT_BEGIN: "begin of comment"``) and prose naming a password option. The
secrets of the same shapes still go."""

from __future__ import annotations

import pytest

from hermes_core.redact import looks_like_secret, redact

NOT_SECRETS = [
    # MSBuild / dotnet properties
    "msbuild App.sln /p:Configuration=Release /p:Platform=x64",
    "dotnet publish -c Release /p:PublishSingleFile=true",
    "msbuild Build.proj /p:OutDir=lib\\ /t:Rebuild",
    # a variable passed on under its own name (or from the attribute of that name)
    "with zipfile.ZipFile(path) as zf: data = zf.open(name, pwd=pwd)",
    "        self.credentials = credentials",
    "    password=password,",
    "    identity_token=identity_token,",
    "    webhook_secret=webhook_secret,",
    "this.password = password;",
    '{"api_token": api_token}',
    # a kind compared with a quoted word
    'elif token.type == "lbracket":',
    "if secret.kind != 'reference':",
    # enum keys and labels: the secret word is not the name's last part, the value is prose
    'TOKEN_COMMENT_BEGIN: "begin of comment"',
    "api_key_help = 'where to find your key'",
    # prose naming the option
    "Use the --username and --password options to log in.",
    "Pass it with the --password option when the server asks.",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_code_and_prose_are_not_secrets(text: str) -> None:
    assert redact(text) == text
    assert looks_like_secret(text) is None


SECRETS = [
    # the value is not the name itself
    ("PASSWORD=password", "=password"),
    ("DB_PASSWORD=db_password", "db_password"),
    ("password=mypassword", "mypassword"),
    ("identity_token=identity_token2", "identity_token2"),
    ("pwd=hunter22", "hunter22"),
    # a comparison with a literal secret, not a kind
    ('if token == "Zq8vR2mXkL9pT4wN":', "Zq8vR2mXkL9pT4wN"),
    ('if token.value == "Zq8vR2mXkL9pT4wN":', "Zq8vR2mXkL9pT4wN"),
    # a name that ends in a secret word keeps prose values out as well
    ('secret_phrase: "correct horse battery staple"', "correct horse"),
    ('SECRET_ANSWER: "my first dog"', "first dog"),
    ('API_TOKEN: "open sesame now"', "open sesame"),
    # a password option with a value; /p: with a password
    ("mysql --password options9", "options9"),
    ("xfreerdp /v:host /u:admin /p:Rdp9Pass", "Rdp9Pass"),
    ("msbuild /p:DbPassword=Hunter2x", "Hunter2x"),
    ("cmdkey /generic:srv /user:bob /pass:Zq8vR2mX", "Zq8vR2mX"),
]


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_secrets_of_the_same_shapes_still_go(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out, out
    assert redact(out) == out
