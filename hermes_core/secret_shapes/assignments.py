"""Secret assignments: ``NAME=value``, ``"name": "value"``, ``Authorization: token x``, and
password words in English and other languages (``password=hunter2``, ``密码：abc``)."""

from __future__ import annotations

import re
from typing import Final

from hermes_core.secret_shapes.values import BARE as _BARE
from hermes_core.secret_shapes.values import BARE_END as _BARE_END
from hermes_core.secret_shapes.values import DOTTED as _DOTTED
from hermes_core.secret_shapes.values import LETTER as _LETTER
from hermes_core.secret_shapes.values import NOT_A_VALUE as _NOT_A_VALUE

__all__ = [
    "ENV_AUTH_ASSIGNMENT",
    "ENV_KEY_ASSIGNMENT",
    "LOCAL_PASSWORD_ASSIGNMENT",
    "PASSWORD_ASSIGNMENT",
    "PASSWORD_WORDS",
    "PWD",
    "SECRET_ASSIGNMENT",
]

#: "Password" in other languages, lower case (the prefilter runs on ``text.lower()``). None
#: has a letter whose lower case is two characters (Turkish "İ"), which would defeat that.
PASSWORD_WORDS: Final = (
    "пароль",  # Russian, Ukrainian, Bulgarian
    "密码",  # Chinese (simplified)
    "密碼",  # Chinese (traditional)
    "口令",
    "パスワード",  # Japanese
    "暗証番号",
    "비밀번호",  # Korean
    "패스워드",
    "암호",
    "passwort",  # German
    "kennwort",
    "contraseña",  # Spanish
    "contrasena",
    "mot de passe",  # French
    "mot-de-passe",
    "senha",  # Portuguese
    "palavra-passe",
    "palavra passe",
    "parola d'ordine",  # Italian (which mostly says "password")
    "parola chiave",
    "parola",  # Italian, Romanian, Turkish
    "wachtwoord",  # Dutch
    "hasło",  # Polish
    "haslo",
    "heslo",  # Czech, Slovak
    "lösenord",  # Swedish
    "adgangskode",  # Danish
    "passord",  # Norwegian
    "salasana",  # Finnish
    "jelszó",  # Hungarian
    "κωδικός",  # Greek
    "mật khẩu",  # Vietnamese
    "kata sandi",  # Indonesian
)
_LOCAL_PASSWORD = "|".join(re.escape(word) for word in PASSWORD_WORDS)
# "pwd" is a name of its own or its last part (``MYSQL_PWD``, ODBC's ``;PWD=``), with a value
# that is not a path (the shell's PWD is a directory; OLDPWD is another word).
PWD = r"(?<![A-Za-z0-9])pwd(?![A-Za-z0-9_.-]{0,60}(?:\\?[\"'])?[ \t]{0,5}[:=][ \t]{0,5}[\"']?[/~])"
# A name holding one of the words below, as a word or inside an identifier. "tokens",
# "tokenizer" and "token_type" are counts and kinds, not secrets.
_SECRET_NAME = (
    r"(?i:pass(?:word|wd|phrase)|secret|token(?!s|iz|_?type)|api[_-]?key|access[_-]?key"
    rf"|private[_-]?key|credential|{PWD})"
)
# After "==" or "!=" only a quoted value is one: a bare word there is the other side of a
# comparison (``if token != expected_token:``).
_ASSIGN = r"(?::=|=>|(?P<cmp>==|!=)|[:=])"
# The name is read from the start of its identifier (``identity_token``, not ``token``:
# up to 200 characters before the secret word), so a value can be compared with it; the rest
# of the name is taken whole (lookahead capture = atomic group): no backtracking.
_NAME_START = r"(?<![A-Za-z0-9_])"
_NAME_PREFIX = r"[A-Za-z0-9_]{0,200}?"
# A name whose last part is not a secret's (``TOKEN_COMMENT_BEGIN``, ``api_key_help``) names
# a kind of thing: given prose (``"begin of comment"``), it is an enum or a label.
_SECRETISH = (
    r"(?i:pass|pwd|secret|token|key|cred|auth|private|sig|salt|seed|hash|phrase|word|answer"
    r"|pin|code|value|text|string|data)"
)
# Each is a group set exactly when its condition holds (either branch, never skipped: an
# optional group would be dropped on backtracking and the rule with it).
_THING_LAST = rf"[A-Za-z0-9_.-]{{0,60}}?[_.-](?!{_SECRETISH})[A-Za-z]{{1,30}}(?![A-Za-z0-9_.-])"
_NAMES_A_THING = rf"(?:(?={_THING_LAST})(?P<thing>)|(?!{_THING_LAST}))"
# ``x.type == "lbracket"``, ``node.kind != "string"``: a kind compared, not a secret.
_KIND_END = r"[._](?i:type|kind)"
_A_KIND = rf"(?:(?<={_KIND_END})(?P<kind>)|(?<!{_KIND_END}))"
_SECRET_KEY = (
    rf"{_NAME_START}(?P<name>{_NAME_PREFIX}{_SECRET_NAME}{_NAMES_A_THING}"
    rf"(?=(?P<rest>[A-Za-z0-9_.-]{{0,60}}))(?P=rest)){_A_KIND}"
    rf"(?:\\?[\"'])?[ \t]{{0,5}}{_ASSIGN}"
)
_AUTH_HEADER = (
    r"(?i:authorization)(?:\\?[\"'])?[ \t]{0,5}[:=][ \t]{0,5}(?:\\?[\"'])?"
    r"(?i:token|basic|bearer|digest)[ \t]"
)
# Quoted: 6+ characters up to the closing quote. Bare: 8+ characters with a letter (so
# ``max_tokens: 4096``-style numbers pass), taken whole (lookahead capture = atomic group)
# and neither a call (``token = get_token()``), a type (``Optional[str]``) nor a dotted name
# (``self.token``). Only the value is redacted; the name stays. A bare value never ends at a
# ``[REDACTED:`` label: there it was longer before (see ``values.START``).
# A bare value that is the name itself (``password=password``, ``pwd=pwd``,
# ``self.credentials = credentials``) passes a variable on: code, not a secret.
_OWN_NAME = rf"(?P=name)(?!{_BARE})"
_PROSE_VALUE = r"[A-Za-z]{1,30}(?: [A-Za-z]{1,30}){1,12}\\?(?P=q)"
_SECRET_VALUE = (
    rf"[ \t]{{0,5}}(?:\\?(?P<q>[\"'])(?!{_NOT_A_VALUE})(?(kind)(?(cmp)(?!)))"
    rf"(?(thing)(?!{_PROSE_VALUE}))(?P<secret_q>(?:(?!(?P=q))[^\\\r\n]){{6,2000}})"
    rf"|(?(cmp)(?!))(?!{_NOT_A_VALUE}|{_DOTTED}|{_OWN_NAME})(?={_BARE}{{0,2000}}?{_LETTER})"
    rf"(?=(?P<secret_b>{_BARE}{{8,2000}}))(?P=secret_b){_BARE_END})"
)
SECRET_ASSIGNMENT = rf"(?:{_SECRET_KEY}|{_AUTH_HEADER}){_SECRET_VALUE}"

