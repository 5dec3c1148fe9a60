"""A compressor's memory across processes: what a session store keeps between turns.

A host that runs each turn in a new process (a web worker, a CLI call) would otherwise
start every turn with a blank compressor: two ineffective compactions would re-arm after
each restart (the thrash the guard exists to stop), the learned token ratio would be
relearned, and the iterative summary would start over. :func:`export_state` makes a small
JSON-ready dict (``{"v": 1, ...}``); :func:`restore_state` puts it back.

Time: the guard runs on a monotonic clock, which means nothing in another process. Timers
are stored as remaining seconds together with the wall-clock time of the export; on restore
the wall time that passed is taken off (never added: a wall clock that went backwards
counts as no time passed) and each timer is capped at the longest the guard ever sets, so a
corrupt or hostile row cannot block compression for longer than that. The frequency
limits (compression/rate.py) store compaction times as ages, aged the same way, so a
restart neither forgets the last hour nor lets a row block for longer than an hour.

Robustness: state comes from storage and may be old, foreign or damaged. An unknown
version or a non-mapping is ignored whole; a malformed section is skipped on its own; both
log a warning and never raise, so one bad row cannot stop a host.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from hermes_core.compression.guard import (
    NO_PROVIDER_COOLDOWN_S,
    NOTHING_TO_COMPRESS_BACKOFF_S,
    PROBE_AFTER_S,
    TIMEOUT_LADDER_S,
    CompressionGuard,
)
from hermes_core.errors import ConfigError

if TYPE_CHECKING:
    # the engine's base, not the engine: importing the engine here made a circle
    from hermes_core.compression.trigger import CompressionTrigger as Compressor

__all__ = ["STATE_VERSION", "export_state", "restore_state"]

log = logging.getLogger("hermes_context.compression")

STATE_VERSION: Final = 1
#: The guard's timers, as :meth:`CompressionGuard.to_dict` names them (remaining seconds).
_GUARD_TIMERS: Final = ("probe_in_s", "llm_probe_in_s", "cooldown_s", "backoff_s")
#: No restored timer runs longer than the longest one the guard sets itself.
MAX_TIMER_S: Final = float(
    max(*TIMEOUT_LADDER_S, NO_PROVIDER_COOLDOWN_S, PROBE_AFTER_S, NOTHING_TO_COMPRESS_BACKOFF_S)
)


def export_state(compressor: Compressor, *, wall_now: float) -> dict[str, Any]:
    """The compressor's state as plain JSON types; ``wall_now`` is ``time.time()``."""
    running = compressor.running
    active = compressor._active_at
    return {
        "v": STATE_VERSION,
        "saved_at": wall_now,
        "guard": compressor.guard.to_dict(),
        "rate": compressor.rate.to_dict(),
        "summary": {
            "previous": compressor.previous_summary,
            "compactions": compressor.compactions,
        },
        "ratio": {
            "counter": compressor.counter.name,
            "value": running.correction_ratio,
            "samples": running.samples,
        },
        "backoff": {"nothing_at": compressor._nothing_at, "undo": compressor._undo_hold},
        "window": {
            "model": compressor.model,
            "learned": compressor._learned_window,
            "overflow_due": compressor._overflow_due,
        },
        "idle": {"idle_for_s": None if active is None else compressor._clock() - active},
        "schedule": compressor.carry.to_dict(),
    }


def restore_state(compressor: Compressor, state: object, *, wall_now: float) -> None:
    """Put back what :func:`export_state` saved; warn about and skip what is unusable.

    An empty mapping (nothing saved yet) restores nothing, silently. Call it on a fresh
    compressor, before the first ``observe``: the running count is rebuilt when the learned
    ratio is restored."""
    if not isinstance(state, Mapping):
        log.warning("ignoring compressor state: expected a mapping, got %s", type(state).__name__)
        return
    if not state:
        return  # nothing saved yet (a new session): not a problem worth a warning
    if state.get("v") != STATE_VERSION:
        log.warning("ignoring compressor state of unknown version %r", state.get("v"))
        return
    elapsed = _elapsed(state.get("saved_at"), wall_now)
    for name, apply in _SECTIONS:
        section = state.get(name)
        if section is None:
            continue
        try:
            if not isinstance(section, Mapping):
                raise TypeError(f"expected a mapping, got {type(section).__name__}")
            apply(compressor, section, elapsed)
        except (TypeError, ValueError, KeyError, OverflowError, ConfigError) as exc:
            log.warning("ignoring malformed compressor state section %r: %s", name, exc)


