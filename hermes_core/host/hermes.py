"""``Hermes``: one home's configuration, plugins and session store, from which sessions are made.

A process may hold several ``Hermes`` objects (several homes, several tenants); nothing here
is global.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from hermes_core.config.loader import LoadedConfig, load_config
from hermes_core.config.settings import Settings
from hermes_core.errors import InvalidArgument, MissingExtraError, PluginLoadError, SessionError
from hermes_core.memory.calls import StuckCalls
from hermes_core.plugins.loading import PluginSpec
from hermes_core.plugins.manager import PluginHost
from hermes_core.redact import redact
from hermes_core.sessions.store import SessionStore

if TYPE_CHECKING:
    from hermes_core.host.events import EventListener
    from hermes_core.host.session import Session
    from hermes_core.lifecycle.forget import ForgetReport
    from hermes_core.memory.documents import MemoryDocuments


log = logging.getLogger("hermes_context.host")


def default_builtins() -> list[PluginSpec]:
    """The first-party default plugins, registered directly (not through entry points)."""
    from hermes_plugins import builtin_plugins

    return builtin_plugins()


class Hermes:
    """Configuration plus plugin host for one home directory."""

    def __init__(self, config: LoadedConfig, *, builtins: Sequence[PluginSpec] | None = None):
        if not isinstance(config, LoadedConfig):
            raise InvalidArgument.of(
                "config", "a LoadedConfig (use Hermes.from_config(path or dict))", config
            )
        self.config = config
        self.plugins = PluginHost(config)
        self._closed = False
        self._store: SessionStore | None = None
        self._store_lock = threading.Lock()
        self._sessions: dict[int, Session] = {}
        #: provider calls past their time limit, shared by every session's memory manager
        self.stuck_calls = StuckCalls()
        try:
            self.plugins.load(default_builtins() if builtins is None else builtins)
            _provider_must_load(self.plugins)
            warn_threshold_floor(config)
        except BaseException:
            self.close()  # plugins built before the failure still get their shutdown
            raise

    @classmethod
    def from_config(
        cls,
        path_or_dict: str | os.PathLike[str] | Mapping[str, Any] | None = None,
        *,
        home: str | os.PathLike[str] | None = None,
        builtins: Sequence[PluginSpec] | None = None,
    ) -> Hermes:
        """Load and validate the config, then load plugins; raises ``ConfigError`` early."""
        return cls(load_config(path_or_dict, home=home), builtins=builtins)

    @property
    def settings(self) -> Settings:
        return self.config.settings

    @property
    def home(self) -> Path:
        return self.config.home

    def session(
        self,
        session_id: str,
        *,
        user_id: str | None = None,
        skip_memory: bool = False,
        workspace: str | os.PathLike[str] | None = None,
        on_event: EventListener | None = None,
        toolsets: Collection[str] | None = None,
        message_format: str = "openai",
    ) -> Session:
        """Open (or resume) one conversation of one user.

        ``skip_memory`` is a bridge host's mode: no external provider, no recall, no review,
        and no memory tools unless ``toolsets`` names them (``"memory"``: the file memory's
        blocks and tool; ``"session_search"``). ``workspace`` is the folder @-references
        resolve in. ``on_event`` receives :class:`~hermes_core.host.events.SessionEvent` s.
        ``message_format`` (``openai``, ``anthropic``, ``responses``): what ``prepare`` and
        ``end_turn`` take and ``prepare`` returns (docs/formats.md).
        """
        from hermes_core.host.session import Session

        _check_session_options(skip_memory, workspace, on_event, toolsets, message_format)
        if self._closed:
            raise SessionError("this Hermes is closed; create a new one")
        if any(s.requested_id == session_id for s in self._sessions.values()):
            raise SessionError(
                f"session {session_id!r} is already open in this process: use that Session "
                "object, or close it first (two objects for one conversation would each "
                "store the other's messages again)"
            )
        session = Session(
            self,
            session_id,
            user_id=user_id,
            skip_memory=skip_memory,
            workspace=workspace,
            on_event=on_event,
            toolsets=toolsets,
            message_format=message_format,
        )
        self._sessions[id(session)] = session
        return session

    def forget_session(self, session: Session) -> None:
        """A session closed itself (called by :meth:`Session.close`)."""
        self._sessions.pop(id(session), None)

    @property
    def session_store(self) -> SessionStore | None:
        """The session store (opened on first use through the ``session_store`` hook), or
        ``None`` when ``sessions.enabled`` is false."""
        if not self.settings.sessions.enabled:
            return None
        with self._store_lock:
            if self._store is None:
                if self._closed:
                    raise SessionError("this Hermes is closed; create a new one")
                seen = len(self.plugins.call_errors)
                store = self.plugins.call("session_store")
                if store is None:
                    failed = [
                        e.error
                        for e in self.plugins.call_errors[seen:]
                        if e.hook == "session_store"
                    ]
                    if failed and isinstance(failed[-1], SessionError):
                        raise failed[-1]  # the store's own reason: a damaged file, a newer schema
                    if failed:
                        raise SessionError(
                            f"the session store could not open: {redact(str(failed[-1]))}"
                        )
                    raise SessionError(
                        "no plugin answered session_store (is the built-in session_store "
                        "plugin disabled?); enable one, or set sessions.enabled: false"
                    )
                if not isinstance(store, SessionStore):
                    raise SessionError(
                        f"session_store answered a {type(store).__name__}, which is not a "
                        "hermes_core.sessions.SessionStore"
                    )
                self._store = store
            return self._store

    def memory_documents(self, home: str | os.PathLike[str] | None = None) -> MemoryDocuments:
        """Where the memory of ``home`` (default: this host's) is kept: the answer of the
        ``memory_documents`` hook (files under the home, or rows in PostgreSQL). Raises
        :class:`~hermes_core.errors.MemoryStoreError` (or the backend's own error) when no
        plugin answers; memory is never silently kept somewhere else."""
        from hermes_core.memory.documents import checked_documents

        if self._closed:
            raise SessionError("this Hermes is closed; create a new one")
        where = self.home if home is None else Path(home)
        return checked_documents(self.plugins.memory_documents(where))

    def forget_user(self, user_id: str | None, *, vacuum_full: bool = False) -> ForgetReport:
        """Delete one person everywhere this home keeps them (docs/forget.md): sessions,
        memory files and copies, staged writes, audit lines, and what plugins keep (the
        ``memory_forget`` hook). ``None`` names the anonymous principal, never a named user.
        Every SQLite session store the home holds is searched, not only the one in use.
        Returns the :class:`~hermes_core.lifecycle.forget.ForgetReport`; raises only on bad
        input or a store that cannot be reached (the report lists what else was left)."""
        from hermes_core.lifecycle.forget import check_user_id, forget_user
        from hermes_plugins.session_store import db_path

        user = check_user_id(user_id)
        if self._closed:
            raise SessionError("this Hermes is closed; create a new one")
        return forget_user(
            user,
            home=self.home,
            plugins=self.plugins,
            store=self.session_store,
            documents=self.memory_documents(),
            vacuum_full=vacuum_full,
            # the configured file, looked at whatever the store in use (docs/forget.md)
            state_db=db_path(self.home, self.settings.sessions.db_path),
        )

    def close(self) -> None:
        """Shut plugins down in reverse order, then close the store; safe to call twice."""
        if self._closed:
            return
        for session in list(self._sessions.values()):
            try:
                session.close()
            except Exception:  # one session's failure must not keep the others open
                log.exception("closing session %s failed", session.session_id)
        self._closed = True
        try:
            self.plugins.call("memory_shutdown")
        finally:
            with self._store_lock:
                store, self._store = self._store, None
            if store is not None:
                store.close()

    def __enter__(self) -> Hermes:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


#: (config file or "argument", configured threshold, effective) already warned about
_FLOOR_WARNED: set[tuple[str, str, float]] = set()


def effective_threshold(config: LoadedConfig) -> tuple[float, str, float, str | None]:
    """The trigger fraction used, the setting it comes from (``compression.threshold`` or the
    matching ``compression.model_thresholds`` entry), the value configured there, and why the
    two differ (the floor for contexts under 512K, the 85% cap), or ``None`` when they do not."""
    from hermes_core.compression.policy import for_settings

    try:
        threshold = for_settings(config.settings)
    except ValueError:
        configured = config.settings.compression.threshold
        return configured, "compression.threshold", configured, None
    steps = threshold.provenance
    chosen = next((step for step in steps if step.startswith("threshold ")), "threshold 0")
    by_model = "from model_thresholds[" in chosen
    setting = "compression.model_thresholds" if by_model else "compression.threshold"
    configured = float(chosen.split()[1])  # "threshold 0.60 from ..."
    changed = [step for step in steps if step.startswith(("raised to", "capped at 85%"))]
    return threshold.percent, setting, configured, "; ".join(changed) if changed else None


def warn_threshold_floor(config: LoadedConfig) -> None:
    """An explicit threshold (``compression.threshold`` or a ``model_thresholds`` entry) that
    is not the one used says so once per process and config: the operator set a value that
    has no effect."""
    percent, setting, configured, reason = effective_threshold(config)
    source = config.source_of(setting)
    if reason is None or source.kind == "default":
        return
    key = (str(config.path or source), setting, percent)
    if key in _FLOOR_WARNED:
        return
    _FLOOR_WARNED.add(key)
    log.warning(
        "%s %.2f (%s) is not the threshold used: the effective threshold is %.2f (%s); for a "
        "lower trigger raise model.context_length to 512,000 or more, or set "
        "compression.threshold_tokens",
        setting,
        configured,
        source,
        percent,
        reason,
    )


def load_failures(plugins: PluginHost) -> list[tuple[str, str]]:
    """The plugins that were named but did not load, as ``(name, status)``: what ``config
    check`` refuses and what ``from_config`` raises for the memory provider (one check)."""
    return [
        (r.name, r.status)
        for r in plugins.records.values()
        if r.status.startswith(("error", "missing"))
    ]


def plugin_problem(name: str, status: str) -> str:
    """A failed plugin's status (``error: ...``, ``missing-extra: HINT``) as a sentence: the
    status word is a label for the ``plugins`` table, not part of an error message."""
    label, _, detail = status.partition(": ")
    if label == "missing-extra" and detail:
        return f"plugin '{name}' needs its extra: {detail}"
    text = status
    while text.lower().startswith("error:"):  # "error: error: x" loses every copy
        text = text[len("error:") :].lstrip()
    return text if f"'{name}'" in text else f"plugin '{name}': {text}"


@contextlib.contextmanager
def diagnosed_plugins(config: LoadedConfig) -> Iterator[PluginHost]:
    """The plugins a host of ``config`` would load, with a failed ``memory.provider`` kept
    as a record instead of raised: for the commands that report every plugin's state
    (``plugins``, ``config check``). Shut down on exit."""
    plugins = PluginHost(config)
    try:
        plugins.load(default_builtins())
        yield plugins
    finally:
        plugins.call("memory_shutdown")


def _provider_must_load(plugins: PluginHost) -> None:
    """A ``memory.provider`` that cannot load stops the host (docs/hosts.md): running
    without it would send the user's memory nowhere while the config says it goes there."""
    provider = plugins.config.settings.memory.provider
    for name, status in load_failures(plugins):
        if name != provider:
            continue
        label, _, detail = status.partition(": ")
        message = f"memory.provider is '{name}': " + plugin_problem(name, status)
        if label == "missing-extra" and detail:
            raise MissingExtraError(message, install_hint=detail)
        raise PluginLoadError(message)


def _check_session_options(
    skip_memory: object,
    workspace: object,
    on_event: object,
    toolsets: object,
    message_format: object,
) -> None:
    """``session()``'s options of the wrong type are refused at the call, saying what was
    expected, instead of failing later somewhere inside (``workspace=5``, ``toolsets="memory"``
    that would read as six one-letter names)."""
    if not isinstance(skip_memory, bool):
        raise InvalidArgument.of("skip_memory", "True or False", skip_memory)
    if workspace is not None and not isinstance(workspace, (str, os.PathLike)):
        raise InvalidArgument.of("workspace", "a folder path (str or Path) or None", workspace)
    if on_event is not None and not callable(on_event):
        raise InvalidArgument.of("on_event", "a function taking a SessionEvent, or None", on_event)
    if toolsets is not None and (
        isinstance(toolsets, (str, bytes))
        or not isinstance(toolsets, Collection)
        or not all(isinstance(name, str) for name in toolsets)
    ):
        expected = 'a collection of toolset names such as {"memory", "session_search"}, or None'
        raise InvalidArgument.of("toolsets", expected, toolsets)
    if not isinstance(message_format, str):
        expected = "one of 'openai', 'anthropic', 'responses'"
        raise InvalidArgument.of("message_format", expected, message_format)
