"""Check and coerce one configuration value against its field's type, bounds and secret rules.

Pure functions: they raise :class:`InvalidValue` with a message a user can act on, and the
loader adds the key, the file and the line.
"""

from __future__ import annotations

import copy
import math
import re
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal

from hermes_core.errors import ConfigError
from hermes_core.redact import looks_like_secret

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
SECRET_KEY = re.compile(
    r"^(api_?key|token|secret|password|passwd|auth|authorization|access_key|private_key)$"
    r"|_(api_?key|token|secret|password|passwd)$",
    re.IGNORECASE,
)
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


class InvalidValue(Exception):
    """One value does not fit its field; ``subpath`` names the nested key at fault."""

    def __init__(self, message: str, subpath: str = "") -> None:
        super().__init__(message)
        self.subpath = subpath


def env_reference(value: Any) -> str | None:
    """The variable name of a ``{$env: NAME}`` value, else ``None``."""
    if isinstance(value, Mapping) and set(value) == {"$env"}:
        name = value["$env"]
        if not isinstance(name, str) or not ENV_NAME.match(name):
            raise InvalidValue("{$env: NAME} needs an environment variable name")
        return name
    return None


def coerce(value: Any, tp: Any, meta: Mapping[str, Any], *, trusted: bool) -> Any:
    """``value`` converted to ``tp``; ``trusted`` (environment) values skip secret checks."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return coerce(value, inner[0], meta, trusted=trusted)
    if origin is Literal:
        if value not in args:
            raise InvalidValue(f"must be one of {', '.join(map(str, args))} (got {value!r})")
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise InvalidValue(f"must be true or false (got {value!r})")
        return value
    if tp in (int, float):
        return _check_bounds(_number(value, tp), meta)
    if tp is str:
        return _string(value, meta, trusted=trusted)
    if origin is list:
        return _names(value, meta)
    if origin is dict:
        return _mapping(value, args[1], meta, trusted=trusted)
    raise InvalidValue(f"unsupported setting type {tp!r}")  # pragma: no cover - a settings bug


def _number(value: Any, tp: type) -> Any:
    kind = "a whole number" if tp is int else "a number"
    if isinstance(value, bool):
        raise InvalidValue(f"must be {kind}, not {str(value).lower()}")
    if isinstance(value, str):
        try:
            value = tp(value.strip().replace("_", ""))
        except ValueError:
            raise InvalidValue(f"must be {kind} (got {value!r})") from None
    if not isinstance(value, (int, float)):
        raise InvalidValue(f"must be {kind} (got {value!r})")
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidValue(f"must be a finite number (got {value!r})")
    if tp is int and isinstance(value, float):
        if not value.is_integer():
            raise InvalidValue(f"must be a whole number (got {value!r})")
        value = int(value)
    return tp(value)


def _check_bounds(value: float, meta: Mapping[str, Any]) -> float:
    low, high = meta.get("minimum"), meta.get("maximum")
    if low is not None and value < low:
        raise InvalidValue(f"must be at least {low} (got {value})")
    if high is not None and value > high:
        raise InvalidValue(f"must be at most {high} (got {value})")
    return value


def _string(value: Any, meta: Mapping[str, Any], *, trusted: bool) -> str:
    if not isinstance(value, str):
        raise InvalidValue(f"must be a string; quote it (got {value!r})")
    if meta.get("secret_env") and value:
        if not ENV_NAME.match(value) or looks_like_secret(value):
            raise InvalidValue(
                "must name an environment variable (letters, digits, _); it looks like a "
                "secret itself: move the secret into the environment and write its name here"
            )
    elif not trusted and looks_like_secret(value):
        raise InvalidValue(
            "looks like a secret; secrets are not written in the config file: put it in an "
            "environment variable"
        )
    return value


def _names(value: Any, meta: Mapping[str, Any]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidValue(f"must be a list of names, e.g. [a, b] (got {value!r})")
    for item in value:
        if not NAME.match(item):
            raise InvalidValue(f"{item!r} is not a plugin name (letters, digits, '_', '.', '-')")
    return list(value)


def _mapping(value: Any, value_type: Any, meta: Mapping[str, Any], *, trusted: bool) -> Any:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise InvalidValue(f"must be a mapping (got {value!r})")
    if value_type is Any or typing.get_origin(value_type) is dict:
        for name, section in value.items():
            if not isinstance(section, Mapping):
                raise InvalidValue("must be a mapping of that plugin's settings", subpath=name)
            if not trusted:
                reject_literal_secrets(section, name)
        return copy.deepcopy(dict(value))
    coerced = {}
    for key, item in value.items():
        try:
            coerced[key] = coerce(item, value_type, meta, trusted=trusted)
        except InvalidValue as exc:
            raise InvalidValue(str(exc), subpath=key) from None
    return coerced


def reject_literal_secrets(section: Any, subpath: str) -> None:
    """Refuse secret-named keys with literal values and any value shaped like a key."""
    if isinstance(section, list):
        for index, item in enumerate(section):
            reject_literal_secrets(item, f"{subpath}[{index}]")
        return
    if isinstance(section, str):
        shape = looks_like_secret(section)
        if shape:
            raise InvalidValue(
                f"looks like a secret ({shape}); secrets are not written in the config file: "
                "use {$env: NAME} and export NAME",
                subpath,
            )
        return
    if not isinstance(section, Mapping):
        return
    for key, value in section.items():
        here = f"{subpath}.{key}"
        try:
            if env_reference(value) is not None:
                continue
        except InvalidValue as exc:
            raise InvalidValue(str(exc), here) from None
        literal = isinstance(value, (str, int)) and value not in ("", None)
        if isinstance(key, str) and SECRET_KEY.search(key) and literal:
            raise InvalidValue(
                "secrets are not written in the config file; use "
                f"`{key}: {{$env: NAME}}` or `{key}_env: NAME` and export NAME",
                here,
            )
        reject_literal_secrets(value, here)


def resolve_env_refs(value: Any, dotted: str, environ: Mapping[str, str]) -> Any:
    """A copy of ``value`` with every ``{$env: NAME}`` replaced by the variable's value."""
    if isinstance(value, dict):
        name = env_reference(value)
        if name is not None:
            if name not in environ:
                raise ConfigError(
                    f"{dotted}: environment variable {name} is not set; export it or remove "
                    "the setting"
                )
            return environ[name]
        return {k: resolve_env_refs(v, f"{dotted}.{k}", environ) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_env_refs(v, dotted, environ) for v in value]
    return value


def deep_merge(base: Any, update: Any) -> Any:
    """``update`` laid over ``base``: mappings merge key by key, anything else replaces."""
    if isinstance(base, Mapping) and isinstance(update, Mapping):
        merged = dict(base)
        for key, value in update.items():
            merged[key] = deep_merge(base.get(key), value)
        return merged
    return update