def _elapsed(saved_at: object, wall_now: float) -> float:
    if isinstance(saved_at, bool) or not isinstance(saved_at, (int, float)):
        return 0.0
    passed = wall_now - float(saved_at)
    return passed if math.isfinite(passed) and passed > 0 else 0.0


def _number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{what} must be finite, got {value!r}")
    return number


def _count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be a non-negative integer, got {value!r}")
    return value


def _guard(compressor: Compressor, data: Mapping[str, Any], elapsed: float) -> None:
    aged = dict(data)
    for key in _GUARD_TIMERS:
        if aged.get(key) is not None:
            left = _number(aged[key], key) - elapsed
            aged[key] = min(MAX_TIMER_S, max(0.0, left))
    for key in ("strikes", "fallback_streak", "timeout_streak"):
        _count(aged.get(key, 0), key)
    compressor.guard = CompressionGuard.from_dict(aged, clock=compressor._clock)


def _rate(compressor: Compressor, data: Mapping[str, Any], elapsed: float) -> None:
    compressor.rate.restore(data, elapsed=elapsed)


def _summary(compressor: Compressor, data: Mapping[str, Any], _elapsed: float) -> None:
    previous = data.get("previous")
    if previous is not None and not isinstance(previous, str):
        raise TypeError(f"previous must be text, got {type(previous).__name__}")
    compactions = _count(data.get("compactions", 0), "compactions")
    compressor.previous_summary, compressor.compactions = previous, compactions


def _ratio(compressor: Compressor, data: Mapping[str, Any], _elapsed: float) -> None:
    value = _number(data.get("value"), "value")
    samples = _count(data.get("samples", 0), "samples")
    if value <= 0:
        raise ValueError(f"value must be positive, got {value!r}")
    if data.get("counter") != compressor.counter.name:
        log.info(
            "not restoring the token ratio: it was learned for %r, this counter is %r",
            data.get("counter"),
            compressor.counter.name,
        )
        return
    if samples:
        compressor.running = compressor._new_running(value, samples)


def _backoff(compressor: Compressor, data: Mapping[str, Any], _elapsed: float) -> None:
    nothing_at = data.get("nothing_at")
    undo = data.get("undo", False)
    if not isinstance(undo, bool):
        raise TypeError(f"undo must be true or false, got {undo!r}")
    compressor._nothing_at = None if nothing_at is None else _count(nothing_at, "nothing_at")
    compressor._undo_hold = undo and compressor._nothing_at is not None


def _window(compressor: Compressor, data: Mapping[str, Any], _elapsed: float) -> None:
    learned, due = data.get("learned"), data.get("overflow_due", False)
    if not isinstance(due, bool):
        raise TypeError(f"overflow_due must be true or false, got {due!r}")
    if learned is not None and data.get("model") == compressor.model:
        compressor._adopt_window(_count(learned, "learned"))
    compressor._overflow_due = due


def _idle(compressor: Compressor, data: Mapping[str, Any], elapsed: float) -> None:
    idle = data.get("idle_for_s")
    if idle is not None:
        compressor._active_at = compressor._clock() - max(0.0, _number(idle, "idle_for_s"))
        compressor._active_at -= elapsed


def _schedule(compressor: Compressor, data: Mapping[str, Any], _elapsed: float) -> None:
    compressor.carry.restore(data)


_SECTIONS: Final = (
    ("guard", _guard),
    ("rate", _rate),
    ("summary", _summary),
    ("ratio", _ratio),
    ("backoff", _backoff),
    ("schedule", _schedule),
    ("window", _window),
    ("idle", _idle),
)
