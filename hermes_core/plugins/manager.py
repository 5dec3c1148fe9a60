"""The plugin host: loading built-ins and named entry points, the one-external-provider rule.

Each plugin loads in its own try so that one broken plugin is reported (``hermes-context
plugins`` shows its status) while the rest keeps working; hook calls go through
:class:`~hermes_core.plugins.calls.HookCaller`, which isolates failures the same way.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pluggy

from hermes_core import hookspecs
from hermes_core.config.loader import LoadedConfig, check_plugin_names, plugin_names
from hermes_core.config.settings import Settings
from hermes_core.errors import (
    ConfigError,
    HermesError,
    MemoryStoreError,
    MissingExtraError,
    PluginLoadError,
)
from hermes_core.markers import PROJECT_NAME
from hermes_core.plugins.calls import CallListener, HookCaller, PluginCallError
from hermes_core.plugins.context import PluginContext
from hermes_core.plugins.loading import (
    ENTRY_POINT_GROUP,
    PluginSpec,
    find_entry_point,
    first_party_extras,
    installed_entry_points,
    not_installed,
    spec_from_entry_point,
)
from hermes_core.plugins.records import PluginRecord, record_of
from hermes_core.plugins.shape import reject_wrappers, unknown_hooks, unmarked_hooks
from hermes_core.redact import redact
from hermes_core.types import Finding

__all__ = [
    "ENTRY_POINT_GROUP",
    "PluginContext",
    "PluginHost",
    "PluginRecord",
    "PluginSpec",
]

log = logging.getLogger("hermes_context.plugins")


class PluginHost:
    """Owns the pluggy manager for one home and calls hooks with their policies."""

    def __init__(self, config: LoadedConfig) -> None:
        self.config = config
        self.strict = config.settings.plugins.strict
        self.pm = pluggy.PluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.records: dict[str, PluginRecord] = {}
        self.caller = HookCaller(self.pm, strict=self.strict)
        #: configuration mistakes that do not stop the host (shown by ``config check``)
        self.warnings: list[str] = []

    # --- loading -----------------------------------------------------------------------

    def load(self, builtins: Sequence[PluginSpec] = ()) -> None:
        """Register built-ins, then the third-party plugins the config names, each isolated."""
        settings = self.config.settings
        if self._names_beyond(builtins):  # else no name can be unknown: skip the scan
            check_plugin_names(self.config, self._known_names(builtins))
        disabled = set(settings.plugins.disabled)
        for spec in builtins:
            if spec.name in disabled:
                self.records[spec.name] = record_of(spec, status="disabled")
                continue
            self._load_isolated(spec.name, functools.partial(_same, spec))
        for name in self._named_plugins():
            if name in disabled and self._role(name) == "storage backend":
                raise ConfigError(
                    f"{_backend_keys(settings, name)}, but plugins.disabled names '{name}', "
                    "the plugin that serves it: remove it from plugins.disabled, or choose "
                    "another backend"
                )
            if name in disabled:
                self.records[name] = PluginRecord(name=name, status="disabled")
                continue
            self._load_isolated(name, functools.partial(self._spec_for, name))
        self._check_provider_role()

    def _check_provider_role(self) -> None:
        """Refuse a ``memory.provider`` that loaded but is no memory provider (the threat
        judge, a backend): it would run as a plain plugin while the operator believes memory
        goes to it."""
        provider = self.config.settings.memory.provider
        record = self.records.get(provider) if provider else None
        if record is None or record.status != "active" or record.external_provider:
            return
        raise ConfigError(
            f"memory.provider is '{provider}', a plugin that is no memory provider: name it in "
            "plugins.enabled instead, and set memory.provider to a provider (or leave it unset)"
        )

    def _names_beyond(self, builtins: Sequence[PluginSpec]) -> set[str]:
        """The plugin names the settings use that are neither built-in nor registered."""
        used = {name for _, name in plugin_names(self.config)}
        return used - {spec.name for spec in builtins} - set(self.records)

    def _known_names(self, builtins: Sequence[PluginSpec]) -> set[str]:
        """Every name a setting may use: the built-ins, the installed entry points, the
        plugins registered already, and the first-party providers of hermes-context's own
        extras (one whose extra is not installed is known: it fails later with the install
        line it needs)."""
        names = {spec.name for spec in builtins} | {ep.name for ep in installed_entry_points()}
        return names | set(self.records) | first_party_extras()

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        log.warning("%s", message)

    def _named_plugins(self) -> list[str]:
        settings = self.config.settings
        names = list(dict.fromkeys(settings.plugins.enabled))
        provider = settings.memory.provider
        if provider and provider not in names:
            names.append(provider)
        if _STORAGE_BACKEND not in names and _STORAGE_BACKEND in self._backends():
            names.append(_STORAGE_BACKEND)
        return names

    def _backends(self) -> set[str]:
        """The storage backends the config picks (``sessions.backend``, ``memory.backend``)."""
        settings = self.config.settings
        sessions = {settings.sessions.backend} if settings.sessions.enabled else set()
        return {*sessions, settings.memory.backend}

    def _spec_for(self, name: str) -> PluginSpec:
        entry_point = find_entry_point(name)
        if entry_point is None:
            raise not_installed(name, self._role(name))
        return spec_from_entry_point(entry_point, role=self._role(name))

    def _role(self, name: str) -> str:
        if name == self.config.settings.memory.provider:
            return "memory provider"
        if name == "threat_judge":  # enabled: it must load, or text it refuses is trusted
            return "threat scanner"
        return "storage backend" if name in self._backends() else "plugin"

    def _load_isolated(self, name: str, get_spec: Callable[[], PluginSpec]) -> None:
        try:
            spec = get_spec()
            self.register(spec.build(self._context(spec.name)), spec=spec)
        except ConfigError:
            raise
        except PluginLoadError as exc:
            self._backend_must_load(name, exc)
            status = (
                f"missing-extra: {exc.install_hint}"
                if isinstance(exc, MissingExtraError)
                else f"error: {exc}"
            )
            self._load_failed(name, exc, status)
        except Exception as exc:  # noqa: BLE001 - a plugin's own bug must not stop the host
            failure = PluginLoadError(f"plugin '{name}' failed to start: {exc}")
            self._backend_must_load(name, failure)
            self._load_failed(name, failure, f"error: {failure}", cause=exc)

    def _backend_must_load(self, name: str, exc: PluginLoadError) -> None:
        """A storage backend that cannot load stops the host (another store would split one
        user's state in two); a threat scanner too (text it refuses would be trusted)."""
        keys = _backend_keys(self.config.settings, name)
        where = keys or f"plugins.enabled names {name}, a threat scanner (fix it or remove it)"
        if self._role(name) in ("storage backend", "threat scanner"):
            raise ConfigError(f"{where}: {exc}") from exc

    def _load_failed(
        self, name: str, exc: PluginLoadError, status: str, cause: BaseException | None = None
    ) -> None:
        if self.strict:
            raise exc from cause
        log.warning("%s", exc)
        record = self.records.get(name) or PluginRecord(name=name)
        entry_point = find_entry_point(name)
        dist = getattr(entry_point, "dist", None)
        record.version = record.version or getattr(dist, "version", "") or ""
        record.distribution = record.distribution or getattr(dist, "name", "") or ""
        record.status = " ".join(status.split())
        self.records[name] = record

    def _context(self, name: str) -> PluginContext:
        return PluginContext(
            name=name,
            config=self.config.plugin_section(name),
            home=self.config.home,
            logger=logging.getLogger(f"hermes_context.plugins.{name}"),
            settings=self.config.settings,
            scan_threat=self.scan_threat,
            memory_documents=self.memory_documents,
        )

    def memory_documents(self, home: Path) -> Any:
        """What answers ``memory_documents`` for ``home``; when nothing does, the answering
        plugin's own error (a database that cannot be reached) or one that says who should
        answer: memory is never silently kept somewhere else."""
        seen = len(self.call_errors)
        answer = self.call("memory_documents", home=home)
        if answer is not None:
            return answer
        failed = [e.error for e in self.call_errors[seen:] if e.hook == "memory_documents"]
        if failed and isinstance(failed[-1], HermesError):
            raise failed[-1]
        backend = self.config.settings.memory.backend
        raise MemoryStoreError(
            f"memory storage could not open: {redact(str(failed[-1]))}"
            if failed
            else f"no plugin answered memory_documents for memory.backend: {backend} (the "
            "built-in file_memory plugin answers for files, the postgres plugin for postgres; "
            "is it disabled?)"
        )

    def scan_threat(self, content: str, scope: str) -> list[Finding]:
        """All findings of every ``scan_threat`` implementation (one that raises is one)."""
        return list(self.call("scan_threat", content=content, scope=scope) or [])

    def register(self, plugin: object, *, spec: PluginSpec | None = None, name: str = "") -> str:
        """Register a built plugin object; returns its name.

        Raises :class:`ConfigError` when it would be a second external memory provider and
        :class:`PluginLoadError` when a hook implementation is misspelled or malformed.
        """
        name = spec.name if spec else name or type(plugin).__name__.lower()
        if name in self.records and self.records[name].status == "active":
            raise PluginLoadError(f"a plugin named '{name}' is already registered")
        external = bool(getattr(plugin, "external_memory_provider", False))
        if external:
            current = self.external_provider()
            if current is not None:
                _shut_down(plugin)  # built already (it may have started threads): stop it
                raise ConfigError(
                    f"two external memory providers: '{current}' and '{name}'; at most one can "
                    "be active. Choose one with memory.provider and remove the other from "
                    "plugins.enabled"
                )
        reject_wrappers(plugin, name)
        try:
            self.pm.register(plugin, name=name)
        except pluggy.PluginValidationError as exc:
            raise PluginLoadError(
                f"plugin '{name}' has an invalid hook implementation: {exc}"
            ) from None
        unknown = unknown_hooks(self.pm, plugin) + unmarked_hooks(self.pm, plugin)
        if unknown:
            self.pm.unregister(plugin)
            raise PluginLoadError(f"plugin '{name}': {'; '.join(unknown)}")
        record = record_of(spec, status="active") if spec else PluginRecord(name=name)
        record.external_provider = external
        record.hooks = sorted(caller.name for caller in self.pm.get_hookcallers(plugin) or [])
        self.records[name] = record
        if not record.hooks:
            self._warn(f"plugin '{name}' implements no hooks; mark its methods with @hookimpl")
        return name

    def unregister(self, name: str) -> None:
        """Remove a plugin by name (used by tests and hosts that swap plugins)."""
        plugin = self.pm.get_plugin(name)
        if plugin is not None:
            self.pm.unregister(plugin)
        self.records.pop(name, None)

    def get_plugin(self, name: str) -> object | None:
        return self.pm.get_plugin(name)

    def external_provider(self) -> str | None:
        """The name of the active external memory provider, if any."""
        for record in self.records.values():
            if record.external_provider and record.status == "active":
                return record.name
        return None

    def available(self) -> list[PluginRecord]:
        """Installed third-party plugins that are not loaded (for ``plugins --all``)."""
        rows = []
        for entry_point in installed_entry_points():
            if entry_point.name in self.records:
                continue
            dist = getattr(entry_point, "dist", None)
            rows.append(
                PluginRecord(
                    name=entry_point.name,
                    version=getattr(dist, "version", "") or "",
                    distribution=getattr(dist, "name", "") or "",
                    status="available (not enabled)",
                )
            )
        return rows

    # --- calling -----------------------------------------------------------------------

    def call(self, hook: str, **kwargs: Any) -> Any:
        """Call a hook with its policy; see :mod:`hermes_core.hookspecs`."""
        return self.caller.call(hook, **kwargs)

    def implementations(self, hook: str) -> list[str]:
        """Names of the plugins implementing ``hook``, in calling order."""
        return self.caller.implementations(hook)

    def call_one(self, hook: str, plugin: str, **kwargs: Any) -> tuple[bool, Any]:
        """One plugin's implementation of ``hook``, isolated: ``(ok, value)``."""
        return self.caller.call_one(hook, plugin, **kwargs)

    def add_listener(self, listener: CallListener) -> Callable[[], None]:
        """Observe every hook call as ``(hook, kwargs, result)``; returns an undo function."""
        return self.caller.add_listener(listener)

    @property
    def call_errors(self) -> list[PluginCallError]:
        """Every isolated implementation failure so far, oldest first."""
        return self.caller.call_errors


#: the entry point that serves ``sessions.backend: postgres`` and ``memory.backend: postgres``
_STORAGE_BACKEND = "postgres"


def _backend_keys(settings: Settings, name: str) -> str:
    """Which settings asked for the storage backend ``name`` (for its error)."""
    sessions = settings.sessions.backend if settings.sessions.enabled else ""
    keys = [
        key
        for key, value in (
            ("sessions.backend", sessions),
            ("memory.backend", settings.memory.backend),
        )
        if value == name
    ]
    return " and ".join(f"{key}: {name}" for key in keys)


def _same(spec: PluginSpec) -> PluginSpec:
    return spec


def _shut_down(plugin: object) -> None:
    """Best-effort ``memory_shutdown`` of a plugin that is being refused."""
    shutdown = getattr(plugin, "memory_shutdown", None)
    if callable(shutdown):
        try:
            shutdown()
        except Exception:  # the refusal is what the user must see
            log.debug("shutdown of a refused plugin failed", exc_info=True)
