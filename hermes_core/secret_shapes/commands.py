"""Passwords on command lines and in .netrc: ``--password X``, ``mysql -pX``, ``docker login
-p X``, ``curl -u user:X``, ``openssl -pass pass:X``, ``net use``, ``sqlplus user/X``, ..."""

from __future__ import annotations

from typing import Final

from hermes_core.secret_shapes.values import CLI_WORD as _CLI_WORD
from hermes_core.secret_shapes.values import FLAG_VALUE as _FLAG_VALUE
from hermes_core.secret_shapes.values import NOT_A_VALUE as _NOT_A_VALUE
from hermes_core.secret_shapes.values import PROSE as _PROSE
from hermes_core.secret_shapes.values import REFERENCE as _REFERENCE
from hermes_core.secret_shapes.values import SHORT_VALUE as _SHORT_VALUE
from hermes_core.secret_shapes.values import START as _START
from hermes_core.secret_shapes.values import TOKEN_VALUE as _TOKEN_VALUE

__all__ = [
    "AWS_CONFIGURE",
    "HTPASSWD",
    "MYSQL",
    "NETRC",
    "NET_USE",
    "NET_USER",
    "OPENSSL",
    "PASSWORD_FLAG",
    "SLASH_PASSWORD",
    "SQLPLUS",
    "SUDO_STDIN",
    "TOKEN_FLAG",
    "TOKEN_WORD",
    "USER_SECRETS",
    "command_option",
]

# ``.netrc``: ``machine HOST [login|account|port X]... password SECRET``, on one line or several
# (also with ``\n`` escapes, as inside a JSON string). Tokens are whitespace-separated, so each
# is taken whole and a scan from one "machine" covers at most five tokens.
_NETRC_GAP = r"(?:[ \t\r\n]|\\[nrt]){1,20}"
NETRC = (
    rf"{_START}(?:machine{_NETRC_GAP}[^\s\\]{{1,255}}|default)"
    rf"(?:{_NETRC_GAP}(?:login|account|port){_NETRC_GAP}[^\s\\]{{1,255}}){{0,3}}"
    rf"{_NETRC_GAP}password{_NETRC_GAP}(?!\[REDACTED:)(?P<secret_b>[^\s\\\"]{{1,2000}})"
)
# ``--password X``, ``--db-password X``, ``-passphrase X``, keytool's ``-storepass X``: a
# flag and its argument (``--password=X`` is an assignment; ``--no-password`` and
# ``--password-file`` are not this). A quoted argument loses what is inside the quotes.
# Prose naming the flag ("the --username and --password options") gives it no argument.
PASSWORD_FLAG = (
    r"(?<![A-Za-z0-9_\]-])(?:--(?!no-)(?:[a-z0-9]{1,20}-){0,3}pass(?:word|wd|phrase)"
    r"|-(?:pass(?:word|wd|phrase)|(?:src|dest)?(?:store|key)pass))"
    rf"[ \t]{{1,5}}(?!-|{_PROSE}){_FLAG_VALUE}"
)
# The MySQL family takes the password glued to ``-p`` (``mysql -uroot -pSECRET db``; a bare
# ``-p`` prompts, and the next word is the database). The option is looked for among the next
# 20 words of the same command (each word taken whole: no backtracking inside one).
MYSQL = (
    r"(?<![A-Za-z0-9_.\]-])(?:mysql(?:dump|admin|import|check|show|slap|binlog|pump|sh)?"
    r"|mariadb(?:-?dump|-?admin|-?import|-?check)?)"
    r"(?:[ \t]{1,5}(?!-p)(?=(?P<word>[^\s|;&<>\"'`\\]{1,200}))(?P=word)){0,20}"
    rf"[ \t]{{1,5}}-p{_FLAG_VALUE.replace('{1,2000}', '{1,200}')}"
)

# --- Passwords given to other commands ----------------------------------------------------------
# Like ``MYSQL``: a command, up to 20 of its words (each taken whole), then its password
# option (the catalogue: ``secret_vendors.COMMAND_OPTIONS``); ``curl -u user:X`` loses only
# the password, quoted with spaces too. The option found is the first (no word before it is
# the option) and no word is one of our labels, so redacting twice finds what redacting once
# did. Prose is not a password: after ``docker login -u bob ... -p``, "when it asks", "with
# your token" or a ``# comment`` are words, left alone (an English function word as the value).
_SEPARATORS: Final = {"spaced": r"[ \t]{1,5}(?!-)", "any": r"(?:[ \t]{1,5}(?!-)|=)?", "glued": ""}


