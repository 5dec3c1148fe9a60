"""Credential lines of config files: a registry login in Docker's ``config.json``, a client
key in a kubeconfig, a ``.pgpass`` line, and password hashes (``.htpasswd``, ``/etc/shadow``).

Each is a file people paste whole ("here is my config"), and each holds its secret under a
name that says nothing of one (``auth``) or under no name at all (``.pgpass``).
"""

from __future__ import annotations

__all__ = ["DOCKER_AUTH", "KUBE_CLIENT_KEY", "PASSWORD_HASH", "PGPASS_LINE"]

# ``"auth": "<base64 of user:password>"`` (``config.json``, also with JSON's escaped quotes):
# 12+ base64 characters with a digit, "+", "/", "=" or a capital after a small letter
# ("required", "oauth2" and "Basic" are words).
DOCKER_AUTH = (
    r"(?<![A-Za-z0-9_])\\?\"auth\\?\"[ \t]{0,5}:[ \t]{0,5}\\?\"(?!\[REDACTED:)"
    r"(?=[A-Za-z0-9+/]{0,4000}?(?:[0-9+/=]|[a-z][A-Z]))"
    r"(?P<secret_b>[A-Za-z0-9+/]{12,4000}={0,2})(?=\\?\")"
)
# ``client-key-data: <base64 of a PEM private key>`` (a kubeconfig, YAML or JSON). At most
# 7,000 characters, under the redaction window's margin (an RSA-4096 key is about 4,500).
KUBE_CLIENT_KEY = (
    r"(?i:client-key-data)(?:\\?[\"'])?[ \t]{0,5}:[ \t]{0,5}(?:\\?[\"'])?(?!\[REDACTED:)"
    r"(?P<secret_b>[A-Za-z0-9+/]{16,7000}={0,2})"
)
# A ``.pgpass`` line, ``host:port:database:user:password`` (``*`` for any): a word of its own
# (after a blank, a quote or the start) of exactly five fields, the port a number or ``*``,
# the password holding something other than digits (``10:20:30:40:50`` is a time). Tried only
# where a word starts, and each field stops at the next ":": linear.
PGPASS_LINE = (
    r"(?<![^\s\"'])(?:[A-Za-z0-9_.-]{1,253}|\*):(?:[0-9]{1,5}|\*)"
    r":[^\s:\\]{1,100}:[^\s:\\]{1,100}:(?!\[REDACTED:)(?=[^\s:]{0,200}?[^\s:0-9])"
    r"(?=(?P<secret_b>[^\s:]{1,200}))(?P=secret_b)(?![^\s\"'])"
)
# ``user:$apr1$salt$hash`` (Apache MD5), ``$2y$`` (bcrypt), ``$1$``/``$5$``/``$6$``/``$y$``
# (crypt, as in /etc/shadow), ``{SHA}base64``: after a ":", the whole hash (it can be
# cracked offline, so it is as secret as the password).
PASSWORD_HASH = (
    r"(?<=:)(?:\$(?:apr1|2[abxy]|[1567y]|gy)\$[A-Za-z0-9./$=+]{8,300}"
    r"|\{(?i:s?sha(?:256|512)?)\}[A-Za-z0-9+/]{20,300}={0,2})"
)
