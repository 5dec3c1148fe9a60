"""Secret shapes of issue 26 (item 4): credentials in URLs of any scheme, passwords given to
commands on their command line, and vendor key prefixes. Each category is tested with several
shapes, with look-alikes that must pass, twice-redaction, and hostile input (judged by the
result: a backtracking pattern would not finish, a linear one does)."""

from __future__ import annotations

import pytest

from hermes_core.redact import looks_like_secret, redact
from hermes_core.secret_vendors import VENDOR_SHAPES

_B = "aB3dE5fG7hJ9kL2mN4pQ6rS8tV0wX1yZ"  # 32 key characters
_HEX = "0123456789abcdef" * 4

# --- credentials in URLs --------------------------------------------------------------------

URLS = [
    ("redis://:hunter2pw@cache.local:6379/0", "hunter2pw"),
    ("rediss://default:Zx9pw@cache:6380", "Zx9pw"),
    ("amqp://guest:Rabbit55@mq.local:5672/vhost", "Rabbit55"),
    ("mongodb+srv://admin:S3cretPw@cluster0.ab.mongodb.net/db?retryWrites=true", "S3cretPw"),
    ("ftp://bob:pa55word@ftp.example.com/file.txt", "pa55word"),
    ("sftp://deploy:Dep10y!@host:22", "Dep10y!"),
    ("mysql+pymysql://app:Qw3rty@db/app", "Qw3rty"),
    ("jdbc:postgresql://u:Pg9pass@h:5432/d", "Pg9pass"),
    ("nats://:tok3n@nats:4222", "tok3n"),
    ("url: redis://:p@ssw0rd@host:6379", "ssw0rd"),
    ('{"url": "redis:\\/\\/:Js0nPw@cache:6379"}', "Js0nPw"),
]


@pytest.mark.parametrize(("text", "password"), URLS)
def test_url_credentials_of_any_scheme_are_redacted(text: str, password: str) -> None:
    out = redact(text)
    assert password not in out and "[REDACTED:url_password]@" in out
    assert looks_like_secret(text) == "url_password"
    assert redact(out) == out


@pytest.mark.parametrize(
    "text",
    [
        "see https://example.com/a:b@c",
        "mailto:user@example.com",
        "git@github.com:org/repo.git",
        "http://host:8080/path",
        "ssh://git@host/repo",
    ],
)
def test_urls_without_a_password_pass(text: str) -> None:
    assert redact(text) == text


# --- passwords on command lines -------------------------------------------------------------

COMMANDS = [
    ("docker login -u me -p S3cretPass registry.io", "S3cretPass"),
    ("docker login --username me -p=S3cretPass", "S3cretPass"),
    ("docker login -pS3cretPass ghcr.io", "S3cretPass"),
    ("docker login --password S3cretPass registry.io", "S3cretPass"),
    ("docker login --password=S3cretPass registry.io", "S3cretPass"),
    ("podman login -u me -p 'Pod man pw' quay.io", "Pod man pw"),
    ("helm registry login ghcr.io -u me -p H3lmPw", "H3lmPw"),
    ("sshpass -p hunter2 ssh root@host", "hunter2"),
    ("sshpass -p 'hunter 2' scp f root@host:", "hunter 2"),
    ("sshpass -phunter2 ssh root@host", "hunter2"),
    ("mysql -uroot -pSECRETpw db", "SECRETpw"),
    ("mysql --password=SECRETpw db", "SECRETpw"),
    ("redis-cli -h cache -a R3disPw ping", "R3disPw"),
    ("ldapsearch -x -D cn=admin -w LdapPw9 -b dc=x", "LdapPw9"),
    ("mongosh --host h -u admin -p M0ngoPw", "M0ngoPw"),
    ("sqlcmd -S srv -U sa -P Sq1Pass!", "Sq1Pass!"),
    ("zip -P Z1pPass out.zip f", "Z1pPass"),
    ("7z a -pSev3nPw out.7z f", "Sev3nPw"),
    ("curl -u alice:Cu7lPass https://api.example", "Cu7lPass"),
    ("curl --user 'alice:Cu7lPass' https://api.example", "Cu7lPass"),
    ("smbclient //srv/share -U alice%Smb9Pass", "Smb9Pass"),
]


@pytest.mark.parametrize(("text", "password"), COMMANDS)
def test_passwords_given_to_commands_are_redacted(text: str, password: str) -> None:
    out = redact(text)
    assert password not in out and "[REDACTED:" in out
    assert looks_like_secret(text) is not None
    assert redact(out) == out


@pytest.mark.parametrize(
    "text",
    [
        "docker run -p 8080:80 nginx",
        "docker login --password-stdin < token.txt",
        "docker login -u me registry.io",
        "mysql -p mydb",
        "curl -u alice https://api.example",
        "redis-cli -a",
        "mkdir -p build/out",
        "ssh -p 2222 host",
    ],
)
def test_command_lines_without_a_password_pass(text: str) -> None:
    assert redact(text) == text


# --- vendor key prefixes --------------------------------------------------------------------

