"""Small pieces every memory provider needs: tool schemas, the API key, URL and name checks.

Why in the core: the four first-party providers wrote these four times, and a third-party
author needs the same; one copy keeps their error messages alike (naming the config key and
what to do) and their schemas in the shape the memory manager routes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from hermes_core.errors import ConfigError
from hermes_core.types import SessionInfo

__all__ = ["ENV_NAME", "check_base_url", "function_tool", "principal", "read_api_key"]

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
    env_name: str, *, where: str, service: str, environ: Mapping[str, str] | None = None
) -> str:
    """The key in environment variable ``env_name``; a :class:`ConfigError` naming ``where``
    (e.g. ``plugin_config.mem0.api_key_env``) when it is unset or empty. Never echoes it."""
    env = os.environ if environ is None else environ
    key = env.get(env_name, "").strip()
    if not key:
        raise ConfigError(
            f"{where}: the environment variable {env_name} is not set or empty; export your "
            f"{service} API key in it (or name another variable)"
        )
    return key


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
