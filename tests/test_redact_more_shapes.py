"""Secret shapes the second review of issue 26 found missed (defect 8), by category: token
options of common command-line programs, generic ``*_KEY`` environment names, connection-string
passwords, credential lines of config files, more vendor prefixes, and a password piped to
``sudo -S``. Each with look-alikes that must pass, twice-redaction, and hostile input (judged
by the result, never by time)."""

from __future__ import annotations

import pytest

from hermes_core.redact import looks_like_secret, redact

S = "Zq8vR2mXkL9pT4wN"
_HEX = "0123456789abcdef" * 2
_B = "aB3dE5fG7hJ9kL1mN2pQrS4tU6vW8xY0z1234"

MISSED = [
    # token options: --token X, --api-key X, --client-secret X, curl --oauth2-bearer X
    (f"some-cli --token {S} --api-key {S}x1", S),
    (f"tool --client-secret {S}", S),
    (f"curl --oauth2-bearer {S} https://x.example", S),
    (f"influx query --token {S} 'from(bucket)'", S),
    (f"gh auth status --hostname h --token '{S}'", S),
    (f"vercel deploy --token {S}", S),
    (f"doctl auth init --access-token {S}", S),
    (f"heroku login --api-key {S}", S),
    (f"terraform login --auth-token {S}", S),
    ("tool --api-key 0123456789abcdefabcdef", "0123456789abcdefabcdef"),
    # aws configure set, dotnet user-secrets set
    (f"aws configure set aws_secret_access_key {S}abcdef", S),
    (f"aws configure set aws_session_token {S} --profile dev", S),
    (f"aws configure set default.aws_secret_access_key {S}", S),
    (f'dotnet user-secrets set "Api:Key" "{S}"', S),
    (f"dotnet user-secrets set Stripe:SecretKey {S} --project x", S),
    # generic *_KEY environment names (with a random-looking value)
    (f"SENDGRID_KEY={S}", S),
    (f"export MAPS_KEY='{S}'", S),
    (f"SERVICE_KEY: {S}", S),
    # connection strings
    (f"Driver={{ODBC}};Server=db;UID=sa;PWD={S};", S),
    (f"Server=db;Uid=sa;Pwd={S}", S),
    (f"https://x.blob.core.windows.net/c?sv=2021-08-06&sig={S}abc%3D&se=2030", S),
    (f"https://b.s3.amazonaws.com/k?X-Amz-Signature={_HEX}{_HEX}", _HEX + _HEX),
    # config-file credential lines
    ('{"auths":{"https://index.docker.io/v1/":{"auth":"dXNlcjpaUThWUjJtWGtMOXBUNHdO"}}}',
     "dXNlcjpaUThWUjJtWGtMOXBUNHdO"),
    ('{\\"auths\\": {\\"r.io\\": {\\"auth\\": \\"dXNlcjpaUThWUjJtWGtM\\"}}}',
     "dXNlcjpaUThWUjJtWGtM"),
    ("    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NB",
     "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NB"),
    (f"db.example.com:5432:app:alice:{S}", S),
    (f"*:*:*:postgres:{S}\nlocalhost:5432:*:bob:pw2{S}", S),
    ("admin:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/", "$HqJZimcKQFAMYayBlzkrA/"),
    ("bob:$2y$05$abcdefghijklmnopqrstuuVmXs8cQn3fA1mXbZy5n7YjG8z6u0Yb2", "VmXs8cQn3fA1mX"),
    ("carol:{SHA}qUqP5cyxm6YcTAhz05Hph5gvu9M=", "qUqP5cyxm6YcTAhz05Hph5gvu9M="),
    ("root:$6$Qx9sa1t$0aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789./aBcDe:19000:0:99999:7:::",
     "0aBcDeFgHiJkLmNoPqRsTuVwXyZ"),
    # vendor prefixes
    ("npm_" + "aB3dE5fG7hJ9kL1mN2pQrS4tU6vW8xY0z12", "aB3dE5fG7hJ9kL1mN2pQrS4tU6vW8xY0z12"),
    ("SK" + _HEX, _HEX),
    (_HEX + "-us21", _HEX),
    ("dp.st.prd." + _B, _B),
    ("MTA0NTY3ODkwMTIzNDU2Nzg5MA.GaBcDe.aB3dE5fG7hJ9kL1mN2pQrS4tU6vW8xY0z12",
     "aB3dE5fG7hJ9kL1mN2pQrS4tU6vW8xY0z12"),
    # a password piped to sudo -S
    (f"echo {S} | sudo -S apt update", S),
    (f"echo '{S}' | sudo -kS -u root id", S),
]  # fmt: skip


