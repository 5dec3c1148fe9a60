"""Named shapes: vendor key prefixes (``gsk_``, ``xai-``, ``AKIA``) and the password options of
programs (``docker login -p``, ``ipmitool -P``), two catalogues of product names.

A prefix plus a long run of key characters is the most reliable sign of a secret there is, so
each vendor whose keys carry a documented prefix gets one entry here, used by
:mod:`hermes_core.secret_shapes` in this order. Each entry is (id, pattern, gate literals):
the pattern starts at :data:`START` and repeats a bounded class (no nested repetition, so
hostile input stays linear), and the gate literals are lower-case substrings every match
holds, so text without them costs nothing.

Bodies are long enough that words and identifiers do not match (``xai-grok-2`` is a model
name, ``xai-`` plus 20 letters and digits with no "-" is a key). Short or generic prefixes
whose keys carry no other mark (Voyage ``pa-``, Fireworks ``fw_``) are left out: a prefix of
two letters would redact too many ordinary words. Twilio ``SK`` keys (exactly 32 hex digits),
Mailchimp keys and Discord bot tokens have a shape beyond their prefix and need a regex gate:
they are in :mod:`hermes_core.secret_shapes.keys`.

:data:`COMMAND_OPTIONS` is data only: :mod:`hermes_core.secret_shapes` turns each entry into
a pattern (a command, up to 20 of its words, the option, the password).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["AWS_SECRET_ID", "COMMAND_OPTIONS", "START", "VENDOR_SHAPES"]

#: Where a key shape may start: not after an ASCII letter, digit or "_". (``\b`` would also
#: refuse a key glued to CJK text, ``密钥AKIA…``, since CJK characters are word characters.)
#: Nor after "]", and a shape that must end before a letter must end before "[" too: a
#: ``[REDACTED:...]`` label stands where a secret glued to this one stood, so redacting twice
#: sees the same boundaries as redacting once.
START: Final = r"(?<![A-Za-z0-9_\]])"

_GITLAB = ("pat", "dt", "rt", "ptt", "oas", "cbt", "ft", "imt", "soat", "agent", "ffct", "wt")

VENDOR_SHAPES: Final[tuple[tuple[str, str, tuple[str, ...]], ...]] = (
    ("stripe_key", rf"{START}[sr]k_(?:live|test)_[A-Za-z0-9]{{10,200}}", ("sk_", "rk_")),
    ("stripe_webhook_secret", rf"{START}whsec_[A-Za-z0-9]{{20,200}}", ("whsec_",)),
    (
        "github_token",
        rf"{START}(?:gh[pousr]_[A-Za-z0-9]{{20,200}}|github_pat_[A-Za-z0-9_]{{20,200}})",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    (
        "aws_access_key",
        rf"{START}(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{{16}}(?![A-Za-z0-9_\[])",
        ("akia", "asia", "abia", "acca"),
    ),
    (
        "slack_token",
        rf"{START}(?:xox[abprs]|xoxe(?:\.xox[bp])?|xapp)-[A-Za-z0-9-]{{10,200}}",
        ("xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "xoxe", "xapp-"),
    ),
    (
        "slack_webhook",
        rf"(?:{START}https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/"
        r"[A-Za-z0-9_/-]{8,300}",
        ("hooks.slack.com/",),
    ),
    ("google_api_key", rf"{START}AIza[0-9A-Za-z_-]{{35}}", ("aiza",)),
    ("google_oauth_token", rf"{START}ya29\.[0-9A-Za-z_-]{{20,2000}}", ("ya29.",)),
    ("google_oauth_secret", rf"{START}GOCSPX-[0-9A-Za-z_-]{{20,200}}", ("gocspx-",)),
    ("huggingface_token", rf"{START}hf_[A-Za-z0-9]{{30,200}}", ("hf_",)),
    ("npm_token", rf"{START}npm_[A-Za-z0-9]{{32,200}}", ("npm_",)),
    (
        "gitlab_token",
        rf"{START}gl(?:{'|'.join(_GITLAB)})-[A-Za-z0-9_-]{{20,200}}",
        tuple(f"gl{kind}-" for kind in _GITLAB),
    ),
    ("sendgrid_key", rf"{START}SG\.[A-Za-z0-9_-]{{16,64}}\.[A-Za-z0-9_-]{{16,128}}", ("sg.",)),
    ("pypi_token", rf"{START}pypi-AgE[A-Za-z0-9_-]{{50,400}}", ("pypi-age",)),
    ("digitalocean_token", rf"{START}do[opr]_v1_[a-f0-9]{{64}}", ("_v1_",)),
    (
        "shopify_token",
        rf"{START}shp(?:at|ss|ca|pa)_[a-fA-F0-9]{{32}}",
        ("shpat_", "shpss_", "shpca_", "shppa_"),
    ),
    # model and search APIs
    ("groq_key", rf"{START}gsk_[A-Za-z0-9]{{20,200}}", ("gsk_",)),
    ("xai_key", rf"{START}xai-[A-Za-z0-9]{{20,200}}", ("xai-",)),
    ("perplexity_key", rf"{START}pplx-[A-Za-z0-9]{{20,200}}", ("pplx-",)),
    ("replicate_token", rf"{START}r8_[A-Za-z0-9]{{20,200}}", ("r8_",)),
    ("tavily_key", rf"{START}tvly-(?:dev-|prod-)?[A-Za-z0-9]{{20,200}}", ("tvly-",)),
    ("nvidia_key", rf"{START}nvapi-[A-Za-z0-9_-]{{20,200}}", ("nvapi-",)),
    ("cerebras_key", rf"{START}csk-[A-Za-z0-9]{{20,200}}", ("csk-",)),
    ("together_key", rf"{START}tgp_v1_[A-Za-z0-9_-]{{20,200}}", ("tgp_v1_",)),
    ("elevenlabs_key", rf"{START}sk_[a-f0-9]{{48}}(?![A-Za-z0-9])", ("sk_",)),
    ("jina_key", rf"{START}jina_[A-Za-z0-9]{{30,200}}", ("jina_",)),
    ("firecrawl_key", rf"{START}fc-[a-f0-9]{{32}}(?![A-Za-z0-9])", ("fc-",)),
    ("pinecone_key", rf"{START}pcsk_[A-Za-z0-9_]{{30,200}}", ("pcsk_",)),
    ("anyscale_key", rf"{START}esecret_[A-Za-z0-9]{{20,200}}", ("esecret_",)),
    ("langsmith_key", rf"{START}lsv2_(?:pt|sk)_[A-Za-z0-9_]{{20,200}}", ("lsv2_",)),
    # developer platforms
    ("docker_token", rf"{START}dckr_(?:pat|oat)_[A-Za-z0-9_-]{{20,200}}", ("dckr_",)),
    ("linear_key", rf"{START}lin_(?:api|oauth)_[A-Za-z0-9]{{30,200}}", ("lin_api_", "lin_oauth_")),
    ("sentry_token", rf"{START}sntr[ysu]{{1,2}}_[A-Za-z0-9_=+/-]{{30,400}}", ("sntry",)),
    ("grafana_token", rf"{START}gl(?:sa|c)_[A-Za-z0-9_=+/-]{{30,400}}", ("glsa_", "glc_")),
    ("postman_key", rf"{START}PMAK-[A-Za-z0-9-]{{30,200}}", ("pmak-",)),
    ("databricks_token", rf"{START}dapi[a-f0-9]{{32}}(?![A-Za-z0-9])", ("dapi",)),
    ("atlassian_token", rf"{START}ATATT3[A-Za-z0-9_=-]{{30,400}}", ("atatt3",)),
    ("notion_token", rf"{START}ntn_[A-Za-z0-9]{{30,200}}", ("ntn_",)),
    ("heroku_key", rf"{START}HRKU-[A-Za-z0-9_-]{{20,200}}", ("hrku-",)),
    ("newrelic_key", rf"{START}NRAK-[A-Za-z0-9]{{20,200}}", ("nrak-",)),
    ("square_token", rf"{START}sq0(?:atp|csp)-[A-Za-z0-9_-]{{22,200}}", ("sq0atp-", "sq0csp-")),
    ("figma_token", rf"{START}figd_[A-Za-z0-9_-]{{30,200}}", ("figd_",)),
    ("pulumi_token", rf"{START}pul-[a-f0-9]{{40}}(?![A-Za-z0-9])", ("pul-",)),
    (
        "supabase_key",
        rf"{START}(?:sbp_[a-f0-9]{{40}}|sb_secret_[A-Za-z0-9_-]{{20,200}})",
        ("sbp_", "sb_secret_"),
    ),
    ("vault_token", rf"{START}hv[sbr]\.[A-Za-z0-9_-]{{24,400}}", ("hvs.", "hvb.", "hvr.")),
    # Vault's tokens before 1.10: "s." and 24 letters and digits, mixed (a word does not match)
    (
        "vault_token",
        rf"{START}s\.(?=[A-Za-z0-9]{{0,23}}[0-9])(?=[A-Za-z0-9]{{0,23}}[A-Z])"
        r"(?=[A-Za-z0-9]{0,23}[a-z])[A-Za-z0-9]{24}(?![A-Za-z0-9_-])",
        ("s.",),
    ),
    ("mailgun_key", rf"{START}key-[a-f0-9]{{32}}(?![A-Za-z0-9])", ("key-",)),
    (
        "doppler_token",
        # a service token names its config: dp.st.<config>.<key>
        rf"{START}dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{{1,60}}\.)?[A-Za-z0-9]{{30,200}}",
        ("dp.",),
    ),
    (
        "mapbox_secret",
        rf"{START}sk\.eyJ[A-Za-z0-9_-]{{20,2000}}\.[A-Za-z0-9_-]{{20,200}}",
        ("sk.eyj",),
    ),
    ("age_secret_key", rf"{START}AGE-SECRET-KEY-1[0-9A-Z]{{50,70}}", ("age-secret-key-1",)),
    # a Telegram bot token, "<bot id>:AA<33 characters>", also in a URL (".../bot<id>:AA...")
    (
        "telegram_bot_token",
        r"(?:(?<=bot)|(?<![A-Za-z0-9_\]]))[0-9]{8,10}:AA[A-Za-z0-9_-]{32,34}(?![A-Za-z0-9_-])",
        (":aa",),
    ),
)

#: (command, option, separator, value, gate literals): ``separator`` is "spaced" (``-a X``),
#: "any" (``-p X``, ``-p=X``, ``-pX``) or "glued" (``-pX``); ``value`` is "password" or
#: "user:password" / "user,password" (only the password goes). Every ``login`` that takes
#: ``-p`` (container registries, OpenShift, Azure, Cloud Foundry) is one entry: ``docker run
#: -p 8080:80`` is a port, so only ``login`` counts there.
COMMAND_OPTIONS: Final[tuple[tuple[str, str, str, str, tuple[str, ...]], ...]] = (
    (
        r"(?:docker|podman|buildah|skopeo|nerdctl|oras|helm[ \t]{1,5}registry"
        r"|crane[ \t]{1,5}auth|oc|az|cf)[ \t]{1,5}login",
        "-p",
        "any",
        "password",
        ("login",),
    ),
    ("sshpass", "-p", "any", "password", ("sshpass",)),
    (r"(?:redis|valkey|keydb)-cli", "-a|--pass", "spaced", "password", ("-cli",)),
    (r"ldap[a-z]{2,8}", "-w", "spaced", "password", ("ldap",)),
    (
        r"mongo(?:sh|dump|restore|export|import|stat|top|files)?",
        "-p",
        "spaced",
        "password",
        ("mongo",),
    ),
    (r"sqlcmd|bcp|osql", "-P", "any", "password", ("sqlcmd", "bcp", "osql")),
    (r"(?:un)?zip", "-P", "spaced", "password", ("zip",)),
    (r"7z[az]?", "-p", "glued", "password", ("7z",)),
    (r"ipmitool", "-P", "spaced", "password", ("ipmitool",)),
    (r"mosquitto_(?:pub|sub|rr)", "-P|--pw", "spaced", "password", ("mosquitto_",)),
    (r"psexec|paexec", "-p", "spaced", "password", ("psexec", "paexec")),
    ("curl", "-u|--user|-U|--proxy-user", "any", "user:password", ("curl",)),
    ("smbclient|rpcclient", "-U|--user", "any", "user:password", ("client",)),
    ("lftp", "-u|--user", "spaced", "user,password", ("lftp",)),
)

# --- Bare AWS secret access keys ---------------------------------------------------------------
# 40 characters of [A-Za-z0-9/+] with a lower-case letter, a capital and a digit, and not
# part of a longer run (a longer base64 blob, a path, a hash) nor hex (a git SHA). The
# trade-off: nothing in the key itself says "AWS", and any random 40-character base64 string
# looks the same, so such strings are redacted too (harmless: they are opaque). What must
# pass is text people read, and 40-character identifiers and paths are mostly words
# (``getUserIdFromTokenAndSessionKey12345678``, ``home/user/projects/MyApp2/src/main/Java1``):
# a candidate half made of words of 3+ lower-case letters (optionally capitalised) is kept.
# In random keys such words cover about 7 of 40 characters; under 1% reach 20, and those are
# missed. An AWS secret named as one (``aws_secret_access_key = ...``) is an assignment, above,
# whatever its letters. Not in SECRET_PATTERNS: its matches need :func:`_random_looking`.
_AWS_SECRET: Final = re.compile(
    r"(?<![A-Za-z0-9/+_\]])(?=[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+_=\[]))(?![0-9a-fA-F]{40})"
    r"(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[0-9])"
    r"[A-Za-z0-9/+]{40}"
)
_AWS_CANDIDATE: Final = re.compile(r"(?<![A-Za-z0-9/+_\]])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+_=\[])")
_WORD: Final = re.compile(r"[A-Z]?[a-z]{3,}")
AWS_SECRET_ID: Final = "aws_secret_key"


def _random_looking(candidate: str) -> bool:
    """Whether a 40-character candidate is not mostly words (see ``_AWS_SECRET``)."""
    return sum(len(word) for word in _WORD.findall(candidate)) < 20
