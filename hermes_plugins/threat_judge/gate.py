"""Who may ask the judge's endpoint, and when: one request per text, one probe of an
endpoint not known to work, and a rest after an endpoint failure.

Why: a snapshot scans every memory entry, often from several threads at once. Without this
gate six scans of a hung endpoint each wait a full timeout, and five scans of one text send
five requests. So a scan of a text already being judged waits for that verdict; until a
request has succeeded (at start, or after a failure) only one request is in flight and the
others wait for its outcome; and after an endpoint failure (timeout, network, 5xx, 429,
auth) every scan is answered as failed without a request for :data:`REST_S` seconds.
An answer that is no verdict is the text's problem, not the endpoint's: it starts no rest.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from hermes_core.types import Finding

__all__ = ["REST_S", "Failure", "Gate", "Outcome"]

#: seconds the endpoint is left alone after it failed
REST_S = 30.0


@dataclass(frozen=True)
class Failure:
    """No verdict: ``what`` happened; ``endpoint``: the endpoint failed (``on_error``
    applies); ``first``: this failure is news (the one that started a rest, or a text's own),
    so it is logged; scans answered during a rest are not logged again."""

    what: str
    endpoint: bool
    first: bool = True


Outcome = tuple[Finding, ...] | Failure


class _Flight:
    def __init__(self) -> None:
        self.outcome: Outcome | None = None


class Gate:
    """Runs judgements under the rules above; ``clock`` is monotonic seconds."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self._cond = threading.Condition()
        self._flights: dict[str, _Flight] = {}
        self._known_good = False
        self._probing = False
        self._resting_until = 0.0
        self._last_failure = ""

    def run(
        self, key: str, lookup: Callable[[], Outcome | None], judge: Callable[[], Outcome]
    ) -> Outcome:
        """The outcome for ``key``: remembered (``lookup``), another caller's, or ``judge``'s."""
        with self._cond:
            flight = self._flights.get(key)
            if flight is not None:
                while flight.outcome is None:
                    self._cond.wait()
                return flight.outcome
            known = lookup()
            if known is not None:
                return known
            flight = self._flights[key] = _Flight()
            resting = self._admit()
            probe = resting is None and not self._known_good
            if probe:
                self._probing = True
        outcome: Outcome = resting if resting is not None else self._judged(judge)
        with self._cond:
            if probe:
                self._probing = False
            if resting is None:
                self._settle(outcome)
            flight.outcome = outcome
            del self._flights[key]
            self._cond.notify_all()
        return outcome

    def _admit(self) -> Failure | None:
        """Wait while another caller probes; a failure if the endpoint rests (lock held)."""
        while True:
            if self.clock() < self._resting_until:
                what = f"not asked for {REST_S:g} s after it failed ({self._last_failure})"
                return Failure(what, endpoint=True, first=False)
            if self._known_good or not self._probing:
                return None
            self._cond.wait()

    @staticmethod
    def _judged(judge: Callable[[], Outcome]) -> Outcome:
        try:
            return judge()
        except Exception as exc:  # noqa: BLE001 - a bug here must refuse text, not crash a write
            return Failure(f"{type(exc).__name__}: {exc}", endpoint=False)

    def _settle(self, outcome: Outcome) -> None:
        if isinstance(outcome, Failure) and outcome.endpoint:
            self._known_good = False
            self._resting_until = self.clock() + REST_S
            self._last_failure = outcome.what
        else:
            self._known_good = True
