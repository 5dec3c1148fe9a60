"""Calling hooks one implementation at a time, with each hook's policy and error isolation.

Why not ``pm.hook.<name>(...)``: pluggy runs every implementation in one call, so one
plugin's exception aborts the others. Walking the implementations here lets a broken plugin
be reported and skipped, a broken threat scanner fail closed, and ``plugins.strict`` turn
isolation off for CI.
"""

from __future__ import annotations

import difflib
import logging
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pluggy

from hermes_core import hookspecs
from hermes_core.types import Finding

log = logging.getLogger("hermes_context.plugins")
CallListener = Callable[[str, dict[str, Any], Any], None]


@dataclass(frozen=True)
class PluginCallError:
    """A hook implementation raised; kept so hosts and tests can see what was isolated."""

    plugin: str
    hook: str
    error: BaseException


class HookCaller:
    """Applies the call policies of :mod:`hermes_core.hookspecs` to one plugin manager."""

    def __init__(self, pm: pluggy.PluginManager, *, strict: bool) -> None:
        self.pm = pm
        self.strict = strict
        self.call_errors: list[PluginCallError] = []
        self._listeners: list[CallListener] = []
        self._logged_once: set[tuple[str, str]] = set()

    def add_listener(self, listener: CallListener) -> Callable[[], None]:
        """Observe every hook call as ``(hook, kwargs, result)``; returns an undo function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def call(self, hook: str, **kwargs: Any) -> Any:
        """Call ``hook`` with its policy. Wrong hook names or arguments are caller bugs and
        raise ``TypeError`` at once instead of being blamed on a plugin."""
        policy = _check_call(hook, kwargs)
        caller = self.pm.hook.__dict__[hook]
        impls = caller.get_hookimpls()
        if policy == "first_result":
            result = self._first_result(hook, list(reversed(impls)), kwargs)
        elif policy == "broadcast":
            ordered = _stable_order(impls)
            self._each(hook, ordered[::-1] if hook == "memory_shutdown" else ordered, kwargs)
            result = None
        elif policy == "fail_closed":
            result = self._findings(hook, _stable_order(impls), kwargs)
        else:
            pairs = self._each(hook, _stable_order(impls), kwargs)
            result = [value for _name, value in pairs if value is not None]
        for listener in list(self._listeners):
            listener(hook, dict(kwargs), result)
        return result

    def implementations(self, hook: str) -> list[str]:
        """Names of the plugins implementing ``hook``, in the order ``call`` walks them."""
        if hook not in hookspecs.HOOK_POLICIES:
            raise TypeError(f"unknown hook '{hook}'")
        impls = _stable_order(self.pm.hook.__dict__[hook].get_hookimpls())
        return [impl.plugin_name for impl in impls]

    def call_one(self, hook: str, plugin: str, **kwargs: Any) -> tuple[bool, Any]:
        """Call one plugin's implementation, isolated like :meth:`call`: ``(ok, value)``, with
        a failure recorded in ``call_errors``. For callers that give each plugin its own
        thread or timeout (the memory manager)."""
        _check_call(hook, kwargs)
        for impl in self.pm.hook.__dict__[hook].get_hookimpls():
            if impl.plugin_name == plugin:
                return self._invoke(hook, impl, kwargs)
        return True, None

    def _invoke(self, hook: str, impl: Any, kwargs: dict[str, Any]) -> tuple[bool, Any]:
        try:
            return True, impl.function(**{arg: kwargs[arg] for arg in impl.argnames})
        except Exception as exc:
            if self.strict:
                raise
            self.call_errors.append(PluginCallError(impl.plugin_name, hook, exc))
            key = (impl.plugin_name, hook)
            level = logging.DEBUG if key in self._logged_once else logging.WARNING
            self._logged_once.add(key)
            log.log(level, "plugin '%s' failed in %s: %s", impl.plugin_name, hook, _safe(exc))
            if log.isEnabledFor(logging.DEBUG):
                # Not exc_info: a handler would print the raw message (and any quoted request)
                # right under the WARNING line that redacted it.
                log.debug("traceback of the plugin failure:\n%s", _safe_traceback(exc))
            return False, exc

    def _first_result(self, hook: str, impls: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        for impl in impls:
            ok, value = self._invoke(hook, impl, kwargs)
            if not ok and hook in hookspecs.STOP_ON_ERROR:
                return None
            if ok and value is not None:
                return value
        return None

    def _each(
        self, hook: str, impls: Iterable[Any], kwargs: dict[str, Any]
    ) -> list[tuple[str, Any]]:
        results = []
        for impl in impls:
            ok, value = self._invoke(hook, impl, kwargs)
            results.append((impl.plugin_name, value if ok else None))
        return results

    def _findings(self, hook: str, impls: Iterable[Any], kwargs: dict[str, Any]) -> list[Finding]:
        findings: list[Finding] = []
        for impl in impls:
            ok, value = self._invoke(hook, impl, kwargs)
            name = impl.plugin_name
            if not ok:
                findings.append(_scanner_error(name, f"failed: {_safe(value)}"))
            elif value is None:
                continue
            elif isinstance(value, (list, tuple)) and all(isinstance(f, Finding) for f in value):
                findings.extend(value)
            else:
                kind = type(value).__name__
                findings.append(_scanner_error(name, f"returned {kind}, not a list of Finding"))
        return findings


def _safe(exc: BaseException) -> str:
    """An exception's text with secrets redacted: provider errors can quote a request."""
    from hermes_core.redact import redact

    return redact(str(exc))


def _safe_traceback(exc: BaseException) -> str:
    """The exception's traceback (with its causes) as text, secrets redacted."""
    from hermes_core.redact import redact

    return redact("".join(traceback.format_exception(exc)).rstrip("\n"))


def _scanner_error(plugin: str, what: str) -> Finding:
    return Finding(
        "scanner-error", "scanner_error", f"scanner '{plugin}' {what}; failing closed", plugin
    )


def _check_call(hook: str, kwargs: dict[str, Any]) -> hookspecs.CallPolicy:
    if hook not in hookspecs.HOOK_POLICIES:
        close = difflib.get_close_matches(hook, list(hookspecs.HOOK_POLICIES), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise TypeError(f"unknown hook '{hook}'{hint}")
    code = getattr(hookspecs, hook).__code__
    expected = set(code.co_varnames[: code.co_argcount])
    missing, unknown = expected - set(kwargs), set(kwargs) - expected
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(sorted(missing))}")
        if unknown:
            parts.append(f"unknown {', '.join(sorted(unknown))}")
        raise TypeError(f"hook '{hook}' called with wrong arguments: {'; '.join(parts)}")
    return hookspecs.HOOK_POLICIES[hook][0]


def _stable_order(impls: Sequence[Any]) -> list[Any]:
    """Registration order (built-ins first), with ``tryfirst`` ahead and ``trylast`` behind.

    pluggy keeps implementations as ``[trylast..., normal..., tryfirst...]``, each part in
    registration order, and calls them from the end; collecting hooks keep registration order
    inside each part instead, so built-ins come first, and honour the markers between parts.
    """
    first = [i for i in impls if i.tryfirst]
    last = [i for i in impls if i.trylast]
    middle = [i for i in impls if not i.tryfirst and not i.trylast]
    return first + middle + last
