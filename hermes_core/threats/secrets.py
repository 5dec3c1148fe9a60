"""Hard-coded secrets: key shapes and ``name = long literal`` assignments.

The shapes are :mod:`hermes_core.redact`'s, the same list that keeps secrets out of
summaries and provider calls, so a key recognised there is refused here. Memory is not a
vault: a secret written there reaches every future prompt. Obvious placeholders
(``password: changeme``, ``api_key = "<your key>"``, ``postgres://user:password@...``)
are not secrets and pass.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from hermes_core.redact import SECRET_PATTERNS, looks_like_secret
from hermes_core.threats.rules import STRICT_ONLY, Rule

#: ``redact`` ids that are a ``name = value`` pair (or URL credentials), not a key shape.
_ASSIGNMENT_IDS: Final = frozenset({"secret_assignment", "url_password"})
_PLACEHOLDER: Final = re.compile(
    r"(?:x{3,100}|\*{3,100}|\.{3,100}|<[^<>]{0,60}>|\{\{?[^{}]{0,60}\}\}?|(?:your|my|the)[\w-]{0,40}"
    r"|(?:change|replace)[_-]?me|placeholder|example|sample|dummy|redacted|secret|password"
    r"|passwd|pass|postgres|admin|root|user|test|testing|none|null|todo|tbd|hunter2)",
    re.IGNORECASE,
)
_MAX_MATCHES = 50


def _real_value(pattern_id: str, match: re.Match[str]) -> bool:
    """Whether a matched secret is a real value rather than a placeholder."""
    if pattern_id == "secret_assignment":
        for group in ("secret_q", "secret_b"):
            value = match.group(group)
            if value is not None:
                return not _PLACEHOLDER.fullmatch(value.strip())
        return True  # pragma: no cover - every alternative captures a value
    if pattern_id == "url_password":
        password = match.group().split(":", 1)[1]
        return not _PLACEHOLDER.fullmatch(password)
    return True


@lru_cache(maxsize=4)
def _secrets(text: str) -> tuple[str | None, str | None]:
    """The first real key shape and the first real assignment in ``text``.

    Both rules ask about the same text in turn; the cache runs the shapes once.
    """
    if looks_like_secret(text) is None:
        return None, None
    found: dict[bool, str] = {}
    for pattern_id, pattern in SECRET_PATTERNS:
        assignment = pattern_id in _ASSIGNMENT_IDS
        if assignment in found:
            continue
        for count, match in enumerate(pattern.finditer(text)):
            if count >= _MAX_MATCHES:
                break
            if _real_value(pattern_id, match):
                found[assignment] = f"{pattern_id}: {match.group()}"
                break
    return found.get(False), found.get(True)


def find_key_shape(text: str) -> str | None:
    """The first known key shape (``sk-...``, ``ghp_...``, ``AKIA...``, ``xoxb-...``, PEM)."""
    return _secrets(text)[0]


def find_assignment(text: str) -> str | None:
    """The first ``api_key/token/password = long literal`` or URL with a password."""
    return _secrets(text)[1]


RULES: Final = (
    Rule(
        "hardcoded_key_shape",
        "hardcoded_secret",
        "a known API key or private key shape",
        STRICT_ONLY,
        check=find_key_shape,
    ),
    Rule(
        "hardcoded_secret_assignment",
        "hardcoded_secret",
        "a password, token or API key assigned a literal value",
        STRICT_ONLY,
        check=find_assignment,
    ),
)
