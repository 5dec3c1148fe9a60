"""The pieces every shape shares: where a shape starts, what a value is and what is not.

Kept apart so each family of shapes (:mod:`.assignments`, :mod:`.commands`, :mod:`.keys`)
reads the same rules; all repetition is bounded (see :mod:`hermes_core.secret_shapes`).
"""

from __future__ import annotations

from hermes_core.secret_vendors import START

__all__ = [
    "BARE",
    "BARE_END",
    "CLI_WORD",
    "DOTTED",
    "FLAG_VALUE",
    "LETTER",
    "NOT_A_VALUE",
    "PROSE",
    "REFERENCE",
    "SHORT_VALUE",
    "START",
    "TOKEN_VALUE",
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
#: Where a bare value may not end: before "(" it is a call (``get_token()``), before "[" a
#: type (``Optional[str]``) or an index, and never at one of our labels (there it was longer).
BARE_END = r"(?![(\[])"
#: A variable's reference where a password would be: ``$TOKEN``, ``${PW}``, ``$(cmd)``,
#: ``%PW%``. A placeholder filled in later, not a secret.
REFERENCE = r"(?:\$[{(A-Za-z_]|%[A-Za-z_][A-Za-z0-9_]{0,60}%)"
#: A dotted name (``self.token``, ``settings.api_key``, ``config.SECRET_KEY``): a bare value
#: that is an attribute of an object is code, not a secret. The first part holds no digit:
#: ``hunter2.example`` and ``Summer2024.Secure`` are passwords that happen to hold a dot.
DOTTED = (
    r"[A-Za-z_][A-Za-z_]{0,60}(?:\.[A-Za-z_][A-Za-z0-9_]{0,60}){1,8}"
    r"(?=[\s\"'`,;:()\[\]{}]|$)"
)
# A flag's argument, quoted (the quotes' content goes) or bare (taken whole).
FLAG_VALUE = (
    rf"(?:(?P<q>[\"'])(?!{NOT_A_VALUE})(?P<secret_q>(?:(?!(?P=q))[^\\\r\n]){{1,2000}})(?P=q)"
    rf"|(?!{NOT_A_VALUE})(?=(?P<secret_b>{BARE}{{1,2000}}))(?P=secret_b)(?!\[REDACTED:))"
)
# A command's word, taken whole (lookahead capture = atomic group): no backtracking inside one.
CLI_WORD = r"(?=(?P<word>[^\s|;&<>\"'`\\]{1,200}))(?P=word)"
# Prose is not a password: after ``docker login -u bob ... -p``, "when it asks", "with your
# token", "the --password option" or a ``# comment`` are words, left alone (an English
# function word as the value).
PROSE = (
    r"(?:#|(?i:and|or|but|the|a|an|to|with|then|when|if|is|for|in|on|of|you|your|it|this"
    r"|that|flags?|options?|prompts?)(?![^\s.,;:!?]))"
)
SHORT_VALUE = "(?!" + PROSE + ")" + FLAG_VALUE.replace("{1,2000}", "{1,200}")
# A token given to an option (``--token X``): 8+ characters holding a digit, or 20+ (an
# option's argument may be a name: ``--secret my-secret-name`` passes), not prose.
_TOKEN_BODY = r"[^\"'\\\r\n]"
TOKEN_VALUE = (
    rf"(?!{PROSE})(?:(?P<q>[\"'])(?!{NOT_A_VALUE})"
    rf"(?={_TOKEN_BODY}{{0,200}}?[0-9]|[^\"'\\\s]{{20}})"
    rf"(?=(?P<secret_q>{_TOKEN_BODY}{{8,2000}}))(?P=secret_q)(?=(?P=q))"
    rf"|(?!{NOT_A_VALUE})(?={BARE}{{0,200}}?[0-9]|{BARE}{{20}})"
    rf"(?=(?P<secret_b>{BARE}{{8,2000}}))(?P=secret_b){BARE_END})"
)