def _user_value(separator: str) -> str:
    """``user<separator>password``, bare or quoted (``'admin:s3 cret'``): the password; a
    variable's reference there (``$USER:$TOKEN``) is no password."""
    return (
        rf"(?:(?P<q>[\"'])[^{separator}\"'\\\r\n]{{0,200}}[{separator}]"
        rf"(?!\[REDACTED:|{_REFERENCE})(?P<secret_q>[^\"'\\\r\n]{{1,200}})(?=(?P=q))"
        rf"|[^\s{separator}\"'\\]{{0,200}}[{separator}](?!\[REDACTED:|{_REFERENCE})"
        rf"(?P<secret_b>[^\s\"'\\]{{1,200}}))"
    )


_VALUES: Final = {
    "password": _SHORT_VALUE,
    "user:password": _user_value(":%"),
    "user,password": _user_value(","),
}


def command_option(command: str, option: str, separator: str, value: str) -> str:
    return (
        rf"(?<![A-Za-z0-9_.\]-])(?:{command})(?![A-Za-z0-9_-])"
        rf"(?:[ \t]{{1,5}}(?!\[REDACTED:|(?:{option})(?![A-Za-z-])){_CLI_WORD}){{0,20}}"
        rf"[ \t]{{1,5}}(?:{option}){_SEPARATORS[separator]}{_VALUES[value]}"
    )


# Bespoke: ``openssl ... -pass pass:X`` (``-passin``/``-passout``; ``env:``/``file:`` name
# where it is), ``htpasswd -b[c|n...] [file] user X``, Windows ``net use \\srv\share X`` and
# ``net use ... /user:u X``, ``/p:X`` and ``/pass:X`` options (xfreerdp, cmdkey; not
# MSBuild's ``/p:Name=Value``), Oracle's
# ``sqlplus user/X@db``. Words that may hold "\" (Windows paths) are taken whole too.
_WIN_WORD = r"(?=(?P<w>[^\s\"'`]{1,200}))(?P=w)"
_PASS_ARG = rf"pass:(?!\[REDACTED:|{_REFERENCE})"
OPENSSL = (
    rf"(?<![A-Za-z0-9_-])-pass(?:in|out|word)?[ \t]{{1,5}}(?:(?P<q>[\"']){_PASS_ARG}"
    rf"(?P<secret_q>[^\"'\\\r\n]{{1,200}})(?P=q)|{_PASS_ARG}(?P<secret_b>[^\s\"'`\\]{{1,200}}))"
)
HTPASSWD = (
    r"(?<![A-Za-z0-9_.-])htpasswd(?=(?:[ \t]{1,5}-[A-Za-z]{1,10}){0,4}?[ \t]{1,5}-[A-Za-z]{0,9}b)"
    rf"(?:[ \t]{{1,5}}-[A-Za-z]{{1,10}}){{1,5}}(?:[ \t]{{1,5}}(?!-){_CLI_WORD}){{1,2}}"
    rf"[ \t]{{1,5}}(?!-){_SHORT_VALUE}(?![ \t]{{1,5}}\[REDACTED:)"
)
_NET_USE_VALUE = rf"[ \t]{{1,5}}(?![/*-]){_SHORT_VALUE}"
NET_USE = (
    r"(?<![A-Za-z0-9_.-])net[ \t]{1,5}use(?:[ \t]{1,5}(?:[A-Za-z]:|\*))?"
    rf"[ \t]{{1,5}}\\\\[^\s\\\"']{{1,200}}(?:\\[^\s\\\"']{{1,200}}){{0,8}}{_NET_USE_VALUE}"
)
NET_USER = (
    rf"(?<![A-Za-z0-9_.-])net[ \t]{{1,5}}use(?:[ \t]{{1,5}}(?!/u(?:ser)?:){_WIN_WORD}){{0,6}}"
    rf"[ \t]{{1,5}}/(?i:u|user):[^\s\"'`]{{1,200}}{_NET_USE_VALUE}"
)
# MSBuild's ``/p:Name=Value`` (``/p:Configuration=Release``) sets a property, not a password:
# a name and "=" there is passed over, unless the name itself names a secret
# (``/p:DbPassword=X`` also loses its value to ``secret_assignment``).
_MSBUILD_PROPERTY = (
    r"(?!(?i:[A-Za-z0-9_.-]{0,100}?(?:pass|pwd|secret|token|key|credential)))"
    r"[A-Za-z_][A-Za-z0-9_.-]{0,100}="
)
SLASH_PASSWORD = (
    rf"(?<=[ \t])/(?i:p|pass|password):(?!\[REDACTED:|{_MSBUILD_PROPERTY}){_SHORT_VALUE}"
)
SQLPLUS = (
    r"(?<![A-Za-z0-9_.-])(?:sqlplus|sqlldr|expdp|impdp|rman|dgmgrl)"
    r"(?:[ \t]{1,5}-[A-Za-z]{1,10}){0,4}[ \t]{1,5}[^\s/@\"'\\]{1,100}/(?!\[REDACTED:)"
    r"(?P<secret_b>[^\s/@\"'\\]{1,200})"
)

