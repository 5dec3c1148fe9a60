"""Load ``config.yaml`` into :class:`~hermes_core.config.settings.Settings`, strictly.

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
import typing
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hermes_core.config.settings import MemoryBackend, SessionBackend, Settings
from hermes_core.config.values import (
    SECRET_KEY,
    InvalidValue,
    coerce,
    deep_merge,
    env_reference,
    resolve_env_refs,
)
from hermes_core.config.yaml_source import read_yaml_mapping
from hermes_core.errors import ConfigError, InvalidArgument

ENV_PREFIX = "HERMES__"
SourceKind = Literal["default", "file", "argument", "environment"]


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
        resolved: dict[str, Any] = resolve_env_refs(
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
    _check_arguments(source, home, environ)
    env = dict(os.environ if environ is None else environ)
    home_path = resolve_home(home, env)
    loaded = LoadedConfig(settings=Settings(), home=home_path, environ=env)
    problems: list[str] = []
    if isinstance(source, Mapping):
        _apply_mapping(loaded, source, _constant_source(Source("argument")), "config", problems)
    else:
        path = Path(source).expanduser() if source is not None else home_path / "config.yaml"
        if source is not None or path.exists():
            data, lines = read_yaml_mapping(path)
            loaded.path = path
            label = str(path)

            def from_file(dotted: str) -> Source:
                line = lines.get(dotted)
                return Source("file", f"{label}:{line}" if line else label)

            _apply_mapping(loaded, data, from_file, label, problems)
    _apply_environment(loaded, env, problems)
    if not problems:
        _cross_checks(loaded.settings, loaded, problems)
    if problems:
        noun = "problem" if len(problems) == 1 else "problems"
        header = f"invalid configuration ({len(problems)} {noun}):"
        raise ConfigError("\n".join([header, *problems]))
    return loaded


def _check_arguments(source: object, home: object, environ: object) -> None:
    """Wrong types from Python fail here, saying what was expected, not deep inside."""
    if source is not None and not isinstance(source, (str, os.PathLike, Mapping)):
        raise InvalidArgument.of(
            "the config", "a path to config.yaml, a mapping of settings or None", source
        )
    if home is not None and not isinstance(home, (str, os.PathLike)):
        raise InvalidArgument.of("home", "a directory path or None", home)
    if environ is not None and not isinstance(environ, Mapping):
        raise InvalidArgument.of("environ", "a mapping of environment variables or None", environ)


# --- validation ------------------------------------------------------------------------


def _apply_mapping(
    loaded: LoadedConfig,
    data: Mapping[str, Any],
    origin: typing.Callable[[str], Source],
    label: str,
    problems: list[str],
) -> None:
    def where(dotted: str) -> str:
        return origin(dotted).detail or label

    def problem(dotted: str, message: str) -> None:
        problems.append(f"{where(dotted)}: {dotted}: {message}")

    def visit(target: Any, values: Mapping[str, Any], prefix: str) -> None:
        hints = typing.get_type_hints(type(target))
        fields = {f.name: f for f in dataclasses.fields(target)}
        for key, value in values.items():
            dotted = f"{prefix}{key}"
            if not isinstance(key, str) or key not in fields:
                if not _secret_reference(target, fields, key, value, dotted):
                    problem(dotted, _unknown_key_hint(key, fields))
                continue
            if isinstance(value, Mapping) and _secret_reference(target, fields, key, value, dotted):
                continue  # ``dsn: {$env: NAME}`` where both ``dsn`` and ``dsn_env`` exist
            tp = hints[key]
            if dataclasses.is_dataclass(tp):
                if isinstance(value, Mapping):
                    visit(getattr(target, key), value, dotted + ".")
                else:
                    problem(dotted, "must be a mapping of settings")
                continue
            try:
                coerced = coerce(value, tp, fields[key].metadata, trusted=trusted)
            except InvalidValue as exc:
                at = f"{dotted}.{exc.subpath}" if exc.subpath else dotted
                problem(at, str(exc))
                continue
            if trusted and isinstance(coerced, dict):
                coerced = deep_merge(getattr(target, key), coerced)
            setattr(target, key, coerced)
            loaded.provenance[dotted] = origin(dotted)
            if key == "plugin_config" and isinstance(value, Mapping):
                for name in value:  # each section's own line, for plugin_names' errors
                    loaded.provenance[f"{dotted}.{name}"] = origin(f"{dotted}.{name}")

    def _secret_reference(
        target: Any, fields: Mapping[str, Any], key: object, value: Any, dotted: str
    ) -> bool:
        """``api_key: {$env: NAME}`` in a section with ``api_key_env`` sets that field."""
        env_field = f"{key}_env"
        if not isinstance(key, str) or env_field not in fields:
            return False
        try:
            name = env_reference(value)
        except InvalidValue as exc:
            problem(dotted, str(exc))
            return True
        if name is None:
            return False
        setattr(target, env_field, name)
        loaded.provenance[dotted.rpartition(".")[0] + "." + env_field] = origin(dotted)
        return True

    trusted = origin("").kind == "environment"
    visit(loaded.settings, data, "")


def _unknown_key_hint(key: object, fields: Mapping[str, Any]) -> str:
    if isinstance(key, str) and SECRET_KEY.search(key):
        return (
            "secrets are not written in the config file; put the secret in an environment "
            "variable and name it with `api_key_env: NAME` (or `api_key: {$env: NAME}`)"
        )
    close = difflib.get_close_matches(str(key), list(fields), n=1)
    hint = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(fields)}"
    return f"unknown key ({hint})"


def _cross_checks(settings: Settings, loaded: LoadedConfig, problems: list[str]) -> None:
    """Rules that involve two settings at once."""
    model = settings.model
    if model.max_tokens >= model.context_length:
        source = loaded.source_of("model.max_tokens")
        problems.append(
            f"{source.detail or source.kind}: model.max_tokens ({model.max_tokens}) must be "
            f"less than model.context_length ({model.context_length}): it is the output "
            "reservation taken from the window"
        )
    _backend_checks(settings, loaded, problems)
    if settings.compression.micro_compact:
        source = loaded.source_of("compression.micro_compact")
        problems.append(
            f"{source.detail or source.kind}: compression.micro_compact: the rolling per-turn "
            "summary is not available in this version; remove the key or set it to false"
        )


def _backend_checks(settings: Settings, loaded: LoadedConfig, problems: list[str]) -> None:
    """A PostgreSQL backend needs a database to talk to."""
    sessions = settings.sessions
    chosen = [
        key
        for key, value in (
            ("sessions.backend", sessions.backend if sessions.enabled else ""),
            ("memory.backend", settings.memory.backend),
        )
        if value == "postgres"
    ]
    if chosen and not (sessions.dsn or sessions.dsn_env):
        source = loaded.source_of(chosen[0])
        problems.append(
            f"{source.detail or source.kind}: {chosen[0]}: postgres needs a database: set "
            "sessions.dsn (postgresql://user@host:5432/db, no password) or sessions.dsn_env "
            "(the environment variable holding the connection string)"
        )


def plugin_names(loaded: LoadedConfig) -> list[tuple[str, str]]:
    """Every plugin name the settings use, as ``(key, name)``: ``memory.provider``,
    ``plugins.enabled``, ``plugins.disabled`` and each ``plugin_config.<name>``."""
    settings = loaded.settings
    used = [("memory.provider", settings.memory.provider)] if settings.memory.provider else []
    used += [("plugins.enabled", name) for name in settings.plugins.enabled]
    used += [("plugins.disabled", name) for name in settings.plugins.disabled]
    used += [(f"plugin_config.{name}", name) for name in settings.plugin_config]
    return used


#: the entry-point group plugins are installed under (``plugins.loading.ENTRY_POINT_GROUP``,
#: a floor up: this one may not import it)
PLUGIN_GROUP = "hermes_context.plugins"


def memory_providers(known: Collection[str]) -> list[str]:
    """Of ``known``, the names ``memory.provider`` can take: an installed plugin (an entry
    point; the built-ins are no providers) that is not a storage backend (``postgres``).
    Judged without importing them: importing a provider imports its SDK."""
    from importlib import metadata

    backends = {*typing.get_args(MemoryBackend), *typing.get_args(SessionBackend)}
    installed = {entry.name for entry in metadata.entry_points(group=PLUGIN_GROUP)}
    return sorted(name for name in set(known) & installed if name not in backends)


def check_plugin_names(loaded: LoadedConfig, known: Collection[str]) -> None:
    """Refuse a plugin name that no plugin answers to (``known``: the built-ins, installed
    entry points and registered plugins), naming the key, where it was set and the close
    match or the known names. Why here, not per plugin: a misspelled name is a setting the
    operator believes in and does not have, like an unknown key."""
    every = sorted(set(known))
    problems = []
    for key, name in plugin_names(loaded):
        if name in known:
            continue
        source = loaded.source_of(key)
        # memory.provider loads an installed plugin as the provider: other names cannot do
        choices = memory_providers(every) if key == "memory.provider" else every
        close = difflib.get_close_matches(name, choices, n=1)
        if close:
            hint = f"did you mean '{close[0]}'?"
        elif key == "memory.provider":
            hint = f"memory providers installed: {', '.join(choices) or 'none'}"
        else:
            hint = f"known: {', '.join(choices)}"
        problems.append(
            f"{source.detail or source.kind}: {key}: no plugin is named '{name}' ({hint}); "
            "fix the name, or install the package that provides it"
        )
    if problems:
        noun = "problem" if len(problems) == 1 else "problems"
        raise ConfigError(
            "\n".join([f"invalid configuration ({len(problems)} {noun}):", *problems])
        )


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
