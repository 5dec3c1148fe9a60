"""Key shapes that are not assignments or command lines: PEM private keys, OpenAI and
Anthropic keys, credentials and signatures in URLs, Azure connection-string keys, and vendor
keys whose prefix is too short for a literal gate (Twilio, Mailchimp, Discord)."""

from __future__ import annotations

from hermes_core.secret_shapes.values import START as _START

__all__ = [
    "AZURE_KEY",
    "DISCORD_TOKEN",
    "ENCODED_URL_PASSWORD",
    "MAILCHIMP_KEY",
    "OPENAI_KEY",
    "PRIVATE_KEY",
    "TWILIO_KEY",
    "URL_PASSWORD",
    "URL_SIGNATURE",
]

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
PRIVATE_KEY = (
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
OPENAI_KEY = (
    rf"{_START}sk-(?:proj-|ant-)?[A-Za-z0-9_-]{{16,200}}"
    r"|(?<=[A-Za-z0-9_])sk-(?=[A-Za-z0-9_-]{0,200}?[0-9])(?=[A-Za-z0-9_-]{0,200}?[A-Z])"
    r"(?=[A-Za-z0-9_-]{0,200}?[A-Za-z0-9]{16})[A-Za-z0-9_-]{32,200}"
)

# --- Credentials in URLs -----------------------------------------------------------------------
# ``user:password@`` after ``scheme://`` of any scheme (``redis://:pw@host``: the user may be
# empty; ``mongodb+srv://``, ``amqp://``, ``ftp://``), also with JSON's escaped slashes
# (``redis:\/\/:pw@host``). A password may hold a raw "@" (``:p@ss@host``): like
# ``urllib.parse``, the credentials run to the last "@" before the host (at most 3 more "@").
# Not our own label: ``scheme://[REDACTED:url_password]@host`` must not match again.
URL_PASSWORD = (
    r"(?:(?<=://)|(?<=:\\/\\/))(?!\[REDACTED:)[^/\\\s:@?#]{0,200}:[^/\s@?#]{1,200}"
    r"(?:@[^/\s@?#]{1,200}){0,3}(?=@)"
)
# The authority ends at the first "/", "?" or "#" (as for ``urllib.parse``): a query holding
# ``a:b@c`` is not credentials. A URL inside another, percent-encoded
# (``?next=https%3A%2F%2Fbob%3Apw%40host``): the password between ``%3A`` and ``%40``.
ENCODED_URL_PASSWORD = (
    r"(?<=%3[Aa]%2[Ff]%2[Ff])(?:[^\s%@:/?#&]|%(?!3[Aa]|40|2[Ff])[0-9A-Fa-f]{2}){0,200}"
    r"(?:%3[Aa]|:)(?!\[REDACTED:)(?P<secret_b>(?:[^\s%@/?#&]|%(?!40|2[Ff])[0-9A-Fa-f]{2}){1,200})"
    r"(?=%40|@)"
)

# --- Azure connection strings ----------------------------------------------------------------
# ``DefaultEndpointsProtocol=https;AccountName=x;AccountKey=<base64>;EndpointSuffix=...`` and
# Service Bus / Event Hubs ``SharedAccessKey=...``: the value up to the next ";".
AZURE_KEY = (
    rf"{_START}(?i:AccountKey|SharedAccessKey|SharedAccessSignature)[ \t]{{0,3}}=[ \t]{{0,3}}"
    r"(?!\[REDACTED:)(?P<secret_b>[^;\s\"'`<>\\]{1,2000})"
)
# An Azure SAS signature (``?...&sig=<base64>``) or an S3 presigned URL's
# ``X-Amz-Signature=<hex>``: whoever holds the URL holds the access, until it expires.
URL_SIGNATURE = (
    r"(?<=[?&])(?:sig|(?i:x-amz-signature))=(?!\[REDACTED:)"
    r"(?P<secret_b>[A-Za-z0-9%+/=_-]{16,2000})"
)

# --- Short prefixes, with a regex gate ---------------------------------------------------------
# Twilio API keys: ``SK`` and 32 lower-case hex digits, nothing glued on either side.
TWILIO_KEY = rf"{_START}SK[0-9a-f]{{32}}(?![A-Za-z0-9_])"
# Mailchimp API keys: 32 hex digits, then the data centre (``-us21``).
MAILCHIMP_KEY = rf"{_START}[0-9a-f]{{32}}-us[0-9]{{1,2}}(?![A-Za-z0-9_])"
# Discord bot tokens: base64 of the bot's id (``M``/``N``/``O`` and 23-27 more, with a digit),
# a timestamp (6-7), an HMAC (27-40), joined by dots.
DISCORD_TOKEN = (
    rf"{_START}[MNO](?=[A-Za-z0-9_-]{{0,26}}[0-9])[A-Za-z0-9_-]{{23,27}}\.[A-Za-z0-9_-]{{6,7}}"
    r"\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])"
)