# --- Password words: ``password=hunter2``, ``PASSWORD: abc``, ``密码：abc``, ``пароль: …`` ---
# After a password word (English or one of PASSWORD_WORDS) that ends the name (``password``,
# ``DB_PASSWORD``, ``пароль``; not ``password_min_length``), values of any length, also under
# the 8 (bare) or 6 (quoted) characters above. A bare value still needs a letter
# (``password_max_age: 90`` and ``password=1234`` pass: numbers under a password name are
# mostly settings) and is taken whole; words that are types or placeholders (``password: str``,
# ``password=None``, ``"password": true``) pass. After a plain ":" (prose more than code), a
# value followed by another word is a sentence ("Password: see the vault"), not a password.
# Own patterns (English, other languages), not more names in ``_SECRET_NAME``: 33 more
# case-blind alternatives there made every position of every text 3-4x slower to scan.
_PLACEHOLDER_WORD = (
    r"(?i:true|false|null|none|nil|yes|no|on|off|str|string|bytes|int|bool|text|any|object"
    r"|empty|unset|hidden|masked|secret)"
)


def _password_value(own_name: str) -> str:
    """What follows a password word: an operator and a value (``own_name``: what a bare
    value may not be, or "" for no such rule)."""
    return (
        rf"(?![A-Za-z0-9_.-])(?:\\?[\"'])?[ \t]{{0,5}}"
        rf"(?:(?P<colon>:)(?!=)|:=|=>|(?P<cmp>==|!=)|=)[ \t]{{0,5}}"
        rf"(?:\\?(?P<q>[\"'])(?!{_NOT_A_VALUE}|{_PLACEHOLDER_WORD}\\?(?P=q))"
        rf"(?P<secret_q>(?:(?!(?P=q))[^\\\r\n]){{1,2000}})"
        rf"|(?(cmp)(?!))(?!{_NOT_A_VALUE}|{_DOTTED}|{_PLACEHOLDER_WORD}(?!{_BARE}){own_name})"
        rf"(?={_BARE}{{0,2000}}?{_LETTER})(?=(?P<secret_b>{_BARE}{{1,2000}}))(?P=secret_b)"
        rf"{_BARE_END}(?(colon)(?![ \t]{{1,5}}(?:{_LETTER}|\[REDACTED:))))"
    )