KEYS = {
    "groq_key": "gsk_" + _B + _B[:20],
    "xai_key": "xai-" + _B * 2 + _B[:16],
    "perplexity_key": "pplx-" + _HEX[:48],
    "replicate_token": "r8_" + _B + "abcde",
    "tavily_key": "tvly-dev-" + _B,
    "nvidia_key": "nvapi-" + _B + "-" + _B,
    "cerebras_key": "csk-" + _HEX[:48],
    "together_key": "tgp_v1_" + _B,
    "elevenlabs_key": "sk_" + _HEX[:48],
    "jina_key": "jina_" + _B + _B,
    "firecrawl_key": "fc-" + _HEX[:32],
    "pinecone_key": "pcsk_" + _B + "_" + _B,
    "anyscale_key": "esecret_" + _B,
    "langsmith_key": "lsv2_pt_" + _HEX[:32] + "_" + _HEX[:10],
    "docker_token": "dckr_pat_" + _B[:27],
    "linear_key": "lin_api_" + _B + "abcdefgh",
    "sentry_token": "sntrys_" + _B + _B,
    "grafana_token": "glsa_" + _B + "_" + _HEX[:8],
    "postman_key": "PMAK-" + _HEX[:24] + "-" + _HEX[:34],
    "databricks_token": "dapi" + _HEX[:32],
    "atlassian_token": "ATATT3" + _B + _B,
    "notion_token": "ntn_" + _B + "abcdefghijklmn",
    "heroku_key": "HRKU-" + _B,
    "newrelic_key": "NRAK-" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ1",
    "square_token": "sq0atp-" + _B[:22],
    "figma_token": "figd_" + _B + "_x",
    "pulumi_token": "pul-" + _HEX[:40],
    "supabase_key": "sbp_" + _HEX[:40],
    "vault_token": "hvs." + _B,
    "mailgun_key": "key-" + _HEX[:32],
    "doppler_token": "dp.pt." + _B + "abcdefghijk",
    "mapbox_secret": "sk.eyJ1IjoiYWxpY2UiLCJhIjoiY2s." + _B,
    "age_secret_key": "AGE-SECRET-KEY-1" + "QWERTYUIOPASDFGHJKLZXCVBNM0123456789QWERTYUIOPASDFGH",
    "telegram_bot_token": "123456789:AA" + _B + "x",
    "gitlab_token": "glsoat-" + _B[:20],
    "slack_token": "xapp-1-A0123456-" + _HEX[:20],
    "aws_access_key": "ABIA" + "QWERTYUIOPASDFGH",
    "google_oauth_secret": "GOCSPX-" + _B[:28],
    "huggingface_token": "hf_" + _B[:34],
}


def test_every_vendor_shape_has_a_sample() -> None:
    assert {pattern_id for pattern_id, _, _ in VENDOR_SHAPES} <= set(KEYS) | {
        "stripe_key", "stripe_webhook_secret", "github_token", "slack_webhook", "google_api_key",
        "google_oauth_token", "npm_token", "sendgrid_key", "pypi_token", "digitalocean_token",
        "shopify_token",
    }  # fmt: skip


@pytest.mark.parametrize(("pattern_id", "key"), sorted(KEYS.items()))
def test_vendor_keys_are_redacted_in_place(pattern_id: str, key: str) -> None:
    for text in (key, f"export KEY_VALUE {key} done", f'{{"k": "{key}"}}'):
        out = redact(text)
        assert key not in out and f"[REDACTED:{pattern_id}]" in out, text
        assert redact(out) == out
    assert looks_like_secret(key) == pattern_id
    assert (
        redact(f"https://api.telegram.org/bot{KEYS['telegram_bot_token']}/getMe").count("REDACTED")
        == 1
    )


@pytest.mark.parametrize(
    "text",
    [
        "model xai-grok-2-latest answered", "the pplx-api docs", "tasks-runner csk-style",
        "fw_version", "r8_model", "gsk_short1", "use the hvs. prefix", "dp.pt.short",
        "chat_id 123456789:AB", "dapi is a word", "pul-request", "the ntn_ prefix",
    ],
)  # fmt: skip
def test_prefix_look_alikes_pass(text: str) -> None:
    assert redact(text) == text


# --- hostile input --------------------------------------------------------------------------

HOSTILE = {
    "url colons": "redis://" + ":" * 100_000,
    "url at signs": "redis://:" + "a@" * 50_000,
    "escaped urls": ":\\/\\/:" * 20_000,
    "many schemes": "a://b:c" * 20_000,
    "docker words": "docker login" + " -u" * 50_000,
    "docker logins": "docker login -p " * 10_000,
    "sshpass flags": "sshpass" + " -p" * 50_000,
    "curl users": "curl -u " + "a:" * 50_000,
    "smb users": "smbclient -U " + "a%" * 50_000,
    "prefixes": "gsk_xai-pplx-r8_tvly-nvapi-csk-" * 5_000,
    "telegram": "123456789:AA" * 10_000,
    "bot ids": "bot" + "1" * 100_000 + ":AA",
    "vault": "hvs." + "a" * 100_000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_finishes_with_the_right_answer(name: str) -> None:
    text = HOSTILE[name]
    out = redact(text)
    assert redact(out) == out
    assert (looks_like_secret(text) is None) == (out == text)