@pytest.mark.parametrize(("text", "secret"), MISSED)
def test_missed_shapes_are_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out, out
    assert looks_like_secret(text) is not None
    assert redact(out) == out


@pytest.mark.parametrize(
    "text",
    [
        # token options given a reference, a placeholder, a file or prose
        "gh auth login --with-token < token.txt",
        "some-cli --token $TOKEN --api-key ${API_KEY}",
        "tool --client-secret <secret>",
        "use --api-key followed by your key",
        "pass the --token flag to influx",
        "--max-tokens 4096 --token-file ~/.t",
        "gcloud run deploy --secret my-secret-name",
        "aws configure set region us-east-1",
        "aws configure set aws_secret_access_key $AWS_SECRET",
        "dotnet user-secrets list",
        # *_KEY names whose values are words, ids or paths
        "PRIMARY_KEY=id", "SORT_KEY=created_at", "SSH_KEY=~/.ssh/id_ed25519", "HOT_KEY=F12",
        "SSH_KEY=/home/u/.ssh/id_ed25519",
        # connection strings and config lines that are no credentials
        "PWD=/home/u/src", "echo $PWD", "OLDPWD=/tmp",
        "see https://x.example/?sig=short",
        '{"auth": "required"}', '"auth": "oauth2"',
        "client-key-data: <base64>",
        "12:30:45 start", "localhost:5432:app", "2001:db8:0:0:1",
        "a:b:c:d:e:f:g:h", "time 10:20:30:40:50",
        "echo $1$2$3", "s/:$1$/x/",
        # vendor look-alikes
        "SKIP_ME_" + _HEX, "TASK" + _HEX, "the -us21 region", "dp.st.short",
        "Module.Submodule.ClassName.method_name",
        "echo hello | sudo tee /etc/x", "echo $PW | sudo -S id", "echo hello world | sudo -S id",
    ],
)  # fmt: skip
def test_look_alikes_pass(text: str) -> None:
    assert redact(text) == text


HOSTILE = {
    "token flags": "--token " * 30_000,
    "dashed token flags": "--a-b-c-token " * 20_000,
    "aws configure": "aws configure set " * 20_000,
    "user secrets": "dotnet user-secrets set a " * 10_000,
    "env keys": "A_KEY=" * 30_000,
    "env key value": "A_KEY=" + "a1" * 50_000,
    "odbc": ";PWD=" * 30_000,
    "sas": "?sig=" * 30_000,
    "docker auth": '"auth":"' * 20_000,
    "client keys": "client-key-data: " * 10_000,
    "pgpass colons": "a:1:" * 40_000,
    "pgpass fields": "a:1:b:c:" * 20_000,
    "hash lines": "a:$apr1$" * 20_000,
    "hash body": "a:$2y$" + "a" * 100_000,
    "twilio": "SK" * 100_000,
    "mailchimp": ("a" * 32 + "-us") * 5_000,
    "discord": "M" + "a" * 100_000,
    "discord dots": "Mabcdefghijklmnopqrstuvwx." * 8_000,
    "sudo": "echo a | " * 20_000 + "sudo -S",
    "sudo flags": "echo a | sudo" + " -k" * 50_000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_finishes_with_the_right_answer(name: str) -> None:
    text = HOSTILE[name]
    out = redact(text)
    assert redact(out) == out
    assert (looks_like_secret(text) is None) == (out == text)
