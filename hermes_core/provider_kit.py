"""Small pieces every memory provider needs: tool schemas, the API key, URL and name checks.

Why in the core: the four first-party providers wrote these four times, and a third-party
author needs the same; one copy keeps their error messages alike (naming the config key and
what to do) and their schemas in the shape the memory manager routes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, Final, Literal, overload
from urllib.parse import urlsplit

from hermes_core.errors import ConfigError
from hermes_core.types import SessionInfo

__all__ = [
    "ENV_NAME",
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


def principal(session: SessionInfo, default: str) -> str:
    """The id a provider stores a session's data under: its user id, or ``default`` for a
    session without one (a single-user home).

    Injective, and never ``default`` for a real user: a user id equal to ``default`` or
    starting with ``default.`` is escaped as ``default.<id>``, so a user who happens to be
    called like the default principal (or like an escaped id) never shares its memories.
    """
    user = session.user_id
    if not user:
        return default
    if user == default or user.startswith(default + "."):
        return f"{default}.{user}"
    return user
