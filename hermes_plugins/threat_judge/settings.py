"""``plugin_config.threat_judge`` validated once, at start-up, into a frozen object.

Every mistake is a :class:`ConfigError` naming ``plugin_config.threat_judge.<key>`` and what
to do, so an operator learns of it when the host starts, not when the first write is judged.
The endpoint falls back to the summariser's (``auxiliary.compression``, else the main model)
so that a home with one auxiliary model needs no second copy of its address.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from hermes_core import provider_kit
from hermes_core.compression.summarizer import LLMSummarizer
from hermes_core.config.settings import Settings
from hermes_core.config.values import env_reference
from hermes_core.errors import ConfigError
from hermes_core.llm import ChatEndpoint
from hermes_core.redact import looks_like_secret
from hermes_core.threats import SCOPES

PREFIX = "plugin_config.threat_judge"

OnError = Literal["block", "allow"]


@dataclass(frozen=True)
class JudgeSettings:
    """Typed ``plugin_config.threat_judge``; defaults are the documented ones."""

    #: the judge's endpoint; empty: ``auxiliary.compression.base_url``, else ``model.base_url``
    base_url: str = ""
    #: empty: ``auxiliary.compression.model``, else ``model.name``
    model: str = ""
    #: empty: the variable the chosen endpoint already names
    api_key_env: str = ""
    #: seconds one request may take (a write waits for it)
    timeout: float = 10.0
    #: what a failed judgement means: ``block`` (fail closed) or ``allow`` (fail open)
    on_error: OnError = "block"
    #: the scan scopes judged; others are left to the other scanners and send nothing
    scopes: tuple[str, ...] = ("strict",)
    #: longest piece of text sent in one request; longer text is judged in windows
    max_chars: int = 8000
    #: verdicts remembered (LRU keyed by sha256 of scope and text); 0: none
    cache_size: int = 1024
    #: the key from ``api_key: {$env: NAME}`` (never in a repr) and NAME, for messages
    api_key: str = field(default="", repr=False, compare=False)
    api_key_name: str = ""


_STRINGS = ("base_url", "model", "api_key_env")


def parse_settings(
    config: Mapping[str, Any], raw: Mapping[str, Any] | None = None
) -> JudgeSettings:
    """Validate the section (``config``: ``{$env: NAME}`` resolved; ``raw``: as written, to
    learn NAME); raises :class:`ConfigError` on the first problem."""
    known = {f.name for f in fields(JudgeSettings)} - {"api_key", "api_key_name"}
    values: dict[str, Any] = {}
    for key, value in config.items():
        if key in ("key", "token", "secret"):
            raise ConfigError(
                f"{PREFIX}.{key}: unknown setting; put the key in an environment variable and "
                f"write `{PREFIX}.api_key: {{$env: NAME}}` or `{PREFIX}.api_key_env: NAME`"
            )
        if key == "api_key":
            continue  # the key itself: read below, never echoed
        if key not in known:
            raise ConfigError(
                f"{PREFIX}.{key}: unknown setting; known settings: {', '.join(sorted(known))}"
            )
        values[key] = _check(key, value)
    if "api_key" in config:
        values.update(_api_key(config["api_key"], (raw or {}).get("api_key"), values))
    return JudgeSettings(**values)


def _api_key(value: Any, written: Any, values: Mapping[str, Any]) -> dict[str, str]:
    where = f"{PREFIX}.api_key"
    if values.get("api_key_env"):
        raise ConfigError(f"{where} and {PREFIX}.api_key_env are both set; keep one")
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(
            f"{where}: expected `{{$env: NAME}}` naming a variable that holds the key"
        )
    name = env_reference(written) if isinstance(written, dict) else None
    return {"api_key": value.strip(), "api_key_name": name or where}


#: the longest timeout accepted (a write waits for the judge)
MAX_TIMEOUT = 600.0


def _check(key: str, value: Any) -> Any:
    """One setting, checked; any value Python cannot even read is a ConfigError too (an
    unchecked ValueError would let the host start without the judge)."""
    try:
        return _check_value(key, value)
    except (ValueError, OverflowError, TypeError) as exc:
        raise ConfigError(
            f"{PREFIX}.{key}: cannot use {value!r:.80} ({type(exc).__name__}: {exc}); "
            "write a plain value of the documented kind"
        ) from None


def _check_value(key: str, value: Any) -> Any:
    where = f"{PREFIX}.{key}"
    if key == "timeout":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where}: expected a number of seconds, got {value!r}")
        if not math.isfinite(value) or value <= 0:
            raise ConfigError(f"{where}: must be a positive number of seconds, got {value!r}")
        if value > MAX_TIMEOUT:
            raise ConfigError(f"{where}: must be at most {MAX_TIMEOUT:g} seconds, got {value!r}")
        return float(value)
    if key in ("max_chars", "cache_size"):
        least = 200 if key == "max_chars" else 0
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ConfigError(
                f"{where}: expected a whole number of at least {least}, got {value!r}"
            )
        return value
    if key == "on_error":
        if value not in ("block", "allow"):
            raise ConfigError(
                f"{where}: expected block (refuse text the judge could not judge) or allow "
                f"(let it through and log), got {value!r}"
            )
        return value
    if key == "scopes":
        return _scopes(where, value)
    return _string(key, where, value)


def _scopes(where: str, value: Any) -> tuple[str, ...]:
    valid = ", ".join(SCOPES)
    if not isinstance(value, list | tuple) or not value:
        raise ConfigError(f"{where}: expected a non-empty list of scopes ({valid}), got {value!r}")
    wrong = [item for item in value if item not in SCOPES]
    if wrong:
        raise ConfigError(f"{where}: unknown scope {wrong[0]!r}; use some of: {valid}")
    if "all" in value:  # nothing scans with scope "all": it means both
        value = [*value, "strict", "context"]
    return tuple(dict.fromkeys(value))


def _string(key: str, where: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: expected a string, got {value!r}")
    text: str = value.strip()
    if text and looks_like_secret(text):
        raise ConfigError(
            f"{where}: looks like a secret; never write keys in the config, name the "
            f"environment variable that holds it with {PREFIX}.api_key_env"
        )
    if key == "api_key_env" and text and not provider_kit.ENV_NAME.match(text):
        raise ConfigError(
            f"{where}: must be the name of an environment variable (like JUDGE_API_KEY), "
            "not the key itself"
        )
    if key == "base_url" and text:
        return provider_kit.check_base_url(text, where=where, key_hint=f"{PREFIX}.api_key_env")
    return text


def endpoint_for(judge: JudgeSettings, settings: Settings) -> ChatEndpoint:
    """The judge's endpoint: its own keys first, then the summariser's choice of endpoint.

    A judge with its own ``base_url`` never borrows another endpoint's key variable: the
    summariser's key must not go to a different host. An empty model is sent empty, as the
    summariser does (single-model servers accept it)."""
    aux, main = settings.auxiliary.compression, settings.model
    fallback = LLMSummarizer(aux, main).primary
    base_url = judge.base_url or (fallback.base_url if fallback else "")
    model = judge.model or (fallback.model if fallback else "") or aux.model or main.name
    if not base_url:
        raise ConfigError(
            f"{PREFIX}: the judge has no endpoint; set {PREFIX}.base_url, or "
            "auxiliary.compression.base_url, or model.base_url"
        )
    key_env = judge.api_key_name or judge.api_key_env
    if not key_env:
        key_env = fallback.api_key_env if fallback and not judge.base_url else ""
    return ChatEndpoint(base_url, model, key_env, judge.timeout)
