"""RetainDB settings: ``plugin_config.retaindb`` validated once, at start-up, into a frozen object.

Every mistake is a :class:`ConfigError` naming ``plugin_config.retaindb.<key>`` and what to do,
so an operator learns about it when the host starts rather than at the first failed sync.
Secrets only ever come from the environment: ``api_key: {$env: NAME}`` (resolved by the config
loader) or ``api_key_env: NAME``; the key itself is never echoed in a message or a repr.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from hermes_core import provider_kit
from hermes_core.errors import ConfigError
from hermes_core.redact import looks_like_secret

PREFIX = "plugin_config.retaindb"
_ENV_NAME = provider_kit.ENV_NAME


@dataclass(frozen=True)
class RetainDBSettings:
    """Typed ``plugin_config.retaindb``; defaults are the documented ones."""

    base_url: str = "https://api.retaindb.com"
    api_key_env: str = "RETAINDB_API_KEY"
    project: str = "default"
    #: the principal used when a session has no ``user_id`` (a single-user home)
    user_id: str = "default"
    #: seconds for every HTTP request the writer thread and the tools make
    timeout: float = 10.0
    #: seconds for the recall search made before each turn (kept short: the user waits)
    recall_timeout: float = 3.0
    #: seconds recall is skipped after a recall timed out (a hung server costs one wait)
    recall_cooldown: float = 30.0
    #: how many memories one recall or search returns
    top_k: int = 8
    #: longest text shown per recalled memory (a window around the matched words)
    snippet_chars: int = 600
    #: delivery attempts before a queued turn is parked
    max_attempts: int = 8
    #: first retry delay in seconds; doubles with each failed attempt
    backoff_base: float = 1.0
    #: longest retry delay in seconds
    backoff_cap: float = 300.0
    #: seconds ``memory_shutdown`` waits for the queue to drain
    drain_timeout: float = 5.0
    #: ``api_key`` (from ``{$env: NAME}``) or the ``api_key_env`` variable when it was set at
    #: start-up; see :func:`read_api_key`. Never in a repr, never compared.
    api_key: str | None = field(default=None, repr=False, compare=False)


_POSITIVE_FLOATS = ("timeout", "recall_timeout", "backoff_base", "backoff_cap")
_POSITIVE_INTS = ("top_k", "snippet_chars", "max_attempts")


def parse_settings(
    config: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> RetainDBSettings:
    """Validate the raw section; raises :class:`ConfigError` on the first problem.

    The key is taken from ``api_key`` or the ``api_key_env`` variable (``environ``, default
    ``os.environ``) if it is there; :func:`read_api_key` insists on it."""
    known = {f.name for f in fields(RetainDBSettings)}
    values: dict[str, Any] = {}
    for key, value in config.items():
        if key in ("key", "token", "secret"):
            raise ConfigError(
                f"{PREFIX}.{key}: secrets are not written in the config; put the key in an "
                f"environment variable and write `{PREFIX}.api_key: {{$env: NAME}}` or name "
                f"it with {PREFIX}.api_key_env"
            )
        if key == "api_key":
            continue  # read below, never checked like a plain string (it is the key)
        if key not in known:
            raise ConfigError(
                f"{PREFIX}.{key}: unknown setting; known settings: {', '.join(sorted(known))}"
            )
        values[key] = _check(key, value)
    values["api_key"] = provider_kit.section_api_key(
        config,
        section=PREFIX,
        default_env=RetainDBSettings.api_key_env,
        service="RetainDB",
        environ=environ,
        required=False,
    )
    settings = RetainDBSettings(**values)
    if settings.backoff_cap < settings.backoff_base:
        raise ConfigError(
            f"{PREFIX}.backoff_cap ({settings.backoff_cap}) is below {PREFIX}.backoff_base "
            f"({settings.backoff_base}); raise the cap or lower the base"
        )
    return settings


def _check(key: str, value: Any) -> Any:
    where = f"{PREFIX}.{key}"
    if key in _POSITIVE_FLOATS:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where}: expected a number of seconds, got {type(value).__name__}")
        if not math.isfinite(value) or value <= 0:
            raise ConfigError(f"{where}: must be a positive number of seconds, got {value}")
        return float(value)
    if key in ("drain_timeout", "recall_cooldown"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where}: expected a number of seconds, got {type(value).__name__}")
        if not math.isfinite(value) or value < 0:
            raise ConfigError(f"{where}: must be 0 or more seconds, got {value}")
        return float(value)
    if key in _POSITIVE_INTS:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{where}: expected a whole number of at least 1, got {value!r}")
        return value
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: expected a non-empty string, got {value!r}")
    if looks_like_secret(value):
        raise ConfigError(
            f"{where}: looks like a secret; never write keys in the config, name the "
            f"environment variable that holds it with {PREFIX}.api_key_env"
        )
    if key == "api_key_env" and not _ENV_NAME.match(value):
        raise ConfigError(
            f"{where}: must be the name of an environment variable (like RETAINDB_API_KEY), "
            "not the key itself"
        )
    if key == "base_url":
        return provider_kit.check_base_url(value, where=where, key_hint=f"{PREFIX}.api_key_env")
    return value.strip()


def read_api_key(settings: RetainDBSettings, environ: Mapping[str, str] | None = None) -> str:
    """The API key the settings carry, else the one in the variable they name; required."""
    if settings.api_key:
        return settings.api_key
    return provider_kit.read_api_key(
        settings.api_key_env, where=f"{PREFIX}.api_key_env", service="RetainDB", environ=environ
    )
