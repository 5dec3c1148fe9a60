"""Load ``config.yaml`` into :class:`~hermes_core.settings.Settings`, strictly.

Why strict: a misspelled key that is silently ignored is a setting the operator believes in
and does not have. Every problem names the key, the file and the line; all problems are
reported at once. Values can come from defaults, the file (or a dict), and environment
variables ``HERMES__SECTION__KEY``; each value remembers where it came from (provenance).
Secrets never live in the file: only the *name* of an environment variable does.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import json
import os
import re
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hermes_core.errors import ConfigError
from hermes_core.settings import Settings

ENV_PREFIX = "HERMES__"
SourceKind = Literal["default", "file", "argument", "environment"]
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SECRET_KEY = re.compile(
    r"^(api_?key|token|secret|password|passwd|auth|authorization|access_key|private_key)$"
    r"|_(api_?key|token|secret|password|passwd)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Source:
    """Where one configuration value came from."""

    kind: SourceKind
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.kind} ({self.detail})" if self.detail else self.kind


@dataclass
class LoadedConfig:
    """Validated settings plus the provenance of every value."""

    settings: Settings
    home: Path
    path: Path | None = None
    provenance: dict[str, Source] = field(default_factory=dict)
    environ: Mapping[str, str] = field(default_factory=dict, repr=False)

    def source_of(self, dotted: str) -> Source:
        """The source of a setting, or of the nearest section that set it."""
        probe = dotted
        while probe:
            if probe in self.provenance:
                return self.provenance[probe]
            probe = probe.rpartition(".")[0]
        return Source("default")

    def plugin_section(self, name: str) -> dict[str, Any]:
        """``plugin_config.<name>`` with every ``{$env: NAME}`` resolved from the environment."""
        raw = self.settings.plugin_config.get(name, {})
        resolved: dict[str, Any] = _resolve_env_refs(
            copy.deepcopy(raw), f"plugin_config.{name}", self.environ
        )
        return resolved

    def items(self) -> Iterator[tuple[str, Any, Source]]:
        """Every leaf setting as ``(dotted name, value, source)`` in declaration order."""
        yield from _walk(self.settings, "", self)


def resolve_home(home: str | os.PathLike[str] | None, environ: Mapping[str, str]) -> Path:
    """``--home`` wins, then ``$HERMES_HOME``, then ``~/.hermes``."""
    if home is not None:
        return Path(home).expanduser()
    if environ.get("HERMES_HOME"):
        return Path(environ["HERMES_HOME"]).expanduser()
    return Path("~/.hermes").expanduser()


def load_config(
    source: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    *,
    home: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> LoadedConfig:
    """Build validated settings from a file path, a mapping, or the home's ``config.yaml``.

    A path given explicitly must exist; the home's ``config.yaml`` is optional.
    Raises :class:`ConfigError` listing every problem, each naming the key and where it is.
    """
    env = dict(os.environ if environ is None else environ)
    home_path = resolve_home(home, env)
    loaded = LoadedConfig(settings=Settings(), home=home_path, environ=env)
    problems: list[str] = []
    if isinstance(source, Mapping):
        _apply_mapping(loaded, source, _constant_source(Source("argument")), "config", problems)
    else:
        path = Path(source).expanduser() if source is not None else home_path / "config.yaml"
        if source is not None or path.exists():
            data, lines = _read_yaml(path)
            loaded.path = path
            label = str(path)

            def from_file(dotted: str) -> Source:
                line = lines.get(dotted)
                return Source("file", f"{label}:{line}" if line else label)

            _apply_mapping(loaded, data, from_file, label, problems)
    _apply_environment(loaded, env, problems)
    if problems:
        noun = "problem" if len(problems) == 1 else "problems"
        header = f"invalid configuration ({len(problems)} {noun}):"
        raise ConfigError("\n".join([header, *problems]))
    return loaded


# --- reading YAML with line numbers ----------------------------------------------------


def _read_yaml(path: Path) -> tuple[Mapping[str, Any], dict[str, int]]:
    import yaml

    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: config file not found; check --config or $HERMES_HOME"
        ) from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, expected a YAML config file") from None
    except PermissionError:
        raise ConfigError(f"{path}: permission denied; make the file readable") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 text (bad byte at offset {exc.start}); save it as UTF-8"
        ) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{path}{where}: invalid YAML: {problem}") from None
    if data is None:
        return {}, {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}:1: the config must be a mapping of sections (model:, ...)")
    lines: dict[str, int] = {}
    duplicates: list[str] = []
    _index_lines(node, "", lines, duplicates)
    if duplicates:
        raise ConfigError(
            "\n".join(f"{path}:{d}: duplicate key; keep one of them" for d in duplicates)
        )
    return data, lines


def _index_lines(node: Any, prefix: str, lines: dict[str, int], duplicates: list[str]) -> None:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return
    seen: set[str] = set()
    for key_node, value_node in node.value:
        key = str(key_node.value)
        dotted = f"{prefix}.{key}" if prefix else key
        if dotted in seen:
            duplicates.append(f"{key_node.start_mark.line + 1}: {dotted}")
        seen.add(dotted)
        lines[dotted] = key_node.start_mark.line + 1
        _index_lines(value_node, dotted, lines, duplicates)


# --- validation ------------------------------------------------------------------------


class _Invalid(Exception):
    """One value does not fit its field; ``subpath`` names the nested key at fault."""

    def __init__(self, message: str, subpath: str = "") -> None:
        super().__init__(message)
        self.subpath = subpath


def _apply_mapping(
    loaded: LoadedConfig,
    data: Mapping[str, Any],
    origin: typing.Callable[[str], Source],
    label: str,
    problems: list[str],
) -> None:
    def where(dotted: str) -> str:
        source = origin(dotted)
        return source.detail or label

    def visit(target: Any, values: Mapping[str, Any], prefix: str) -> None:
        hints = typing.get_type_hints(type(target))
        fields = {f.name: f for f in dataclasses.fields(target)}
        for key, value in values.items():
            dotted = f"{prefix}{key}"
            if not isinstance(key, str) or key not in fields:
                problems.append(f"{where(dotted)}: {dotted}: {_unknown_key_hint(key, fields)}")
                continue
            tp = hints[key]
            if dataclasses.is_dataclass(tp):
                if not isinstance(value, Mapping):
                    problems.append(f"{where(dotted)}: {dotted}: must be a mapping of settings")
                    continue
                visit(getattr(target, key), value, dotted + ".")
                continue
            try:
                coerced = _coerce(value, tp, fields[key].metadata, dotted)
            except _Invalid as exc:
                at = f"{dotted}.{exc.subpath}" if exc.subpath else dotted
                problems.append(f"{where(at)}: {at}: {exc}")
                continue
            setattr(target, key, coerced)
            loaded.provenance[dotted] = origin(dotted)

    visit(loaded.settings, data, "")


def _unknown_key_hint(key: object, fields: Mapping[str, Any]) -> str:
    if isinstance(key, str) and _SECRET_KEY.search(key):
        return (
            "secrets are not written in the config file; put the secret in an environment "
            "variable and name it with `api_key_env: NAME`"
        )
    close = difflib.get_close_matches(str(key), list(fields), n=1)
    hint = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(fields)}"
    return f"unknown key ({hint})"


def _coerce(value: Any, tp: Any, meta: Mapping[str, Any], dotted: str) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(value, inner[0], meta, dotted)
    if origin is Literal:
        if value not in args:
            raise _Invalid(f"must be one of {', '.join(map(str, args))} (got {value!r})")
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise _Invalid(f"must be true or false (got {value!r})")
        return value
    if tp in (int, float):
        return _check_bounds(_number(value, tp), meta)
    if tp is str:
        return _string(value, meta, dotted)
    if origin is list:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _Invalid(f"must be a list of names, e.g. [a, b] (got {value!r})")
        return list(value)
    if origin is dict:
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise _Invalid(f"must be a mapping (got {value!r})")
        value_type = args[1]
        if value_type is Any or typing.get_origin(value_type) is dict:
            for name, section in value.items():
                if not isinstance(section, Mapping):
                    raise _Invalid("must be a mapping of that plugin's settings", subpath=name)
                _reject_literal_secrets(section, name)
            return copy.deepcopy(dict(value))
        coerced = {}
        for key, item in value.items():
            try:
                coerced[key] = _coerce(item, value_type, meta, f"{dotted}.{key}")
            except _Invalid as exc:
                raise _Invalid(str(exc), subpath=key) from None
        return coerced
    raise _Invalid(f"unsupported setting type {tp!r}")  # pragma: no cover - a settings bug


def _number(value: Any, tp: type) -> Any:
    kind = "a whole number" if tp is int else "a number"
    if isinstance(value, bool):
        raise _Invalid(f"must be {kind}, not {str(value).lower()}")
    if isinstance(value, str):
        try:
            value = tp(value.strip().replace("_", ""))
        except ValueError:
            raise _Invalid(f"must be {kind} (got {value!r})") from None
    if tp is int and isinstance(value, float):
        if not value.is_integer():
            raise _Invalid(f"must be a whole number (got {value!r})")
        value = int(value)
    if not isinstance(value, (int, float)):
        raise _Invalid(f"must be {kind} (got {value!r})")
    return tp(value)


def _check_bounds(value: float, meta: Mapping[str, Any]) -> float:
    low, high = meta.get("minimum"), meta.get("maximum")
    if low is not None and value < low:
        raise _Invalid(f"must be at least {low} (got {value})")
    if high is not None and value > high:
        raise _Invalid(f"must be at most {high} (got {value})")
    return value


def _string(value: Any, meta: Mapping[str, Any], dotted: str) -> str:
    if not isinstance(value, str):
        raise _Invalid(f"must be a string; quote it (got {value!r})")
    if meta.get("secret_env") and value and not _ENV_NAME.match(value):
        raise _Invalid(
            "must name an environment variable (letters, digits, _); it looks like a "
            "secret itself: move the secret into the environment and write its name here"
        )
    return value


def _reject_literal_secrets(section: Mapping[str, Any], subpath: str) -> None:
    for key, value in section.items():
        here = f"{subpath}.{key}"
        if isinstance(value, Mapping):
            if set(value) == {"$env"}:
                if not isinstance(value["$env"], str) or not _ENV_NAME.match(value["$env"]):
                    raise _Invalid("{$env: NAME} needs an environment variable name", here)
                continue
            _reject_literal_secrets(value, here)
        elif isinstance(key, str) and _SECRET_KEY.search(key) and value not in (None, ""):
            raise _Invalid(
                "secrets are not written in the config file; use "
                f"`{key}: {{$env: NAME}}` or `{key}_env: NAME` and export NAME",
                here,
            )


def _resolve_env_refs(value: Any, dotted: str, environ: Mapping[str, str]) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$env"}:
            name = value["$env"]
            if name not in environ:
                raise ConfigError(
                    f"{dotted}: environment variable {name} is not set; export it or remove "
                    "the setting"
                )
            return environ[name]
        return {k: _resolve_env_refs(v, f"{dotted}.{k}", environ) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve_env_refs(v, dotted, environ) for v in value]
    return value


def _apply_environment(
    loaded: LoadedConfig, environ: Mapping[str, str], problems: list[str]
) -> None:
    import yaml

    for name in sorted(environ):
        if not name.upper().startswith(ENV_PREFIX):
            continue
        parts = [p.lower() for p in name[len(ENV_PREFIX) :].split("__") if p]
        if not parts:
            continue
        try:
            value = yaml.safe_load(environ[name])
        except yaml.YAMLError:
            value = environ[name]
        nested: Any = value
        for part in reversed(parts):
            nested = {part: nested}
        _apply_mapping(
            loaded, nested, _constant_source(Source("environment", name)), name, problems
        )


def render_value(value: Any) -> str:
    """A setting's value as it would be written in YAML (for ``config show`` and the docs)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return json.dumps(value) if value == "" or value.strip() != value else value
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _constant_source(source: Source) -> typing.Callable[[str], Source]:
    def origin(_dotted: str) -> Source:
        return source

    return origin


def _walk(obj: Any, prefix: str, loaded: LoadedConfig) -> Iterator[tuple[str, Any, Source]]:
    for f in dataclasses.fields(obj):
        dotted = f"{prefix}{f.name}"
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            yield from _walk(value, dotted + ".", loaded)
        else:
            yield dotted, value, loaded.source_of(dotted)
