"""Recognise and redact secrets (API keys, tokens, passwords in URLs) in text.

One list of key shapes serves every place a secret must not pass: config values, text sent
to a summariser or a provider, logs. Patterns have bounded repetition so hostile input
cannot make them backtrack for long.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["SECRET_PATTERNS", "looks_like_secret", "redact"]

#: (id, pattern) for the key shapes we refuse to store or send.
SECRET_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("openai_key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,200}")),
    ("stripe_key", re.compile(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{10,200}")),
    (
        "github_token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,200}|github_pat_[A-Za-z0-9_]{20,200})"),
    ),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("slack_token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,200}")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    (
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,2000}\.eyJ[A-Za-z0-9_-]{8,4000}\.[A-Za-z0-9_-]{0,2000}"),
    ),
    ("bearer_token", re.compile(r"\bBearer\s{1,5}[A-Za-z0-9._~+/=-]{12,2000}")),
    ("url_password", re.compile(r"(?<=://)[^/\s:@]{1,200}:[^/\s@]{1,200}(?=@)")),
    ("private_key", re.compile(r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----")),
)


#: Literal fragments at least one of which every pattern needs: one cheap scan rules most
#: text out before the ten patterns run.
_PREFILTER: Final = re.compile(
    r"sk-|[sr]k_|gh[pousr]_|github_pat_|AKIA|ASIA|xox[abprs]-|AIza|eyJ|Bearer|://|-----BEGIN"
)


def looks_like_secret(text: str) -> str | None:
    """The id of the first key shape found in ``text``, or ``None``."""
    if not _PREFILTER.search(text):
        return None
    for pattern_id, pattern in SECRET_PATTERNS:
        if pattern.search(text):
            return pattern_id
    return None


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED:<id>]``."""
    if not _PREFILTER.search(text):
        return text
    for pattern_id, pattern in SECRET_PATTERNS:
        text = pattern.sub(f"[REDACTED:{pattern_id}]", text)
    return text
