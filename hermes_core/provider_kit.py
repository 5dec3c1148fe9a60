"""Small pieces every memory provider needs: tool schemas, the API key, URL checks, and the
canonical id every user (and session) id is mapped to before it reaches a backend.

Why in the core: the four first-party providers wrote these four times, and a third-party
author needs the same; one copy keeps their error messages alike (naming the config key and
what to do) and their schemas in the shape the memory manager routes.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from typing import Any, Final, Literal, overload
from urllib.parse import urlsplit

from hermes_core.errors import ConfigError
from hermes_core.types import SessionInfo

__all__ = [
    "ENV_NAME",
    "SESSION_KIND",
    "USER_KIND",
    "InvalidPrincipal",
    "anonymous_principal",
    "canonical_id",
    "check_base_url",
    "function_tool",
    "principal",
    "read_api_key",
    "section_api_key",
]

#: What an environment variable name may look like (``api_key_env`` values).
ENV_NAME: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


def function_tool(
    name: str, description: str, properties: Mapping[str, Any], required: list[str]
) -> dict[str, Any]:
    """An OpenAI function tool schema with a closed object of parameters."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": dict(properties),
                "required": list(required),
                "additionalProperties": False,
            },
        },
    }


def read_api_key(
    env_name: str,
    *,
    where: str,
    service: str,
    environ: Mapping[str, str] | None = None,
    hint: str = "",
) -> str:
    """The key in environment variable ``env_name``; a :class:`ConfigError` naming ``where``
    (e.g. ``plugin_config.mem0.api_key_env``) when it is unset or empty. Never echoes it.

    ``hint`` is one more way out added to the message (e.g. ``use mode: oss``)."""
    env = os.environ if environ is None else environ
    key = env.get(env_name, "").strip()
    if not key:
        raise ConfigError(
            f"{where}: the environment variable {env_name} is not set or empty; export your "
            f"{service} API key in it (or name another variable{_also(hint)})"
        )
    return key


@overload
def section_api_key(
    config: Mapping[str, Any],
    *,
    section: str,
    default_env: str,
    service: str,
    environ: Mapping[str, str] | None = ...,
    required: Literal[True] = ...,
    hint: str = ...,
) -> str: ...


@overload
def section_api_key(
    config: Mapping[str, Any],
    *,
    section: str,
    default_env: str,
    service: str,
    environ: Mapping[str, str] | None = ...,
    required: bool,
    hint: str = ...,
) -> str | None: ...


def section_api_key(
    config: Mapping[str, Any],
    *,
    section: str,
    default_env: str,
    service: str,
    environ: Mapping[str, str] | None = None,
    required: bool = True,
    hint: str = "",
) -> str | None:
    """The API key a provider's section (``config``, named ``section``, e.g.
    ``plugin_config.mem0``) gives, in one of two ways:

    - ``api_key: {$env: NAME}``: the loader has already replaced the reference with the
      variable's value (and refused a literal key in the file, and an unset ``NAME``), so a
      string here came from the environment;
    - ``api_key_env: NAME`` (``default_env`` when neither is given, or it is null): read
      from ``environ`` (default ``os.environ``).

    Both at once is a :class:`ConfigError`; so is a key that is unset or empty, except that
    with ``required=False`` an unset or empty ``api_key_env`` variable gives ``None`` (an
    ``api_key`` that resolved to nothing is always an error: it was asked for). ``hint`` is
    one more way out added to the "not set" message. No message ever contains the key.
    """
    if "api_key" in config and "api_key_env" in config:
        raise ConfigError(
            f"{section}: api_key and api_key_env are both set; keep one: "
            "`api_key: {$env: NAME}` or `api_key_env: NAME`"
        )
    if "api_key" in config:
        value = config["api_key"]
        if value is not None and not isinstance(value, str):
            raise ConfigError(
                f"{section}.api_key: write it as `api_key: {{$env: NAME}}` and export NAME "
                f"(got a {type(value).__name__})"
            )
        key = (value or "").strip()
        if not key:
            raise ConfigError(
                f"{section}.api_key: the environment variable its {{$env: NAME}} names is not "
                f"set or empty; export your {service} API key in it (or remove the setting"
                f"{_also(hint)})"
            )
        return key
    env_name = config.get("api_key_env")
    if env_name is None:
        env_name = default_env
    if not isinstance(env_name, str) or not ENV_NAME.match(env_name):
        # the value may be a pasted key: never repeat it
        raise ConfigError(
            f"{section}.api_key_env: must be the NAME of an environment variable "
            f"(e.g. {default_env}), not the key"
        )
    where = f"{section}.api_key_env"
    if required:
        return read_api_key(env_name, where=where, service=service, environ=environ, hint=hint)
    env = os.environ if environ is None else environ
    return env.get(env_name, "").strip() or None


def _also(hint: str) -> str:
    return f"; {hint}" if hint else ""


