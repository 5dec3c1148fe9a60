"""The ``threat_judge`` plugin: a second opinion from the auxiliary model on ``scan_threat``.

Off by default: it is an entry point, loaded only when ``plugins.enabled`` names it (and
then it must load: a judge that cannot start stops the host). The built-in scanner stays
offline and linear and still runs; the hook's ``fail_closed`` policy collects every
scanner's findings, so the judge can only add reasons to refuse text.

Why each part:

* The hook cannot tell a write from a re-render (every memory entry is scanned again at each
  snapshot), so verdicts are remembered, in the home as well (:mod:`.verdicts`): a new
  process does not judge every entry again. Failures are not remembered.
* ``on_error`` covers the endpoint only (timeout, network, 5xx, 429, auth): an answer that is
  no verdict, an empty answer, a content-filter refusal or a 400 always refuses the text,
  since text can talk a model out of its verdict. :mod:`.gate` shares work between threads
  and rests the endpoint after it failed.
* Text is redacted before it leaves (:func:`hermes_core.redact.redact`); the key is only ever
  named: ``api_key_env`` is read by :class:`~hermes_core.llm.ChatClient` at each call,
  ``api_key: {$env: NAME}`` once, at start-up.
* Text longer than ``max_chars`` is judged in windows overlapping by half a window, not cut:
  a payload of up to half a window is whole in some window wherever it sits.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator

from hermes_core.llm import ChatClient, ChatEndpoint, ErrorKind, LLMError
from hermes_core.markers import hookimpl
from hermes_core.plugins import PluginContext
from hermes_core.redact import redact
from hermes_core.types import Finding
from hermes_plugins.threat_judge.gate import REST_S, Failure, Gate, Outcome
from hermes_plugins.threat_judge.rubric import (
    RUBRIC_VERSION,
    Verdict,
    VerdictError,
    messages,
    one_line,
    parse_verdict,
    prepared,
)
from hermes_plugins.threat_judge.settings import (
    PREFIX,
    JudgeSettings,
    endpoint_for,
    parse_settings,
)
from hermes_plugins.threat_judge.verdicts import Verdicts

__all__ = ["PLUGIN_NAME", "ThreatJudgePlugin"]

PLUGIN_NAME = "threat_judge"
#: the id of every judged block; the rubric category is in ``Finding.category``
BLOCK_ID = "judge_block"
#: failures of the endpoint, where ``on_error`` applies; any other failure refuses the text
ENDPOINT_FAILURES: frozenset[ErrorKind] = frozenset(
    {
        "timeout",
        "network",
        "unavailable",
        "rate_limited",
        "auth",
        "server",
        "not_found",
        "malformed",
    }
)
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
        self.verdicts = Verdicts(
            context.home / PLUGIN_NAME, self.settings.cache_size, context.logger
        )
        #: monotonic seconds (replaceable in tests), for the rest after a failure
        self.clock: Callable[[], float] = time.monotonic
        self.gate = Gate(self._now)

    def _now(self) -> float:
        return self.clock()

    def __repr__(self) -> str:
        return f"ThreatJudgePlugin(model={self.endpoint.model!r})"

    @hookimpl
    def memory_forget(self, user_id: str | None) -> dict[str, int]:
        """The remembered verdicts hold excerpts of judged text and not whose text it was,
        so forgetting anyone drops them all (they are asked again): ``cached verdicts``."""
        del user_id
        return {"cached verdicts": self.verdicts.forget()}

    @hookimpl
    def scan_threat(self, content: str, scope: str) -> list[Finding]:
        """The judge's findings for ``content``; nothing is sent for a scope not configured."""
        if scope not in self.settings.scopes or not content.strip():
            return []
        text = redact(prepared(content))
        parts = (scope, RUBRIC_VERSION, self.endpoint.model, text)
        key = hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()
        outcome = self.gate.run(
            key, lambda: self.verdicts.get(key), lambda: self._ask(key, text, scope)
        )
        if isinstance(outcome, Failure):
            return self._failed(outcome, text)
        return list(outcome)

    def _ask(self, key: str, text: str, scope: str) -> Outcome:
        try:
            findings = self._judge(text, scope)
        except VerdictError as exc:
            return Failure(f"the answer is no verdict: {exc}", endpoint=False)
        except LLMError as exc:
            return Failure(f"{exc.kind}: {exc}", endpoint=exc.kind in ENDPOINT_FAILURES)
        self.verdicts.put(key, findings)
        return findings

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
        """Pieces of at most ``max_chars`` overlapping by half: any run of up to half a
        window is whole in some piece."""
        size = self.settings.max_chars
        step = size - size // 2
        start = 0
        while True:
            yield text[start : start + size]
            if start + size >= len(text):
                return
            start += step

    def _finding(self, verdict: Verdict, window: str) -> Finding:
        return Finding(
            BLOCK_ID,
            verdict.category,
            f"the threat judge ({self.endpoint.model or 'auxiliary model'}) judged this "
            f"{verdict.category.replace('_', ' ')}: {verdict.reason}",
            PLUGIN_NAME,
            _excerpt(window),
        )

    def _failed(self, failure: Failure, text: str) -> list[Finding]:
        if not failure.endpoint:
            return [
                Finding(
                    BLOCK_ID,
                    "no_verdict",
                    f"the threat judge gave no verdict on this text ({failure.what}); refused "
                    f"whatever {PREFIX}.on_error says: text can talk a model out of its verdict",
                    PLUGIN_NAME,
                    _excerpt(text),
                )
            ]
        if self.settings.on_error == "allow":
            if failure.first:
                self.context.logger.warning(
                    "threat judge could not judge a write (%s); let through because "
                    "%s.on_error is allow; the endpoint is not asked for %g s and what is "
                    "written meanwhile is let through without another warning",
                    failure.what,
                    PREFIX,
                    REST_S,
                )
            return []
        return [
            Finding(
                "judge_error",
                "judge",
                f"the threat judge could not judge this text ({failure.what}); refused because "
                f"{PREFIX}.on_error is block (fix the judge's endpoint, or set on_error: "
                "allow to let text through while it is down)",
                PLUGIN_NAME,
                _excerpt(text),
            )
        ]


def _excerpt(text: str) -> str:
    return one_line(text, _EXCERPT)
