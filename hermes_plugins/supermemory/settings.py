"""``plugin_config.supermemory``: validated once at start-up into a frozen dataclass.

Every mistake is a :class:`~hermes_core.errors.ConfigError` that names the key and says what
to do, so an operator finds a typo before the first turn rather than in a log afterwards.
The API key is never written in the config: ``api_key: {$env: NAME}`` (resolved by the config
loader) or ``api_key_env: NAME`` takes it from the environment, and it is never echoed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from hermes_core import provider_kit
from hermes_core.errors import ConfigError
from hermes_core.redact import looks_like_secret

SECTION = "plugin_config.supermemory"
DEFAULT_BASE_URL = "https://api.supermemory.ai"

_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,127}$")
_TAG_PREFIX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")
_URL = re.compile(r"^https?://[^\s/@]+(?::\d+)?(?:/[^\s]*)?$")


@dataclass(frozen=True)
class SupermemorySettings:
    """The provider's settings; see ``docs/providers/supermemory.md``."""

    container_tag: str = "hermes"
    api_key_env: str = "SUPERMEMORY_API_KEY"
    base_url: str = DEFAULT_BASE_URL
    max_recall_results: int = 5
    timeout: float = 10.0
    max_retries: int = 1
    default_user: str = "default"
    #: ``api_key`` (from ``{$env: NAME}``) or the ``api_key_env`` variable when it was set at
    #: start-up; see :func:`read_api_key`. Never in a repr, never compared.
    api_key: str | None = field(default=None, repr=False, compare=False)


_FIELDS: dict[str, type] = {
    "container_tag": str,
    "api_key_env": str,
    "base_url": str,
    "max_recall_results": int,
    "timeout": float,
    "max_retries": int,
    "default_user": str,
}


def _key(name: str) -> str:
    return f"{SECTION}.{name}"


def _typed(name: str, value: Any) -> Any:
    expected = _FIELDS[name]
    if expected is str:
        if not isinstance(value, str):
            raise ConfigError(f"{_key(name)} must be a string (got {type(value).__name__})")
        if looks_like_secret(value):
            raise ConfigError(
                f"{_key(name)} looks like a secret; secrets are never written in the config: "
                "put the key in an environment variable and name it with api_key_env"
            )
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{_key(name)} must be a number (got {value!r})")
    if expected is int:
        if not isinstance(value, int):
            raise ConfigError(f"{_key(name)} must be a whole number (got {value!r})")
        return value
    return float(value)


def _check_range(name: str, value: float, low: float, high: float) -> None:
    if not low <= value <= high:
        raise ConfigError(f"{_key(name)} must be between {low:g} and {high:g} (got {value!r})")


def parse_settings(
    config: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> SupermemorySettings:
    """Validate the raw section; raises ``ConfigError`` naming the offending key.

    The key is taken from ``api_key`` or the ``api_key_env`` variable (``environ``, default
    ``os.environ``) if it is there; :func:`read_api_key` insists on it."""
    if not isinstance(config, Mapping):
        raise ConfigError(f"{SECTION} must be a mapping of settings")
    values: dict[str, Any] = {}
    for name, value in config.items():
        if name == "api_key":
            continue  # read below, never checked like a plain string (it is the key)
        if isinstance(name, str) and name not in _FIELDS and "key" in name:
            raise ConfigError(
                f"{_key(str(name))}: secrets are not written in the config; write "
                f"`{_key('api_key')}: {{$env: NAME}}` or set {_key('api_key_env')} to the name "
                "of the environment variable holding the key"
            )
        if name not in _FIELDS:
            known = ", ".join(["api_key", *_FIELDS])
            raise ConfigError(f"{_key(str(name))}: unknown key (known keys: {known})")
        values[name] = _typed(name, value)
    settings = SupermemorySettings(**values)
    if not _TAG_PREFIX.fullmatch(settings.container_tag):
        raise ConfigError(
            f"{_key('container_tag')} must be 1-40 letters, digits, '_' or '-' starting with a "
            f"letter or digit (got {settings.container_tag!r}); the user id is appended to it"
        )
    if not _ENV_NAME.match(settings.api_key_env):
        raise ConfigError(
            f"{_key('api_key_env')} must name an environment variable such as "
            "SUPERMEMORY_API_KEY (capitals, digits and '_'), not hold the key itself"
        )
    if not _URL.match(settings.base_url):
        raise ConfigError(
            f"{_key('base_url')} must be an http(s) URL without credentials or spaces, "
            "such as https://api.supermemory.ai"
        )
    if not settings.default_user.strip():
        raise ConfigError(f"{_key('default_user')} must not be empty")
    _check_range("max_recall_results", settings.max_recall_results, 1, 50)
    _check_range("timeout", settings.timeout, 0.1, 300)
    _check_range("max_retries", settings.max_retries, 0, 5)
    api_key = provider_kit.section_api_key(
        config,
        section=SECTION,
        default_env=SupermemorySettings.api_key_env,
        service="Supermemory",
        environ=environ,
        required=False,
    )
    return replace(settings, api_key=api_key)


def read_api_key(settings: SupermemorySettings, environ: Mapping[str, str] | None = None) -> str:
    """The API key the settings carry, else the one in the variable they name; required."""
    if settings.api_key:
        return settings.api_key
    return provider_kit.read_api_key(
        settings.api_key_env, where=_key("api_key_env"), service="Supermemory", environ=environ
    )
