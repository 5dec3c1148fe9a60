"""The ``threat_judge`` plugin: a second opinion from the auxiliary model on ``scan_threat``.

Off by default: it is an entry point, loaded only when ``plugins.enabled`` names it. The
built-in scanner stays offline and linear and still runs; the hook's ``fail_closed`` policy
collects every scanner's findings, so the judge can only add reasons to refuse text.

Why each part:

* The hook cannot tell a write from a re-render (every memory entry is scanned again at each
  snapshot), so verdicts are remembered in an LRU keyed by ``sha256(scope, text)``; failures
  are not remembered, so a judge that was down is asked again, once it has rested
  :data:`REST_S` seconds: a failed request (timeout, refused, HTTP error) answers every scan
  in the meantime as a failure without a request, so a snapshot of fifty entries costs one
  timeout rather than fifty.
* Text is redacted before it leaves (:func:`hermes_core.redact.redact`), and the key is only
  ever named (``api_key_env``), read by :class:`~hermes_core.llm.ChatClient` at each call.
* Text longer than ``max_chars`` is judged in overlapping windows, not cut: a cut would let
  an attacker pad a note with harmless text and hide the payload past the limit.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator

from hermes_core.llm import ChatClient, ChatEndpoint, LLMError
from hermes_core.markers import hookimpl
from hermes_core.plugins import PluginContext
from hermes_core.redact import redact
from hermes_core.types import Finding
from hermes_plugins.threat_judge.rubric import (
    Verdict,
    VerdictError,
    messages,
    one_line,
    parse_verdict,
)
from hermes_plugins.threat_judge.settings import (
    PREFIX,
    JudgeSettings,
    endpoint_for,
    parse_settings,
)

__all__ = ["PLUGIN_NAME", "ThreatJudgePlugin"]

PLUGIN_NAME = "threat_judge"
#: seconds the endpoint is left alone after a failed request: a snapshot scans every memory
#: entry, and a judge that is down must not cost one timeout per entry
REST_S = 30.0
_EXCERPT = 80


class ThreatJudgePlugin:
    """Asks a chat model whether text about to be trusted is an attack (see module doc)."""

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        written = context.settings.plugin_config.get(context.name)
        self.settings: JudgeSettings = parse_settings(
            context.config, written if isinstance(written, dict) else None
        )
        self.endpoint: ChatEndpoint = endpoint_for(self.settings, context.settings)
        self._cache: OrderedDict[str, tuple[Finding, ...]] = OrderedDict()
        self._lock = threading.Lock()
        #: monotonic seconds (replaceable in tests); the endpoint is left alone until
        #: ``_resting_until`` after it failed, with the failure that started the rest
        self.clock: Callable[[], float] = time.monotonic
        self._resting_until = 0.0
        self._last_failure = ""

    def __repr__(self) -> str:
        return f"ThreatJudgePlugin(model={self.endpoint.model!r})"

    @hookimpl
    def scan_threat(self, content: str, scope: str) -> list[Finding]:
        """The judge's findings for ``content``; nothing is sent for a scope not configured."""
        if scope not in self.settings.scopes or not content.strip():
            return []
        key = hashlib.sha256(f"{scope}\0{content}".encode("utf-8", "surrogatepass")).hexdigest()
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return list(self._cache[key])
        resting = self._resting()
        if resting:
            return self._failed(resting, content)
        try:
            findings = self._judge(redact(content), scope)
        except VerdictError as exc:
            return self._failed(f"{type(exc).__name__}: {exc}", content)
        except LLMError as exc:
            what = f"{exc.kind}: {exc}"
            with self._lock:
                self._resting_until = self.clock() + REST_S
                self._last_failure = what
            return self._failed(what, content)
        self._remember(key, findings)
        return list(findings)

    def _judge(self, text: str, scope: str) -> tuple[Finding, ...]:
        key = self.settings.api_key
        environ = {self.settings.api_key_name: key} if key else None
        with ChatClient(self.endpoint, environ=environ) as client:
            for window in self._windows(text):
                reply = client.complete(messages(window, scope), temperature=0)
                verdict = parse_verdict(reply.text)
                if verdict.block:
                    return (self._finding(verdict, window),)
        return ()

    def _windows(self, text: str) -> Iterator[str]:
        """Pieces of at most ``max_chars`` overlapping by an eighth, so that a sentence cut by
        one boundary is whole in the next piece."""
        size = self.settings.max_chars
        step = size - size // 8
        start = 0
        while True:
            yield text[start : start + size]
            if start + size >= len(text):
                return
            start += step

    def _finding(self, verdict: Verdict, window: str) -> Finding:
        return Finding(
            f"judge_{verdict.category}",
            verdict.category,
            f"the threat judge ({self.endpoint.model or 'auxiliary model'}) judged this "
            f"{verdict.category.replace('_', ' ')}: {verdict.reason}",
            PLUGIN_NAME,
            _excerpt(window),
        )

    def _resting(self) -> str:
        """Why the endpoint is not asked now, or "" (it failed less than REST_S ago)."""
        with self._lock:
            if self.clock() >= self._resting_until:
                return ""
            return f"not asked for {REST_S:g} s after it failed ({self._last_failure})"

    def _failed(self, what: str, content: str) -> list[Finding]:
        if self.settings.on_error == "allow":
            self.context.logger.warning(
                "threat judge could not judge a write (%s); let through because "
                "%s.on_error is allow",
                what,
                PREFIX,
            )
            return []
        return [
            Finding(
                "judge_error",
                "judge",
                f"the threat judge could not judge this text ({what}); refused because "
                f"{PREFIX}.on_error is block (fix the judge's endpoint, or set on_error: "
                "allow to let text through while it is down)",
                PLUGIN_NAME,
                _excerpt(redact(content)),
            )
        ]

    def _remember(self, key: str, findings: tuple[Finding, ...]) -> None:
        if self.settings.cache_size == 0:
            return
        with self._lock:
            self._cache[key] = findings
            self._cache.move_to_end(key)
            while len(self._cache) > self.settings.cache_size:
                self._cache.popitem(last=False)


def _excerpt(text: str) -> str:
    return one_line(text, _EXCERPT)
