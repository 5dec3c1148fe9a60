"""The pieces every shape shares: where a shape starts, what a value is and what is not.

Kept apart so each family of shapes (:mod:`.assignments`, :mod:`.commands`, :mod:`.keys`)
reads the same rules; all repetition is bounded (see :mod:`hermes_core.secret_shapes`).
"""

from __future__ import annotations

from hermes_core.secret_vendors import START

__all__ = [
    "BARE",
    "CLI_WORD",
    "FLAG_VALUE",
    "LETTER",
    "NOT_A_VALUE",
    "PROSE",
    "SHORT_VALUE",
    "START",
]

# Values that are references, not secrets: ``$FOO``, ``${FOO}``, ``%FOO%``, ``{$env: FOO}``,
# ``os.environ[...]``, ``os.getenv(...)``, ``process.env.FOO``, an environment variable's name
# (``OPENAI_API_KEY``: capitals, digits and at least one "_"), a URL (its credentials are
# ``url_password``'s), a home- or dot-relative path, and our own ``[REDACTED:...]``
# (so redacting twice changes nothing).
NOT_A_VALUE = (
    r"(?:\$[{(A-Za-z_]|%[A-Za-z_]|\{|<|\[REDACTED:|~/|\.{1,2}/"
    r"|[A-Za-z][A-Za-z0-9+.-]{0,20}://"
    r"|os\.environ|os\.getenv|process\.env|(?i:getenv)\b"
    r"|(?=[A-Z0-9]{0,100}_)[A-Z_][A-Z0-9_]{0,200}(?:[\s\"'`,;&)}\]\\]|$))"
)
BARE = r"[^\s\"'`,;&(){}\[\]<>\\]"
LETTER = r"[^\W\d_]"  # a letter of any script
# A flag's argument, quoted (the quotes' content goes) or bare (taken whole).
FLAG_VALUE = (
    rf"(?:(?P<q>[\"'])(?!{NOT_A_VALUE})(?P<secret_q>(?:(?!(?P=q))[^\\\r\n]){{1,2000}})(?P=q)"
    rf"|(?!{NOT_A_VALUE})(?=(?P<secret_b>{BARE}{{1,2000}}))(?P=secret_b)(?!\[REDACTED:))"
)
# A command's word, taken whole (lookahead capture = atomic group): no backtracking inside one.
CLI_WORD = r"(?=(?P<word>[^\s|;&<>\"'`\\]{1,200}))(?P=word)"
# Prose is not a password: after ``docker login -u bob ... -p``, "when it asks", "with your
# token" or a ``# comment`` are words, left alone (an English function word as the value).
PROSE = (
    r"(?:#|(?i:and|or|but|the|a|an|to|with|then|when|if|is|for|in|on|of|you|your|it|this"
    r"|that|flag|option|prompts?)(?![^\s.,;:!?]))"
)
SHORT_VALUE = "(?!" + PROSE + ")" + FLAG_VALUE.replace("{1,2000}", "{1,200}")
