"""What a secret looks like: the key shapes, each with its gate, for :mod:`hermes_core.redact`.

Patterns have bounded repetition so hostile input cannot make them backtrack for long, and no
match is longer than about 8,000 characters (``hermes_core.compression.serialize`` redacts
windows with an 8,192-character margin that relies on that). Each pattern has a gate
(literals or a small regex it cannot match without), so text holding no secret costs a few
substring scans and only the patterns whose gates open run at all. Finding, folding and
replacing live in :mod:`hermes_core.redact`; this module is only the catalogue.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from hermes_core.secret_vendors import COMMAND_OPTIONS, START, VENDOR_SHAPES

__all__ = ["SECRET_PATTERNS"]

#: Where a key shape may start (see :data:`hermes_core.secret_vendors.START`).
_START = START

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
# ``sk-`` at a word start as before (16+ body chars). A key glued to a preceding letter,
# digit or underscore (``xsk-proj-...``, ``KEY_sk-...``) is caught too, but only with a long
# body (32+) holding a digit, an upper-case letter and a run of 16 letters and digits: that
# rules out kebab-case words ending in "sk" ("task-runner", "Kiosk-Mode-2024-Release-Notes")
# while real keys (48+ mixed chars) still match. Other prefixes keep their word start:
# only ``sk-`` keys were seen glued. Anthropic keys (``sk-ant-api03-...``) are this shape and
# report as ``openai_key``.
_OPENAI_KEY = (
    rf"{_START}sk-(?:proj-|ant-)?[A-Za-z0-9_-]{{16,200}}"
    r"|(?<=[A-Za-z0-9_])sk-(?=[A-Za-z0-9_-]{0,200}?[0-9])(?=[A-Za-z0-9_-]{0,200}?[A-Z])"
    r"(?=[A-Za-z0-9_-]{0,200}?[A-Za-z0-9]{16})[A-Za-z0-9_-]{32,200}"
)

# --- Secret assignments: ``NAME=value``, ``"name": "value"``, ``Authorization: token x`` -------
#: "Password" in other languages, lower case (the prefilter runs on ``text.lower()``). None
#: has a letter whose lower case is two characters (Turkish "İ"), which would defeat that.
_PASSWORD_WORDS: Final = (
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
_LOCAL_PASSWORD = "|".join(re.escape(word) for word in _PASSWORD_WORDS)
# "pwd" needs a "_", "." or "-" before it and a value that is not a path (the shell's PWD /
# OLDPWD are directories).
_PWD = r"(?<=[_.-])pwd(?![A-Za-z0-9_.-]{0,60}(?:\\?[\"'])?[ \t]{0,5}[:=][ \t]{0,5}[\"']?[/~])"
# A name holding one of the words below, as a word or inside an identifier. "tokens",
# "tokenizer" and "token_type" are counts and kinds, not secrets.
_SECRET_NAME = (
    r"(?i:pass(?:word|wd|phrase)|secret|token(?!s|iz|_?type)|api[_-]?key|access[_-]?key"
    rf"|private[_-]?key|credential|{_PWD})"
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
_LETTER = r"[^\W\d_]"  # a letter of any script
# Quoted: 6+ characters up to the closing quote. Bare: 8+ characters with a letter (so
# ``max_tokens: 4096``-style numbers pass), taken whole (lookahead capture = atomic group)
# and not a call (``token = get_token()``). Only the value is redacted; the name stays. A bare
# value never ends at a ``[REDACTED:`` label: there it was longer before (see ``_START``).
_SECRET_VALUE = (
    rf"[ \t]{{0,5}}(?:\\?(?P<q>[\"'])(?!{_NOT_A_VALUE})"
    rf"(?P<secret_q>(?:(?!(?P=q))[^\\\r\n]){{6,2000}})"
    rf"|(?!{_NOT_A_VALUE})(?={_BARE}{{0,2000}}?{_LETTER})"
    rf"(?=(?P<secret_b>{_BARE}{{8,2000}}))(?P=secret_b)(?!\(|\[REDACTED:))"
)
_SECRET_ASSIGNMENT = rf"(?:{_SECRET_KEY}|{_AUTH_HEADER}){_SECRET_VALUE}"

# --- Password words: ``password=hunter2``, ``PASSWORD: abc``, ``密码：abc``, ``пароль: …`` ---
# After a password word (English or one of _PASSWORD_WORDS) that ends the name (``password``,
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
_PASSWORD_VALUE = (
    rf"(?![A-Za-z0-9_.-])(?:\\?[\"'])?[ \t]{{0,5}}"
    rf"(?:(?P<colon>:)(?!=)|:=|=>|==|!=|=)[ \t]{{0,5}}"
    rf"(?:\\?(?P<q>[\"'])(?!{_NOT_A_VALUE}|{_PLACEHOLDER_WORD}\\?(?P=q))"
    rf"(?P<secret_q>(?:(?!(?P=q))[^\\\r\n]){{1,2000}})"
    rf"|(?!{_NOT_A_VALUE}|{_PLACEHOLDER_WORD}(?!{_BARE}))(?={_BARE}{{0,2000}}?{_LETTER})"
    rf"(?=(?P<secret_b>{_BARE}{{1,2000}}))(?P=secret_b)(?!\(|\[REDACTED:)"
    rf"(?(colon)(?![ \t]{{1,5}}(?:{_LETTER}|\[REDACTED:))))"
)
# Environment names ending in ``PASS`` or ``_AUTH`` (``SSHPASS``, ``DB_PASS``,
# ``REDISCLI_AUTH``): capitals only, after a capital, digit or "_" (``compass`` is a word).
_ENV_PASS = r"(?<=[A-Z0-9_])PASS|(?<=[A-Z0-9]_)AUTH"
_PASSWORD_ASSIGNMENT = rf"(?:(?i:pass(?:word|wd|phrase)|{_PWD})|{_ENV_PASS}){_PASSWORD_VALUE}"
_LOCAL_PASSWORD_ASSIGNMENT = rf"(?i:{_LOCAL_PASSWORD}){_PASSWORD_VALUE}"

# --- Passwords on command lines and in .netrc ----------------------------------------------------
# ``.netrc``: ``machine HOST [login|account|port X]... password SECRET``, on one line or several
# (also with ``\n`` escapes, as inside a JSON string). Tokens are whitespace-separated, so each
# is taken whole and a scan from one "machine" covers at most five tokens.
_NETRC_GAP = r"(?:[ \t\r\n]|\\[nrt]){1,20}"
_NETRC = (
    rf"{_START}(?:machine{_NETRC_GAP}[^\s\\]{{1,255}}|default)"
    rf"(?:{_NETRC_GAP}(?:login|account|port){_NETRC_GAP}[^\s\\]{{1,255}}){{0,3}}"
    rf"{_NETRC_GAP}password{_NETRC_GAP}(?!\[REDACTED:)(?P<secret_b>[^\s\\\"]{{1,2000}})"
)
# ``--password X``, ``--db-password X``, ``-passphrase X``, keytool's ``-storepass X``: a
# flag and its argument (``--password=X`` is an assignment, above; ``--no-password`` and
# ``--password-file`` are not this). A quoted argument loses what is inside the quotes.
_FLAG_VALUE = (
    rf"(?:(?P<q>[\"'])(?!{_NOT_A_VALUE})(?P<secret_q>(?:(?!(?P=q))[^\\\r\n]){{1,2000}})(?P=q)"
    rf"|(?!{_NOT_A_VALUE})(?=(?P<secret_b>{_BARE}{{1,2000}}))(?P=secret_b)(?!\[REDACTED:))"
)
_PASSWORD_FLAG = (
    r"(?<![A-Za-z0-9_\]-])(?:--(?!no-)(?:[a-z0-9]{1,20}-){0,3}pass(?:word|wd|phrase)"
    r"|-(?:pass(?:word|wd|phrase)|(?:src|dest)?(?:store|key)pass))"
    rf"[ \t]{{1,5}}(?!-){_FLAG_VALUE}"
)
# The MySQL family takes the password glued to ``-p`` (``mysql -uroot -pSECRET db``; a bare
# ``-p`` prompts, and the next word is the database). The option is looked for among the next
# 20 words of the same command (each word taken whole: no backtracking inside one).
_MYSQL = (
    r"(?<![A-Za-z0-9_.\]-])(?:mysql(?:dump|admin|import|check|show|slap|binlog|pump|sh)?"
    r"|mariadb(?:-?dump|-?admin|-?import|-?check)?)"
    r"(?:[ \t]{1,5}(?!-p)(?=(?P<word>[^\s|;&<>\"'`\\]{1,200}))(?P=word)){0,20}"
    rf"[ \t]{{1,5}}-p{_FLAG_VALUE.replace('{1,2000}', '{1,200}')}"
)

# --- Credentials in URLs -----------------------------------------------------------------------
# ``user:password@`` after ``scheme://`` of any scheme (``redis://:pw@host``: the user may be
# empty; ``mongodb+srv://``, ``amqp://``, ``ftp://``), also with JSON's escaped slashes
# (``redis:\/\/:pw@host``). A password may hold a raw "@" (``:p@ss@host``): like
# ``urllib.parse``, the credentials run to the last "@" before the host (at most 3 more "@").
# Not our own label: ``scheme://[REDACTED:url_password]@host`` must not match again.
_URL_PASSWORD = (
    r"(?:(?<=://)|(?<=:\\/\\/))(?!\[REDACTED:)[^/\\\s:@?#]{0,200}:[^/\s@?#]{1,200}"
    r"(?:@[^/\s@?#]{1,200}){0,3}(?=@)"
)
# The authority ends at the first "/", "?" or "#" (as for ``urllib.parse``): a query holding
# ``a:b@c`` is not credentials. A URL inside another, percent-encoded
# (``?next=https%3A%2F%2Fbob%3Apw%40host``): the password between ``%3A`` and ``%40``.
_ENCODED_URL_PASSWORD = (
    r"(?<=%3[Aa]%2[Ff]%2[Ff])(?:[^\s%@:/?#&]|%(?!3[Aa]|40|2[Ff])[0-9A-Fa-f]{2}){0,200}"
    r"(?:%3[Aa]|:)(?!\[REDACTED:)(?P<secret_b>(?:[^\s%@/?#&]|%(?!40|2[Ff])[0-9A-Fa-f]{2}){1,200})"
    r"(?=%40|@)"
)

# --- Passwords given to other commands ----------------------------------------------------------
# Like ``_MYSQL``: a command, up to 20 of its words (each taken whole), then its password
# option (the catalogue: ``secret_vendors.COMMAND_OPTIONS``); ``curl -u user:X`` loses only
# the password, quoted with spaces too. The option found is the first (no word before it is
# the option) and no word is one of our labels, so redacting twice finds what redacting once
# did. Prose is not a password: after ``docker login -u bob ... -p``, "when it asks", "with
# your token" or a ``# comment`` are words, left alone (an English function word as the value).
_CLI_WORD = r"(?=(?P<word>[^\s|;&<>\"'`\\]{1,200}))(?P=word)"
_PROSE = (
    r"(?:#|(?i:and|or|but|the|a|an|to|with|then|when|if|is|for|in|on|of|you|your|it|this"
    r"|that|flag|option|prompts?)(?![^\s.,;:!?]))"
)
_SHORT_VALUE = "(?!" + _PROSE + ")" + _FLAG_VALUE.replace("{1,2000}", "{1,200}")
_SEPARATORS: Final = {"spaced": r"[ \t]{1,5}(?!-)", "any": r"(?:[ \t]{1,5}(?!-)|=)?", "glued": ""}


def _user_value(separator: str) -> str:
    """``user<separator>password``, bare or quoted (``'admin:s3 cret'``): the password."""
    return (
        rf"(?:(?P<q>[\"'])[^{separator}\"'\\\r\n]{{0,200}}[{separator}](?!\[REDACTED:)"
        rf"(?P<secret_q>[^\"'\\\r\n]{{1,200}})(?=(?P=q))"
        rf"|[^\s{separator}\"'\\]{{0,200}}[{separator}](?!\[REDACTED:)"
        rf"(?P<secret_b>[^\s\"'\\]{{1,200}}))"
    )


_VALUES: Final = {
    "password": _SHORT_VALUE,
    "user:password": _user_value(":%"),
    "user,password": _user_value(","),
}


def _command_option(command: str, option: str, separator: str, value: str) -> str:
    return (
        rf"(?<![A-Za-z0-9_.\]-])(?:{command})(?![A-Za-z0-9_-])"
        rf"(?:[ \t]{{1,5}}(?!\[REDACTED:|(?:{option})(?![A-Za-z-])){_CLI_WORD}){{0,20}}"
        rf"[ \t]{{1,5}}(?:{option}){_SEPARATORS[separator]}{_VALUES[value]}"
    )


# Bespoke: ``openssl ... -pass pass:X`` (``-passin``/``-passout``; ``env:``/``file:`` name
# where it is), ``htpasswd -b[c|n...] [file] user X``, Windows ``net use \\srv\share X`` and
# ``net use ... /user:u X``, ``/p:X`` and ``/pass:X`` options (xfreerdp, cmdkey), Oracle's
# ``sqlplus user/X@db``. Words that may hold "\" (Windows paths) are taken whole too.
_WIN_WORD = r"(?=(?P<w>[^\s\"'`]{1,200}))(?P=w)"
_OPENSSL = (
    r"(?<![A-Za-z0-9_-])-pass(?:in|out|word)?[ \t]{1,5}(?:(?P<q>[\"'])pass:(?!\[REDACTED:)"
    r"(?P<secret_q>[^\"'\\\r\n]{1,200})(?P=q)|pass:(?!\[REDACTED:)(?P<secret_b>[^\s\"'`\\]{1,200}))"
)
_HTPASSWD = (
    r"(?<![A-Za-z0-9_.-])htpasswd(?=(?:[ \t]{1,5}-[A-Za-z]{1,10}){0,4}?[ \t]{1,5}-[A-Za-z]{0,9}b)"
    rf"(?:[ \t]{{1,5}}-[A-Za-z]{{1,10}}){{1,5}}(?:[ \t]{{1,5}}(?!-){_CLI_WORD}){{1,2}}"
    rf"[ \t]{{1,5}}(?!-){_SHORT_VALUE}(?![ \t]{{1,5}}\[REDACTED:)"
)
_NET_USE_VALUE = rf"[ \t]{{1,5}}(?![/*-]){_SHORT_VALUE}"
_NET_USE = (
    r"(?<![A-Za-z0-9_.-])net[ \t]{1,5}use(?:[ \t]{1,5}(?:[A-Za-z]:|\*))?"
    rf"[ \t]{{1,5}}\\\\[^\s\\\"']{{1,200}}(?:\\[^\s\\\"']{{1,200}}){{0,8}}{_NET_USE_VALUE}"
)
_NET_USER = (
    rf"(?<![A-Za-z0-9_.-])net[ \t]{{1,5}}use(?:[ \t]{{1,5}}(?!/u(?:ser)?:){_WIN_WORD}){{0,6}}"
    rf"[ \t]{{1,5}}/(?i:u|user):[^\s\"'`]{{1,200}}{_NET_USE_VALUE}"
)
_SLASH_PASSWORD = rf"(?<=[ \t])/(?i:p|pass|password):(?!\[REDACTED:){_SHORT_VALUE}"
_SQLPLUS = (
    r"(?<![A-Za-z0-9_.-])(?:sqlplus|sqlldr|expdp|impdp|rman|dgmgrl)"
    r"(?:[ \t]{1,5}-[A-Za-z]{1,10}){0,4}[ \t]{1,5}[^\s/@\"'\\]{1,100}/(?!\[REDACTED:)"
    r"(?P<secret_b>[^\s/@\"'\\]{1,200})"
)

# --- Azure connection strings ----------------------------------------------------------------
# ``DefaultEndpointsProtocol=https;AccountName=x;AccountKey=<base64>;EndpointSuffix=...`` and
# Service Bus / Event Hubs ``SharedAccessKey=...``: the value up to the next ";".
_AZURE_KEY = (
    rf"{_START}(?i:AccountKey|SharedAccessKey|SharedAccessSignature)[ \t]{{0,3}}=[ \t]{{0,3}}"
    r"(?!\[REDACTED:)(?P<secret_b>[^;\s\"'`<>\\]{1,2000})"
)

# --- The shapes, each with its gate ---------------------------------------------------------------
#: A gate is what a pattern's every match holds, in lower case: literals (any one) or a small
#: regex, looked for in ``text.lower()``. A pattern runs only when its gate opens, and text
#: that opens none (most text) costs a few substring scans: plain ``in`` tests run at memory
#: speed, where one alternation of all the literals was 4x slower (sre tries each branch at
#: each position). Lower-casing makes the names case-blind for the gates (an ``(?i:...)``
#: alternation was 4-5x slower). A secret name counts only with an ``=``, ``:`` or ``!=`` after
#: it; a password word in .netrc or a flag, with a blank.


@dataclass(frozen=True)
class _Gate:
    """Opens when a literal is in the lower-cased text or a pattern matches there;
    ``non_ascii`` is looked for only in text with a non-ASCII character (each of its
    alternatives has one), ``folded`` in the text before lower-casing."""

    literals: tuple[str, ...] = ()
    patterns: tuple[re.Pattern[str], ...] = ()
    non_ascii: re.Pattern[str] | None = None
    folded: re.Pattern[str] | None = None

    def opens(self, lowered: str, folded: str) -> bool:
        return (
            any(literal in lowered for literal in self.literals)
            or any(pattern.search(lowered) for pattern in self.patterns)
            or (
                self.non_ascii is not None
                and not lowered.isascii()
                and self.non_ascii.search(lowered) is not None
            )
            or (self.folded is not None and self.folded.search(folded) is not None)
        )


def _literals(*literals: str) -> _Gate:
    return _Gate(literals=literals)


_GATE_ASSIGN = r"(?:\\?[\"'])?[ \t]{0,5}[:=!]"
_NAME_GATE: Final = _Gate(
    literals=("authorization",),
    patterns=(
        re.compile(
            r"(?:pass(?:word|wd|phrase)|pwd|secret|token|api[_-]?key|access[_-]?key"
            rf"|private[_-]?key|credential)(?=([a-z0-9_.-]{{0,60}}))\1{_GATE_ASSIGN}"
        ),
    ),
)
_ASCII_WORDS = "|".join(re.escape(word) for word in _PASSWORD_WORDS if word.isascii())
_OTHER_WORDS = "|".join(re.escape(word) for word in _PASSWORD_WORDS if not word.isascii())
_PASSWORD_GATE: Final = _Gate(
    patterns=(re.compile(rf"(?:pass(?:word|wd|phrase)?|pwd|_auth){_GATE_ASSIGN}"),),
)
_LOCAL_PASSWORD_GATE: Final = _Gate(
    patterns=(re.compile(rf"(?:{_ASCII_WORDS}){_GATE_ASSIGN}"),),
    non_ascii=re.compile(rf"(?:{_OTHER_WORDS}){_GATE_ASSIGN}"),
)
_FLAG_GATE: Final = _Gate(
    patterns=(re.compile(r"(?:pass(?:word|wd|phrase)|storepass|keypass)[ \t]"),)
)
_NET_USE_GATE: Final = _Gate(patterns=(re.compile(r"net[ \t]{1,5}use"),))
_NETRC_GATE: Final = _Gate(patterns=(re.compile(r"password(?:[ \t\r\n]|\\[nrt])"),))

_SHAPES: Final[tuple[tuple[str, str, _Gate], ...]] = (
    ("private_key", _PRIVATE_KEY, _literals("-----begin")),
    ("openai_key", _OPENAI_KEY, _literals("sk-")),
    *((pattern_id, pattern, _literals(*gate)) for pattern_id, pattern, gate in VENDOR_SHAPES),
    (
        "jwt",
        rf"{_START}eyJ[A-Za-z0-9_-]{{8,2000}}\.eyJ[A-Za-z0-9_-]{{8,4000}}\.[A-Za-z0-9_-]{{0,2000}}",
        _literals("eyj"),
    ),
    ("bearer_token", rf"{_START}Bearer\s{{1,5}}[A-Za-z0-9._~+/=-]{{12,2000}}", _literals("bearer")),
    ("url_password", _URL_PASSWORD, _literals("://", ":\\/\\/")),
    ("url_password", _ENCODED_URL_PASSWORD, _literals("%3a%2f%2f")),
    ("netrc_password", _NETRC, _NETRC_GATE),
    ("cli_password", _MYSQL, _literals("mysql", "mariadb")),
    ("cli_password", _PASSWORD_FLAG, _FLAG_GATE),
    *(
        ("cli_password", _command_option(command, option, separator, value), _literals(*gate))
        for command, option, separator, value, gate in COMMAND_OPTIONS
    ),
    ("cli_password", _OPENSSL, _literals("pass:")),
    ("cli_password", _HTPASSWD, _literals("htpasswd")),
    ("cli_password", _NET_USE, _NET_USE_GATE),
    ("cli_password", _NET_USER, _NET_USE_GATE),
    ("cli_password", _SLASH_PASSWORD, _literals(" /p:", " /pass:", " /password:")),
    ("cli_password", _SQLPLUS, _literals("sqlplus", "sqlldr", "expdp", "impdp", "rman", "dgmgrl")),
    ("azure_key", _AZURE_KEY, _literals("accountkey", "sharedaccess")),
    ("secret_assignment", _SECRET_ASSIGNMENT, _NAME_GATE),
    ("secret_assignment", _PASSWORD_ASSIGNMENT, _PASSWORD_GATE),
    ("secret_assignment", _LOCAL_PASSWORD_ASSIGNMENT, _LOCAL_PASSWORD_GATE),
)

#: (id, pattern) for the key shapes we refuse to store or send. Order matters: the first
#: match names the shape, and ``private_key`` goes first so a key body is gone before other
#: shapes look at it; ``secret_assignment`` goes last so a known key keeps its own id. A
#: pattern with ``secret_q`` / ``secret_b`` groups loses only that group's text.
SECRET_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = tuple(
    (pattern_id, re.compile(pattern)) for pattern_id, pattern, _gate in _SHAPES
)
