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
from typing import TYPE_CHECKING, Final

from hermes_core.secret_shapes.assignments import (
    ENV_AUTH_ASSIGNMENT,
    ENV_KEY_ASSIGNMENT,
    LOCAL_PASSWORD_ASSIGNMENT,
    PASSWORD_ASSIGNMENT,
    PASSWORD_WORDS,
    SECRET_ASSIGNMENT,
)
from hermes_core.secret_shapes.commands import (
    AWS_CONFIGURE,
    HTPASSWD,
    MYSQL,
    NET_USE,
    NET_USER,
    NETRC,
    OPENSSL,
    PASSWORD_FLAG,
    SLASH_PASSWORD,
    SQLPLUS,
    SUDO_STDIN,
    TOKEN_FLAG,
    USER_SECRETS,
    command_option,
)
from hermes_core.secret_shapes.files import (
    DOCKER_AUTH,
    KUBE_CLIENT_KEY,
    PASSWORD_HASH,
    PGPASS_LINE,
)
from hermes_core.secret_shapes.keys import (
    AZURE_KEY,
    DISCORD_TOKEN,
    ENCODED_URL_PASSWORD,
    MAILCHIMP_KEY,
    OPENAI_KEY,
    PRIVATE_KEY,
    TWILIO_KEY,
    URL_PASSWORD,
    URL_SIGNATURE,
)
from hermes_core.secret_shapes.values import START as _START
from hermes_core.secret_vendors import COMMAND_OPTIONS, VENDOR_SHAPES

__all__ = ["SECRET_PATTERNS"]

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
_ASCII_WORDS = "|".join(re.escape(word) for word in PASSWORD_WORDS if word.isascii())
_OTHER_WORDS = "|".join(re.escape(word) for word in PASSWORD_WORDS if not word.isascii())
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
_ENV_GATE: Final = _Gate(patterns=(re.compile(rf"_(?:auth|key){_GATE_ASSIGN}"),))
_TOKEN_FLAG_GATE: Final = _Gate(
    patterns=(re.compile(r"--[a-z0-9-]{0,80}?(?:token|secret|key|bearer)[ \t]"),)
)


def _pattern(gate: str) -> _Gate:
    """A gate that is one small regex (no capturing group: :mod:`hermes_core.redact` joins
    every gate into one alternation, where a group would shift the others' numbers)."""
    return _Gate(patterns=(re.compile(gate),))


_SHAPES: Final[tuple[tuple[str, str, _Gate], ...]] = (
    ("private_key", PRIVATE_KEY, _literals("-----begin")),
    ("openai_key", OPENAI_KEY, _literals("sk-")),
    *((pattern_id, pattern, _literals(*gate)) for pattern_id, pattern, gate in VENDOR_SHAPES),
    (
        "jwt",
        rf"{_START}eyJ[A-Za-z0-9_-]{{8,2000}}\.eyJ[A-Za-z0-9_-]{{8,4000}}\.[A-Za-z0-9_-]{{0,2000}}",
        _literals("eyj"),
    ),
    ("twilio_key", TWILIO_KEY, _pattern(r"sk[0-9a-f]{32}")),
    ("mailchimp_key", MAILCHIMP_KEY, _pattern(r"[0-9a-f]-us[0-9]")),
    ("discord_token", DISCORD_TOKEN, _pattern(r"\.[a-z0-9_-]{6,7}\.[a-z0-9_-]{27}")),
    ("bearer_token", rf"{_START}Bearer\s{{1,5}}[A-Za-z0-9._~+/=-]{{12,2000}}", _literals("bearer")),
    ("url_password", URL_PASSWORD, _literals("://", ":\\/\\/")),
    ("url_password", ENCODED_URL_PASSWORD, _literals("%3a%2f%2f")),
    ("url_signature", URL_SIGNATURE, _literals("?sig=", "&sig=", "x-amz-signature=")),
    ("docker_auth", DOCKER_AUTH, _literals('"auth"', 'auth\\"')),
    ("kube_client_key", KUBE_CLIENT_KEY, _literals("client-key-data")),
    ("password_hash", PASSWORD_HASH, _pattern(r":(?:\$(?:apr1|2[abxy]|[1567y]|gy)\$|\{s?sha)")),
    (
        "pgpass_password",
        PGPASS_LINE,
        _pattern(r":(?:[0-9]{1,5}|\*):[^\s:]{1,100}:[^\s:]{1,100}:"),
    ),
    ("netrc_password", NETRC, _NETRC_GATE),
    ("cli_password", MYSQL, _literals("mysql", "mariadb")),
    ("cli_password", PASSWORD_FLAG, _FLAG_GATE),
    *(
        ("cli_password", command_option(command, option, separator, value), _literals(*gate))
        for command, option, separator, value, gate in COMMAND_OPTIONS
    ),
    ("cli_password", OPENSSL, _literals("pass:")),
    ("cli_password", HTPASSWD, _literals("htpasswd")),
    ("cli_password", NET_USE, _NET_USE_GATE),
    ("cli_password", NET_USER, _NET_USE_GATE),
    ("cli_password", SLASH_PASSWORD, _literals(" /p:", " /pass:", " /password:")),
    ("cli_password", SQLPLUS, _literals("sqlplus", "sqlldr", "expdp", "impdp", "rman", "dgmgrl")),
    ("azure_key", AZURE_KEY, _literals("accountkey", "sharedaccess")),
    ("cli_token", TOKEN_FLAG, _TOKEN_FLAG_GATE),
    ("cli_token", AWS_CONFIGURE, _literals("configure")),
    ("cli_token", USER_SECRETS, _literals("user-secrets")),
    ("cli_password", SUDO_STDIN, _literals("sudo")),
    ("secret_assignment", SECRET_ASSIGNMENT, _NAME_GATE),
    ("secret_assignment", PASSWORD_ASSIGNMENT, _PASSWORD_GATE),
    ("secret_assignment", LOCAL_PASSWORD_ASSIGNMENT, _LOCAL_PASSWORD_GATE),
    ("secret_assignment", ENV_AUTH_ASSIGNMENT, _ENV_GATE),
    ("secret_assignment", ENV_KEY_ASSIGNMENT, _ENV_GATE),
)

#: Sources of the compiled patterns, compiled on first use by :func:`pattern_at` (a redaction
#: opens a few gates, so most of the ~100 patterns are never compiled in a process).
_COMPILED: list[re.Pattern[str] | None] = [None] * len(_SHAPES)
if TYPE_CHECKING:  # at run time, built by __getattr__ on first access
    SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...]


def pattern_at(index: int) -> re.Pattern[str]:
    """The compiled pattern of ``_SHAPES[index]``, compiled once (a race compiles it twice,
    to the same effect)."""
    pattern = _COMPILED[index]
    if pattern is None:
        pattern = _COMPILED[index] = re.compile(_SHAPES[index][1])
    return pattern


def __getattr__(name: str) -> object:
    """``SECRET_PATTERNS``: (id, pattern) for the key shapes we refuse to store or send, every
    pattern compiled on first access. Order matters: the first match names the shape, and
    ``private_key`` goes first so a key body is gone before other shapes look at it;
    ``secret_assignment`` goes last so a known key keeps its own id. A pattern with
    ``secret_q`` / ``secret_b`` groups loses only that group's text."""
    if name == "SECRET_PATTERNS":
        return tuple((shape[0], pattern_at(i)) for i, shape in enumerate(_SHAPES))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
