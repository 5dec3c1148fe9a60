"""The ``plugin_config.honcho`` section, validated once at start-up into a frozen object.

Every mistake is a :class:`~hermes_core.errors.ConfigError` that names the key and says what
to do, so an operator fixes the file instead of reading a traceback. Secrets are accepted
only by reference: ``api_key: {$env: NAME}`` (resolved by the config loader) or
``api_key_env: NAME`` (read from the environment here); the key is never echoed in a message.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from hermes_core import provider_kit
from hermes_core.errors import ConfigError
from hermes_core.redact import looks_like_secret

SessionStrategy = Literal["per-session", "per-directory", "global"]
RecallMode = Literal["hybrid", "context", "tools"]

HOSTED_BASE_URL = "https://api.honcho.dev"
_PREFIX = "plugin_config.honcho"
_ENV_NAME = provider_kit.ENV_NAME
_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
_STRATEGIES: tuple[SessionStrategy, ...] = ("per-session", "per-directory", "global")
_MODES: tuple[RecallMode, ...] = ("hybrid", "context", "tools")
#: keys people reach for that would put a secret in the file (``api_key`` is supported:
#: the loader only lets it through as ``{$env: NAME}``)
_SECRET_KEYS = frozenset({"apikey", "key", "token", "secret"})


@dataclass(frozen=True)
class HonchoSettings:
    """Typed settings; see ``docs/providers/honcho.md`` for each key."""

    workspace: str = "hermes"
    ai_peer: str = "hermes"
    peer_name: str = "user"
    session_strategy: SessionStrategy = "per-session"
    base_url: str = HOSTED_BASE_URL
    api_key_env: str = "HONCHO_API_KEY"
    context_tokens: int = 800
    recall_mode: RecallMode = "hybrid"
    message_max_chars: int = 25_000
    search_limit: int = 8
    timeout: float = 8.0
    max_retries: int = 1
    #: ``api_key`` (from ``{$env: NAME}``) or the ``api_key_env`` variable, read at start-up;
    #: excluded from repr so it never lands in a log
    api_key: str | None = field(default=None, repr=False, compare=False)

    @property
    def hosted(self) -> bool:
        return self.base_url.rstrip("/") == HOSTED_BASE_URL


_DEFAULTS = HonchoSettings()
_KNOWN = (
    "workspace",
    "ai_peer",
    "peer_name",
    "session_strategy",
    "base_url",
    "api_key",
    "api_key_env",
    "context_tokens",
    "recall_mode",
    "message_max_chars",
    "search_limit",
    "timeout",
    "max_retries",
)


#: how every user peer begins (see provider_kit.principal)
_USER_PEERS = (provider_kit.USER_KIND + "-", provider_kit.USER_KIND + "_")


def _anonymous_peer(peer_name: str) -> str:
    return provider_kit.anonymous_principal(peer_name).lower()


def _fail(key: str, problem: str) -> ConfigError:
    return ConfigError(f"{_PREFIX}.{key}: {problem}")


def _string(config: Mapping[str, Any], key: str, default: str) -> str:
    value = config.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise _fail(key, f"must be a non-empty string (default {default!r})")
    if looks_like_secret(value):
        raise _fail(
            key,
            "looks like a secret; never write keys in the config file. Put the key in an "
            "environment variable and name it with api_key_env",
        )
    return value.strip()


def _identifier(config: Mapping[str, Any], key: str, default: str) -> str:
    value = _string(config, key, default)
    if not _ID.match(value):
        raise _fail(key, "use 1-100 letters, digits, '_' or '-' (Honcho's id alphabet)")
    return value


def _integer(config: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(key, f"must be a whole number between {low} and {high} (default {default})")
    if not low <= value <= high:
        raise _fail(key, f"is {value}; use a number between {low} and {high}")
    return value


def _seconds(config: Mapping[str, Any], key: str, default: float) -> float:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(key, f"must be a number of seconds (default {default})")
    if not 0.1 <= float(value) <= 300:
        raise _fail(key, f"is {value}; use between 0.1 and 300 seconds")
    return float(value)


def _choice(config: Mapping[str, Any], key: str, default: str, choices: tuple[str, ...]) -> str:
    value = config.get(key, default)
    if value not in choices:
        raise _fail(key, f"is {value!r}; use one of {', '.join(choices)}")
    return str(value)


def _base_url(config: Mapping[str, Any]) -> str:
    value = _string(config, "base_url", HOSTED_BASE_URL)
    if not value.startswith(("http://", "https://")):
        raise _fail("base_url", "must start with http:// or https://")
    return value.rstrip("/")


def _api_key_env(config: Mapping[str, Any]) -> str:
    value = config.get("api_key_env", _DEFAULTS.api_key_env)
    if not isinstance(value, str) or not _ENV_NAME.match(value):
        # the value may be a pasted key: do not repeat it
        raise _fail(
            "api_key_env",
            "must be the NAME of an environment variable (e.g. HONCHO_API_KEY), not the key",
        )
    return value


def parse_settings(
    config: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> HonchoSettings:
    """Validate ``config`` (the ``plugin_config.honcho`` section) and read the API key."""
    if not isinstance(config, Mapping):
        raise ConfigError(f"{_PREFIX}: must be a mapping of settings")
    for key in config:
        if key in _SECRET_KEYS:
            raise _fail(
                str(key),
                "secrets are not written in the config file; put the key in an environment "
                "variable and write `api_key: {$env: NAME}` or set api_key_env to its name",
            )
        if key not in _KNOWN:
            raise _fail(str(key), f"unknown setting; known settings: {', '.join(_KNOWN)}")
    env: Mapping[str, str] = os.environ if environ is None else environ
    settings = HonchoSettings(
        workspace=_identifier(config, "workspace", _DEFAULTS.workspace),
        ai_peer=_identifier(config, "ai_peer", _DEFAULTS.ai_peer),
        peer_name=_identifier(config, "peer_name", _DEFAULTS.peer_name),
        session_strategy=_choice(  # type: ignore[arg-type]
            config, "session_strategy", _DEFAULTS.session_strategy, _STRATEGIES
        ),
        base_url=_base_url(config),
        api_key_env=_api_key_env(config),
        context_tokens=_integer(config, "context_tokens", _DEFAULTS.context_tokens, 50, 100_000),
        recall_mode=_choice(config, "recall_mode", _DEFAULTS.recall_mode, _MODES),  # type: ignore[arg-type]
        message_max_chars=_integer(
            config, "message_max_chars", _DEFAULTS.message_max_chars, 1_000, 1_000_000
        ),
        search_limit=_integer(config, "search_limit", _DEFAULTS.search_limit, 1, 100),
        timeout=_seconds(config, "timeout", _DEFAULTS.timeout),
        max_retries=_integer(config, "max_retries", _DEFAULTS.max_retries, 0, 5),
    )
    if settings.peer_name == settings.ai_peer:
        raise _fail("peer_name", "must differ from ai_peer (the assistant's peer)")
    ai_peer = settings.ai_peer.lower()
    if ai_peer.startswith(_USER_PEERS) or ai_peer == _anonymous_peer(settings.peer_name):
        # a user must never read or write as the assistant
        raise _fail(
            "ai_peer",
            f"{settings.ai_peer!r} is a name a user's peer can take (users are u-<id> or "
            "u_<id>_<hash>); choose another, e.g. hermes",
        )
    api_key = provider_kit.section_api_key(
        config,
        section=_PREFIX,
        default_env=_DEFAULTS.api_key_env,
        service="Honcho",
        environ=env,
        required=settings.hosted,
        hint="or point base_url at a self-hosted Honcho that needs no key",
    )
    return replace(settings, api_key=api_key)