# --- Tokens and secrets given to commands -------------------------------------------------------
# ``--token X``, ``--api-key X``, ``--client-secret X``, ``--auth-token X``, curl's
# ``--oauth2-bearer X`` (gh, vercel, doctl, heroku, influx, terraform, ...): an option whose
# last word names a secret, and its argument (see ``values.TOKEN_VALUE``: names and prose pass).
TOKEN_WORD = r"(?:token|secret|api-?key|(?:access|secret|auth|account|master|license)-key|bearer)"
TOKEN_FLAG = (
    rf"(?<![A-Za-z0-9_\]-])--(?!no-)(?:[a-z0-9]{{1,20}}-){{0,3}}{TOKEN_WORD}"
    rf"[ \t]{{1,5}}(?!-){_TOKEN_VALUE}"
)
# ``aws configure set [profile.]aws_secret_access_key X`` (or the session token) and
# ``dotnet user-secrets set NAME X``: a secret's name, then the secret.
AWS_CONFIGURE = (
    r"(?<![A-Za-z0-9_.-])aws[ \t]{1,5}configure[ \t]{1,5}set"
    rf"(?:[ \t]{{1,5}}--profile[ \t]{{1,5}}{_CLI_WORD})?"
    r"[ \t]{1,5}(?:[A-Za-z0-9_-]{1,60}\.)?aws_(?:secret_access_key|session_token)"
    rf"[ \t]{{1,5}}(?!-){_FLAG_VALUE}"
)
USER_SECRETS = (
    r"(?<![A-Za-z0-9_.-])user-secrets[ \t]{1,5}set"
    r"[ \t]{1,5}(?:\"[^\"\r\n]{1,200}\"|'[^'\r\n]{1,200}'|[^\s\"']{1,200})"
    rf"[ \t]{{1,5}}(?!-){_FLAG_VALUE}"
)
# ``echo PW | sudo -S ...``: sudo reads the password from its input (``-S``, ``--stdin``,
# also in a cluster such as ``-kS``, among its next five words).
SUDO_STDIN = (
    r"(?<![A-Za-z0-9_.-])echo(?:[ \t]{1,5}-[neE]{1,3})?[ \t]{1,5}"
    rf"(?:(?P<q>[\"'])(?!{_NOT_A_VALUE})(?P<secret_q>[^\"'\\\r\n]{{1,200}})(?P=q)"
    rf"|(?!{_NOT_A_VALUE})(?=(?P<secret_b>[^\s|;&<>\"'`\\]{{1,200}}))(?P=secret_b))"
    r"[ \t]{0,5}\|[ \t]{0,5}sudo"
    r"(?=(?:[ \t]{1,5}[^\s|;&<>]{1,100}){0,5}?[ \t]{1,5}"
    r"(?:-(?=[A-Za-z]{0,9}S)[A-Za-z]{1,10}|--stdin)(?![A-Za-z-]))"
)