def check_base_url(value: str, *, where: str, key_hint: str) -> str:
    """``value`` as an http(s) URL without credentials (trailing ``/`` removed)."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"{where}: expected an http(s) URL, got {value!r}")
    if parts.username or parts.password:
        raise ConfigError(f"{where}: must not carry credentials; use {key_hint}")
    return value.rstrip("/")


class InvalidPrincipal(ValueError):
    """A session's ``user_id`` cannot name a principal (the empty string, or not a string).

    Raised by :func:`principal`; the memory manager turns it into a ``provider_error`` event
    (and a JSON error for a tool call), so nothing is read or written for such a session."""


#: The kind letter of user principals: every user id maps to ``u-...`` or ``u_...``.
USER_KIND: Final = "u"
#: The kind letter of session ids a provider sends to its backend (``s-...`` / ``s_...``).
SESSION_KIND: Final = "s"
#: Longest id kept readable; longer ones are hashed.
PLAIN_MAX: Final = 48
#: Readable characters kept in front of the digest of a hashed id.
HINT_MAX: Final = 24
#: Hex digits of SHA-256 in a hashed id (128 bits).
DIGEST_HEX: Final = 32

_PLAIN: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_KIND: Final = re.compile(r"[a-z][a-z0-9]{0,7}")
_NOT_HINT: Final = re.compile(r"[^a-z0-9]+")
_ASCII_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_ANONYMOUS_KIND: Final = "a"


def canonical_id(raw: str, kind: str = USER_KIND) -> str:
    """The canonical, backend-safe form of the id ``raw``: what goes to an SDK or a URL.

    - ``<kind>-<raw>`` when ``raw`` is 1 to 48 characters of lower-case ASCII letters and
      digits, single ``-`` between them (``bob`` -> ``u-bob``, ``chat-42`` -> ``s-chat-42``);
    - else ``<kind>_<hint>_<digest>``: ``digest`` is the first 32 hex digits of SHA-256 of
      ``raw``'s UTF-8 bytes, ``hint`` (omitted when empty, with its ``_``) is ``raw`` with
      ASCII letters lower-cased, every run of other characters turned into one ``-``, cut to
      24 characters (``Bob`` -> ``u_bob_<digest>``, ``ｂｏｂ`` -> ``u_<digest>``).

    Only ``[a-z0-9_-]``, at most ``len(kind) + 58`` characters, never ``--``. Injective over
    all strings (up to SHA-256 collisions): the readable form has ``-`` right after the kind,
    the hashed one ``_``; each determines ``raw`` (or its digest). Nothing is normalised, so
    case, whitespace, look-alike letters and Unicode normalisation forms stay distinct.

    **Stable**: memories are stored under these ids; changing a rule here would orphan them.
    """
    if not isinstance(raw, str) or not raw:
        raise InvalidPrincipal(f"an id must be a non-empty string, got {_shown(raw)}")
    if not _KIND.fullmatch(kind):
        raise ValueError(
            f"kind must be a lower-case letter then up to 7 letters or digits: {kind!r}"
        )
    if len(raw) <= PLAIN_MAX and _PLAIN.fullmatch(raw):
        return f"{kind}-{raw}"
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_HEX]
    hint = _NOT_HINT.sub("-", raw.translate(_ASCII_LOWER)).strip("-")[:HINT_MAX].rstrip("-")
    return f"{kind}_{hint}_{digest}" if hint else f"{kind}_{digest}"


def anonymous_principal(default: str) -> str:
    """The principal of sessions without a user id: ``default`` itself when it is a readable
    id (1-48 of ``[a-z0-9]`` with single ``-``, not starting with ``u-``), else its hashed
    form of kind ``a`` (``a_...``). Never equal to a user's principal (``u-...``/``u_...``)."""
    if not isinstance(default, str) or not default:
        raise ValueError(f"the default principal must be a non-empty string, got {_shown(default)}")
    if (
        len(default) <= PLAIN_MAX
        and _PLAIN.fullmatch(default)
        and not default.startswith(USER_KIND + "-")
    ):
        return default
    return canonical_id(default, _ANONYMOUS_KIND)


def principal(session: SessionInfo, default: str) -> str:
    """The id a provider stores a session's data under, in its canonical, backend-safe form.

    - ``session.user_id`` is ``None`` (a single-user home): :func:`anonymous_principal` of
      ``default`` (``default`` itself when it is a plain id such as ``hermes-user``);
    - a user id: :func:`canonical_id` (``alice`` -> ``u-alice``, ``Alice`` ->
      ``u_alice_<32 hex>``), so every distinct user id gets its own principal and none equals
      the default one, whatever the user is called;
    - the empty string is refused with :class:`InvalidPrincipal`: it is not the anonymous
      principal (the session layer refuses it as a user id too; pass ``None``).
    """
    user = session.user_id
    if user is None:
        return anonymous_principal(default)
    if not isinstance(user, str) or not user:
        raise InvalidPrincipal(
            f"SessionInfo.user_id is {_shown(user)}: a user id must be a non-empty string; "
            "pass user_id=None for the anonymous principal of a single-user home"
        )
    return canonical_id(user, USER_KIND)


def _shown(value: object) -> str:
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:39] + "…")
    return f"a {type(value).__name__}"
