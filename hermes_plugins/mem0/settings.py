"""Mem0 provider settings: ``plugin_config.mem0`` validated into a frozen dataclass.

Every mistake is a :class:`ConfigError` naming ``plugin_config.mem0.<key>`` and what to do,
so an operator sees it at start-up rather than as a silent recall failure later. The platform
key comes from ``api_key: {$env: NAME}`` (resolved by the config loader) or from the variable
``api_key_env`` names; it is never echoed in a message.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from hermes_core import provider_kit
from hermes_core.errors import ConfigError
from hermes_core.redact import looks_like_secret

Mode = Literal["platform", "oss"]

PREFIX = "plugin_config.mem0"
DEFAULT_USER_ID = "hermes-user"
_ENV_NAME = provider_kit.ENV_NAME
_ENTITY_ID = re.compile(r"^\S{1,200}$")
_KNOWN = (
    "mode",
    "api_key",
    "api_key_env",
    "host",
    "oss_config",
    "user_id",
    "agent_id",
    "infer",
    "top_k",
    "timeout",
    "breaker_threshold",
    "breaker_cooldown",
)


@dataclass(frozen=True)
class Mem0Settings:
    """Typed, validated settings; ``api_key`` always comes from the environment (through
    ``{$env: NAME}`` or ``api_key_env``), never from a literal in the config."""

    mode: Mode = "platform"
    api_key_env: str = "MEM0_API_KEY"
    host: str | None = None
    oss_config: Mapping[str, Any] = field(default_factory=dict, repr=False)  # may hold keys
    user_id: str = DEFAULT_USER_ID
    agent_id: str | None = None
    infer: bool = True
    top_k: int = 10
    timeout: float = 10.0
    breaker_threshold: int = 5
    breaker_cooldown: float = 120.0
    api_key: str | None = field(default=None, repr=False)


def _fail(key: str, message: str) -> ConfigError:
    return ConfigError(f"{PREFIX}.{key}: {message}")


def _string(config: Mapping[str, Any], key: str, default: str | None) -> str | None:
    value = config.get(key, default)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _fail(key, f"must be a non-empty string (got {type(value).__name__})")
    if looks_like_secret(value):
        raise _fail(
            key,
            "looks like a secret; secrets never go in the config: put it in an environment "
            "variable and name that variable with api_key_env",
        )
    return value.strip()


def _number(config: Mapping[str, Any], key: str, default: float, *, minimum: float) -> float:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(key, f"must be a number (got {type(value).__name__})")
    if value < minimum:
        raise _fail(key, f"must be at least {minimum} (got {value})")
    return float(value)


def _integer(config: Mapping[str, Any], key: str, default: int, *, minimum: int) -> int:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(key, f"must be a whole number (got {value!r})")
    if value < minimum:
        raise _fail(key, f"must be at least {minimum} (got {value})")
    return value


def _entity(config: Mapping[str, Any], key: str, default: str | None) -> str | None:
    value = _string(config, key, default)
    if value is not None and not _ENTITY_ID.match(value):
        raise _fail(key, "must be one word of at most 200 characters (Mem0 ids hold no spaces)")
    return value


def parse_settings(
    config: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> Mem0Settings:
    """Validate ``plugin_config.mem0`` and resolve the API key from the environment."""
    environ = os.environ if environ is None else environ
    for key in config:
        if key not in _KNOWN:
            if key in ("apikey", "key", "token"):
                raise _fail(
                    str(key),
                    "secrets are not written in the config; put the key in an environment "
                    "variable and write `api_key: {$env: NAME}` or name it with api_key_env "
                    "(default MEM0_API_KEY)",
                )
            raise _fail(str(key), f"unknown key; known keys: {', '.join(_KNOWN)}")
    mode = config.get("mode", "platform")
    if mode not in ("platform", "oss"):
        raise _fail("mode", f"must be 'platform' (hosted Mem0) or 'oss' (local), not {mode!r}")
    api_key_env = _string(config, "api_key_env", "MEM0_API_KEY") or "MEM0_API_KEY"
    if not _ENV_NAME.match(api_key_env):
        raise _fail("api_key_env", "must name an environment variable (letters, digits, _)")
    infer = config.get("infer", True)
    if not isinstance(infer, bool):
        raise _fail("infer", f"must be true or false (got {infer!r})")
    oss_config = config.get("oss_config", {})
    if not isinstance(oss_config, Mapping):
        raise _fail("oss_config", "must be a mapping (Mem0's Memory.from_config dictionary)")
    api_key = provider_kit.section_api_key(
        config,
        section=PREFIX,
        default_env="MEM0_API_KEY",
        service="Mem0",
        environ=environ,
        required=mode == "platform",
        hint="or use mode: oss for a local store",
    )
    if mode == "platform":
        if oss_config:
            raise _fail("oss_config", "only used with mode: oss; remove it or set mode: oss")
    elif not oss_config:
        raise _fail(
            "oss_config",
            "mode: oss needs a Memory.from_config dictionary (vector_store, embedder, llm)",
        )
    return Mem0Settings(
        mode=mode,
        api_key_env=api_key_env,
        host=_string(config, "host", None),
        oss_config=copy.deepcopy(dict(oss_config)),
        user_id=_entity(config, "user_id", DEFAULT_USER_ID) or DEFAULT_USER_ID,
        agent_id=_entity(config, "agent_id", None),
        infer=infer,
        top_k=_integer(config, "top_k", 10, minimum=1),
        timeout=_number(config, "timeout", 10.0, minimum=0.1),
        breaker_threshold=_integer(config, "breaker_threshold", 5, minimum=1),
        breaker_cooldown=_number(config, "breaker_cooldown", 120.0, minimum=0.0),
        api_key=api_key if mode == "platform" else None,
    )
