"""Recognise and redact secrets (API keys, tokens, private keys, passwords) in text.

One list of key shapes serves every place a secret must not pass: config values, text sent
to a summariser or a provider, logs. Patterns have bounded repetition so hostile input
cannot make them backtrack for long, and no match is longer than about 8,000 characters
(``hermes_core.compression.serialize`` redacts windows with an 8,192-character margin that
relies on that).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

__all__ = ["SECRET_PATTERNS", "looks_like_secret", "redact"]

# --- PEM private keys ------------------------------------------------------------------------
# The whole block, BEGIN line through END line, when the END line comes within 7,000
# characters (an RSA-8192 key is about 6,500); the body may not contain "-----", so a scan
# stops at the next armour line and repeated BEGIN lines stay linear. With no END line in
# reach (a cut or overlong key), the BEGIN line and up to 75 base64 (or header) lines after
# it, each a whole line. Either way under 7,300 characters: see the module docstring.
_PEM_LABEL = r"[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_PEM_NEWLINE = r"[ \t]{0,2}(?:\r?\n|\r|\\r\\n|\\n)"
_PEM_LINE = (
    r"[ \t]{0,8}(?:[A-Za-z0-9+/=]{1,76}"
    r"|(?:Proc-Type|DEK-Info|Version|Comment|Hash):[^\r\n\\]{0,64})"
    r"(?=[ \t]{0,2}(?:[\r\n\"']|\\[rn\"']|$))"
)
_PRIVATE_KEY = (
    rf"-----BEGIN {_PEM_LABEL}"
    rf"(?:(?:[^-]|-(?!----)){{0,7000}}?-----END {_PEM_LABEL}"
    rf"|(?:(?:{_PEM_NEWLINE}){{1,2}}{_PEM_LINE}){{0,75}})"
)

# --- OpenAI / Anthropic keys -------------------------------------------------------------------
# ``sk-`` after a word boundary as before (16+ body chars). A key glued to a preceding letter,
# digit or underscore (``xsk-proj-...``, ``KEY_sk-...``) is caught too, but only with a long
# body (32+) holding a digit, an upper-case letter and a run of 16 letters and digits: that
# rules out kebab-case words ending in "sk" ("task-runner", "Kiosk-Mode-2024-Release-Notes")
# while real keys (48+ mixed chars) still match. Other prefixes keep their word boundary:
# only ``sk-`` keys were seen glued. Anthropic keys (``sk-ant-api03-...``) are this shape and
# report as ``openai_key``.
_OPENAI_KEY = (
    r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,200}"
    r"|(?<=[A-Za-z0-9_])sk-(?=[A-Za-z0-9_-]{0,200}?[0-9])(?=[A-Za-z0-9_-]{0,200}?[A-Z])"
    r"(?=[A-Za-z0-9_-]{0,200}?[A-Za-z0-9]{16})[A-Za-z0-9_-]{32,200}"
)

# --- Secret assignments: ``NAME=value``, ``"name": "value"``, ``Authorization: token x`` -------
# A name holding one of the words below, as a word or inside an identifier. "tokens",
# "tokenizer" and "token_type" are counts and kinds, not secrets; "pwd" needs a "_", "." or
# "-" before it and a value that is not a path (the shell's PWD / OLDPWD are directories).
_SECRET_NAME = (
    r"(?i:pass(?:word|wd|phrase)|secret|token(?!s|iz|_?type)|api[_-]?key|access[_-]?key"
    r"|private[_-]?key|credential"
    r"|(?<=[_.-])pwd(?![A-Za-z0-9_.-]{0,60}(?:\\?[\"'])?[ \t]{0,5}[:=][ \t]{0,5}[\"']?[/~]))"
)
_ASSIGN = r"(?::=|=>|==|!=|[:=])"
# The rest of the name is taken whole (lookahead capture = atomic group): no backtracking.
_SECRET_KEY = (
    rf"{_SECRET_NAME}(?=(?P<rest>[A-Za-z0-9_.-]{{0,60}}))(?P=rest)"
    rf"(?:\\?[\"'])?[ \t]{{0,5}}{_ASSIGN}"
)
_AUTH_HEADER = (
    r"(?i:authorization)(?:\\?[\"'])?[ \t]{0,5}[:=][ \t]{0,5}(?:\\?[\"'])?"
    r"(?i:token|basic|bearer|digest)[ \t]"
)
# Values that are references, not secrets: ``$FOO``, ``${FOO}``, ``%FOO%``, ``{$env: FOO}``,
# ``os.environ[...]``, ``os.getenv(...)``, ``process.env.FOO``, an environment variable's name
# (``OPENAI_API_KEY``: capitals, digits and at least one "_"), a URL (its credentials are
# ``url_password``'s), a home- or dot-relative path, and our own ``[REDACTED:...]``
# (so redacting twice changes nothing).
_NOT_A_VALUE = (
    r"(?:\$[{(A-Za-z_]|%[A-Za-z_]|\{|<|\[REDACTED:|~/|\.{1,2}/"
    r"|[A-Za-z][A-Za-z0-9+.-]{0,20}://"
    r"|os\.environ|os\.getenv|process\.env|(?i:getenv)\b"
    r"|(?=[A-Z0-9]{0,100}_)[A-Z_][A-Z0-9_]{0,200}(?:[\s\"'`,;&)}\]\\]|$))"
)
_BARE = r"[^\s\"'`,;&(){}\[\]<>\\]"
# Quoted: 6+ characters up to the closing quote. Bare: 8+ characters with a letter (so
# ``max_tokens: 4096``-style numbers pass), taken whole (lookahead capture = atomic group)
# and not a call (``token = get_token()``). Only the value is redacted; the name stays.
_SECRET_VALUE = (
    rf"[ \t]{{0,5}}(?:\\?(?P<q>[\"'])(?!{_NOT_A_VALUE})"
    rf"(?P<secret_q>(?:(?!(?P=q))[^\\\r\n]){{6,2000}})"
    rf"|(?!{_NOT_A_VALUE})(?={_BARE}{{0,2000}}?[A-Za-z])"
    rf"(?=(?P<secret_b>{_BARE}{{8,2000}}))(?P=secret_b)(?!\())"
)
_SECRET_ASSIGNMENT = rf"(?:{_SECRET_KEY}|{_AUTH_HEADER}){_SECRET_VALUE}"

#: (id, pattern) for the key shapes we refuse to store or send. Order matters: the first
#: match names the shape, and ``private_key`` goes first so a key body is gone before other
#: shapes look at it; ``secret_assignment`` goes last so a known key keeps its own id.
SECRET_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("private_key", re.compile(_PRIVATE_KEY)),
    ("openai_key", re.compile(_OPENAI_KEY)),
    ("stripe_key", re.compile(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{10,200}")),
    ("stripe_webhook_secret", re.compile(r"\bwhsec_[A-Za-z0-9]{20,200}")),
    (
        "github_token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,200}|github_pat_[A-Za-z0-9_]{20,200})"),
    ),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("slack_token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,200}")),
    (
        "slack_webhook",
        re.compile(
            r"(?:\bhttps?://)?hooks\.slack\.com/(?:services|workflows|triggers)/"
            r"[A-Za-z0-9_/-]{8,300}"
        ),
    ),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("google_oauth_token", re.compile(r"\bya29\.[0-9A-Za-z_-]{20,2000}")),
    ("huggingface_token", re.compile(r"\bhf_[A-Za-z0-9]{30,200}")),
    ("npm_token", re.compile(r"\bnpm_[A-Za-z0-9]{36,200}")),
    (
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,2000}\.eyJ[A-Za-z0-9_-]{8,4000}\.[A-Za-z0-9_-]{0,2000}"),
    ),
    ("bearer_token", re.compile(r"\bBearer\s{1,5}[A-Za-z0-9._~+/=-]{12,2000}")),
    # Not our own label: ``scheme://[REDACTED:url_password]@host`` must not match again.
    ("url_password", re.compile(r"(?<=://)(?!\[REDACTED:)[^/\s:@]{1,200}:[^/\s@]{1,200}(?=@)")),
    ("secret_assignment", re.compile(_SECRET_ASSIGNMENT)),
)


#: Fragments at least one of which every pattern needs, in lower case: it runs on
#: ``text.lower()``, which makes the secret names case-blind at the cost of a plain scan
#: (an ``(?i:...)`` alternation here was 4-5x slower). One cheap scan rules most text out
#: before the patterns run. A secret name counts only with an ``=``, ``:`` or ``!=`` after it.
_PREFILTER: Final = re.compile(
    r"sk-|[sr]k_|whsec_|gh[pousr]_|github_pat_|akia|asia|xox[abprs]-|hooks\.slack\.com/|aiza"
    r"|ya29\.|hf_|npm_|eyj|bearer|://|-----begin|authorization"
    r"|(?:pass(?:word|wd|phrase)|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key"
    r"|credential)(?=([a-z0-9_.-]{0,60}))\1(?:\\?[\"'])?[ \t]{0,5}[:=!]"
)


def _may_hold_secret(text: str) -> bool:
    return _PREFILTER.search(text.lower()) is not None


def _value_only(label: str) -> Callable[[re.Match[str]], str]:
    """A replacement that swaps only the ``secret_*`` group of a match for ``label``."""

    def replace(match: re.Match[str]) -> str:
        whole, base = match.group(), match.start()
        for name in ("secret_q", "secret_b"):
            start, end = match.span(name)
            if start >= 0:
                return whole[: start - base] + label + whole[end - base :]
        return label  # pragma: no cover - every alternative captures a value

    return replace


_SUBSTITUTIONS: Final[tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...]] = (
    tuple(
        (
            pattern,
            _value_only(f"[REDACTED:{pattern_id}]")
            if "secret_b" in pattern.groupindex
            else f"[REDACTED:{pattern_id}]",
        )
        for pattern_id, pattern in SECRET_PATTERNS
    )
)


def looks_like_secret(text: str) -> str | None:
    """The id of the first key shape found in ``text``, or ``None``."""
    if not _may_hold_secret(text):
        return None
    for pattern_id, pattern in SECRET_PATTERNS:
        if pattern.search(text):
            return pattern_id
    return None


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED:<id>]``.

    For a ``secret_assignment`` only the value goes (``DB_PASSWORD=[REDACTED:...]``). Redacting
    twice gives the same text.
    """
    if not _may_hold_secret(text):
        return text
    for pattern, replacement in _SUBSTITUTIONS:
        text = pattern.sub(replacement, text)
    return text