# Environment names whose last part is ``PASS`` (``DB_PASS``, ``ANSIBLE_BECOME_PASS``; and
# ``SSHPASS``, sshpass's own): capitals only, a whole part (``COMPASS``, ``BYPASS`` are words).
_ENV_PASS = r"(?:(?<=[A-Z0-9]_)|(?<=SSH))PASS"
PASSWORD_ASSIGNMENT = (
    rf"{_NAME_START}(?P<name>{_NAME_PREFIX}(?:(?i:pass(?:word|wd|phrase)|{PWD})|{_ENV_PASS}))"
    rf"{_password_value('|' + _OWN_NAME)}"
)
LOCAL_PASSWORD_ASSIGNMENT = rf"(?i:{_LOCAL_PASSWORD}){_password_value('')}"


def _random_value(shortest: int) -> str:
    """A value that looks made, not written: ``shortest``+ characters with a digit and a
    letter, quoted or bare; not a reference, a path or a dotted name."""
    body = r"[^\"'\\\s]"
    return (
        rf"(?:\\?(?P<q>[\"'])(?!{_NOT_A_VALUE}|/)(?={body}{{0,200}}?[0-9])"
        rf"(?={body}{{0,200}}?{_LETTER})(?=(?P<secret_q>{body}{{{shortest},2000}}))(?P=secret_q)"
        rf"(?=\\?(?P=q))"
        rf"|(?!{_NOT_A_VALUE}|/|{_DOTTED})(?={_BARE}{{0,200}}?[0-9])(?={_BARE}{{0,200}}?{_LETTER})"
        rf"(?=(?P<secret_b>{_BARE}{{{shortest},2000}}))(?P=secret_b){_BARE_END})"
    )


# Environment names whose last part is ``AUTH`` or ``KEY`` (``REDISCLI_AUTH``, ``NPM_AUTH``,
# ``SENDGRID_KEY``): capitals only, and a value with a digit and a letter, 8+ characters for
# a key. These parts also name settings (``MY_AUTH=basic``, ``PRIMARY_KEY=id``,
# ``SORT_KEY=created_at``, ``SSH_KEY=~/.ssh/id``), which pass.
_ENV_ASSIGN = r"(?![A-Za-z0-9_.-])(?:\\?[\"'])?[ \t]{0,5}(?::=|=>|[:=])[ \t]{0,5}"
ENV_AUTH_ASSIGNMENT = rf"(?<=[A-Z0-9]_)AUTH{_ENV_ASSIGN}{_random_value(1)}"
ENV_KEY_ASSIGNMENT = rf"(?<=[A-Z0-9]_)KEY{_ENV_ASSIGN}{_random_value(8)}"
