"""Background review: after a reply went out, an auxiliary model looks over a snapshot of the
conversation and keeps what is worth keeping with the memory and skill tools.

Why this shape: the review must never cost the user anything. It runs on a daemon thread (a
hung model cannot keep the process alive), one at a time, on a copy of the messages (the host
goes on changing its own), and every failure becomes an event, never an exception in the host.
It is given its tools as handlers and uses nothing else: no external provider, no session
store, no compressor. Every call passes the gate (:mod:`.gate`): two tools only, and a quote
of the user's words for each user-profile fact; each write runs with provenance ``review``
and lands only when such a quote backs it (the rest is staged, :mod:`.writes`). ``close()``
gets one last review bounded in time (:meth:`BackgroundReview.final`); after that no tool
call of a late review runs.
"""

from __future__ import annotations

import copy
import json
import logging
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from hermes_core.compression.serialize import head_tail, serialize_turns
from hermes_core.llm import ChatClient, LLMError
from hermes_core.memory.calls import redacted
from hermes_core.provenance import TaintIndex, using
from hermes_core.redact import redact
from hermes_core.review.gate import KIND_TOOLS, judge, review_schema, schema_name
from hermes_core.review.prompt import review_prompt, transcript_message
from hermes_core.review.quotes import QuoteBook
from hermes_core.review.writes import IndexOf, review_context, snapshot_index

__all__ = ["BackgroundReview", "EventSink", "Handler", "ReviewOutcome"]

log = logging.getLogger("hermes_context.review")

Handler = Callable[[Mapping[str, Any] | str], str]
EventSink = Callable[[str, dict[str, Any]], None]

#: What the review model reads of the conversation, and of one message, at most.
TRANSCRIPT_MAX_CHARS: Final = 60_000
MESSAGE_MAX_CHARS: Final = 4_000
#: A tool result longer than this reaches the review model cut (head and tail).
RESULT_MAX_CHARS: Final = 16_000
_REASON_MAX: Final = 300


@dataclass
class ReviewOutcome:
    """What one review did: tool calls ``done`` (applied), ``staged`` (proposals for a
    person), ``failed`` (the tool said no), ``refused`` (the gate said no), ``dropped``
    (malformed calls the client left out); ``stopped`` says why it ended (``answered``,
    ``max_rounds``, ``cancelled``)."""

    kinds: list[str]
    rounds: int = 0
    done: int = 0
    staged: int = 0
    failed: int = 0
    refused: int = 0
    dropped: int = 0
    stopped: str = "answered"
    reply: str = ""
    actions: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class _Plan:
    """One review's tools (names, the schemas sent), the user's words it checks quotes in and
    the taint index its writes are judged against."""

    tools: list[str]
    schemas: list[dict[str, Any]]
    book: QuoteBook
    index: TaintIndex  # what of the snapshot came from untrusted text, judged at each write


def _clip(text: str, limit: int = _REASON_MAX) -> str:
    text = " ".join(redact(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _tool_status(result: str) -> tuple[str, dict[str, Any]]:
    """``done``, ``staged`` or ``failed`` for a handler's JSON answer, and its short facts."""
    try:
        payload = json.loads(result)
    except (ValueError, RecursionError):
        return "done", {}
    if not isinstance(payload, dict):
        return "done", {}
    if payload.get("success") is False or ("error" in payload and "success" not in payload):
        return "failed", {"error": _clip(str(payload.get("error", "")))}
    if payload.get("staged"):
        return "staged", {"pending_id": str(payload.get("pending_id", ""))}
    return "done", {}


class BackgroundReview:
    """Runs reviews with ``client_factory()`` (the auxiliary LLM), ``handlers`` by tool name
    and ``schemas`` (the tools' OpenAI schemas); only ``memory`` and ``skill_manage`` are ever
    offered. ``on_event(kind, data)`` hears ``review_started``, ``review_action``,
    ``review_refused``, ``review_finished``, ``review_failed``, ``review_skipped`` and
    ``review_abandoned``. ``context()``, when given, returns what is already kept (shown to
    the model so it does not save it twice); ``before_each()`` runs as each review begins
    (e.g. the review's ``MemoryTool.new_turn``, so its retry limit counts per review).
    ``index_of(snapshot)`` builds the taint index each review's writes are judged against;
    every write runs with provenance source ``review`` (see :mod:`.writes`)."""

    def __init__(
        self,
        client_factory: Callable[[], ChatClient],
        handlers: Mapping[str, Handler],
        schemas: Sequence[Mapping[str, Any]],
        on_event: EventSink,
        max_rounds: int = 4,
        *,
        context: Callable[[], str] | None = None,
        before_each: Callable[[], None] | None = None,
        transcript_max_chars: int = TRANSCRIPT_MAX_CHARS,
        message_max_chars: int = MESSAGE_MAX_CHARS,
        index_of: IndexOf = snapshot_index,
        session_id: str | None = None,
        user_id: str | None = None,
    ) -> None:
        if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < 1:
            raise ValueError(f"max_rounds must be a whole number >= 1, got {max_rounds!r}")
        self._client_factory = client_factory
        self._handlers = dict(handlers)
        self._schemas = {schema_name(s): s for s in schemas if schema_name(s) in self._handlers}
        self._on_event = on_event
        self.max_rounds = max_rounds
        self._context = context
        self._before_each = before_each
        self._transcript_max = transcript_max_chars
        self._message_max = message_max_chars
        self._index_of = index_of
        self._who = (session_id, user_id)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()
        #: The outcome of the latest review that finished (None: none yet, or it failed).
        self.last_outcome: ReviewOutcome | None = None

    # --- what a host calls -------------------------------------------------------------------

    def available(self) -> set[str]:
        """The kinds of review this instance can run (its tool has a handler and a schema)."""
        return {kind for kind, tool in KIND_TOOLS.items() if tool in self._schemas}

    @property
    def running(self) -> bool:
        with self._lock:
            return self._thread is not None and self._thread.is_alive()

    def start(
        self, snapshot: Sequence[Mapping[str, Any]], kinds: Collection[str]
    ) -> threading.Thread | None:
        """Review a copy of ``snapshot`` on a daemon thread; None when nothing started (no
        kind to review, another review still running, or the review was stopped)."""
        try:
            return self._start(snapshot, kinds)
        except Exception as exc:  # noqa: BLE001 - the host's turn must never fail here
            self._failed(sorted(set(kinds)) if _strings(kinds) else [], exc, None)
            return None

    def run(
        self, snapshot: Sequence[Mapping[str, Any]], kinds: Collection[str]
    ) -> ReviewOutcome | None:
        """One review in this thread; the outcome, or None when it failed or had nothing to
        review (an event says why). Never raises."""
        outcome: ReviewOutcome | None = None
        try:
            chosen = self._choose(kinds)
            if not chosen:
                return None
            outcome = ReviewOutcome(kinds=chosen)
            self.last_outcome = self._review(list(snapshot), outcome)
            return self.last_outcome
        except Exception as exc:  # noqa: BLE001 - every failure is an event
            self.last_outcome = None
            self._failed(outcome.kinds if outcome else [], exc, outcome)
            return None

    def final(
        self,
        snapshot: Sequence[Mapping[str, Any]],
        timeout: float,
        kinds: Collection[str] = ("memory",),
    ) -> bool:
        """The review on close: wait for a running one, run one more, and return within about
        ``timeout`` seconds whatever the model does. True when it finished in time without
        failing; after this, no further tool call of any review runs. Never raises."""
        try:
            deadline = time.monotonic() + max(0.0, float(timeout))
            with self._lock:
                running = self._thread
            if running is not None and running.is_alive():
                running.join(max(0.0, deadline - time.monotonic()))
                if running.is_alive():
                    self._abandon(timeout, "a review was still running")
                    return False
            self.last_outcome = None
            thread = self.start(snapshot, kinds)
            if thread is None:
                self._stopped.set()
                return False
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                self._abandon(timeout, "the final review did not finish in time")
                return False
            self._stopped.set()
            return self.last_outcome is not None
        except Exception as exc:  # noqa: BLE001 - close must go on
            self._stopped.set()
            self._failed(["memory"], exc, None)
            return False

    def stop(self) -> None:
        """No further review starts and no further tool call of a running one is executed."""
        self._stopped.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Join the running review (tests, hosts that want to drain); True when none runs."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    # --- inside ------------------------------------------------------------------------------

    def _choose(self, kinds: Collection[str]) -> list[str]:
        if not _strings(kinds):
            raise TypeError("kinds must be a collection of 'memory' and/or 'skill'")
        asked = sorted(set(kinds))
        unknown = [k for k in asked if k not in KIND_TOOLS]
        if unknown:
            raise ValueError(f"unknown review kind(s) {unknown}; use 'memory' and/or 'skill'")
        chosen = [k for k in asked if k in self.available()]
        if asked and not chosen:
            self._emit("review_skipped", {"kinds": asked, "reason": "no_tools"})
        return chosen

    def _start(
        self, snapshot: Sequence[Mapping[str, Any]], kinds: Collection[str]
    ) -> threading.Thread | None:
        if self._stopped.is_set():
            self._emit("review_skipped", {"kinds": sorted(set(kinds)), "reason": "stopped"})
            return None
        chosen = self._choose(kinds)
        if not chosen:
            return None
        copied = copy.deepcopy(list(snapshot))  # the host goes on changing its own list
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                self._emit("review_skipped", {"kinds": chosen, "reason": "busy"})
                return None
            thread = threading.Thread(
                target=self.run, args=(copied, chosen), name="hermes-review", daemon=True
            )
            self._thread = thread
            thread.start()
        return thread

    def _review(self, snapshot: list[Mapping[str, Any]], outcome: ReviewOutcome) -> ReviewOutcome:
        if self._before_each is not None:
            self._before_each()
        tools = [KIND_TOOLS[kind] for kind in outcome.kinds]
        schemas = [review_schema(self._schemas[tool]) for tool in tools]
        book = QuoteBook(snapshot)
        transcript = serialize_turns(
            snapshot, max_chars=self._transcript_max, per_message_max=self._message_max
        )
        context = redact(self._context()) if self._context is not None else ""
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": review_prompt(outcome.kinds)},
            {"role": "user", "content": transcript_message(transcript, context)},
        ]
        self._emit("review_started", {"kinds": outcome.kinds, "messages": len(snapshot)})
        client = self._client_factory()
        try:
            plan = _Plan(tools, schemas, book, self._index_of(snapshot))
            self._loop(client, messages, plan, outcome)
        finally:
            client.close()
        self._emit("review_finished", _summary(outcome))
        return outcome

    def _loop(
        self,
        client: ChatClient,
        messages: list[dict[str, Any]],
        plan: _Plan,
        outcome: ReviewOutcome,
    ) -> None:
        for _ in range(self.max_rounds):
            if self._stopped.is_set():
                outcome.stopped = "cancelled"
                return
            outcome.rounds += 1
            try:
                reply = client.complete(messages, tools=plan.schemas)
            except LLMError as exc:
                if exc.kind != "empty":
                    raise
                return  # an empty answer: the model has nothing (more) to do
            outcome.dropped += len(reply.dropped_tool_calls)
            if not reply.tool_calls:
                outcome.reply = _clip(reply.text, 200)
                return
            messages.append(
                {"role": "assistant", "content": reply.text or None, "tool_calls": reply.tool_calls}
            )
            for call in reply.tool_calls:
                result = self._execute(call, plan, outcome)
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
            if self._stopped.is_set():
                outcome.stopped = "cancelled"
                return
        outcome.stopped = "max_rounds"

    def _execute(self, call: Mapping[str, Any], plan: _Plan, outcome: ReviewOutcome) -> str:
        """Run one call through the gate and its handler; the text the model gets back."""
        name: str = call["function"]["name"]
        verdict = judge(name, call["function"]["arguments"], plan.tools, plan.book)
        if not verdict.allowed:
            outcome.refused += 1
            self._emit(
                "review_refused",
                {"tool": name[:80], "rule": verdict.code, "reason": _clip(verdict.reason)},
            )
            return verdict.refusal()
        if self._stopped.is_set():
            return json.dumps({"success": False, "error": "the review was stopped; not run"})
        args = verdict.arguments
        verb = args.get("action") or ("batch" if "operations" in args else "")
        action: dict[str, Any] = {"tool": name, "action": str(verb)[:40]}
        if name == "memory":
            action["target"] = str(args.get("target", ""))[:40]
        if verdict.note:
            action["backing"] = _clip(verdict.note, 200)
        context = review_context(
            plan.index,
            backed=verdict.backed,
            note=verdict.note,
            session_id=self._who[0],
            user_id=self._who[1],
        )
        try:
            with using(context):  # the writer reads the provenance from here, not from args
                result = self._handlers[name](args)
            if not isinstance(result, str):
                result = json.dumps(result, ensure_ascii=False, default=str)
        except Exception as exc:  # noqa: BLE001 - a broken tool fails the call, not the review
            failure = f"{name} failed ({type(exc).__name__}); go on without it"
            result = json.dumps({"success": False, "error": failure})
        status, facts = _tool_status(result)
        setattr(outcome, status, getattr(outcome, status) + 1)
        action |= {"outcome": status, **facts}
        outcome.actions.append(action)
        self._emit("review_action", action)
        return head_tail(verdict.told(result), RESULT_MAX_CHARS)

    def _abandon(self, timeout: float, why: str) -> None:
        self._stopped.set()
        self._emit("review_abandoned", {"timeout": timeout, "reason": why})

    def _failed(self, kinds: list[str], exc: BaseException, outcome: ReviewOutcome | None) -> None:
        data: dict[str, Any] = {"kinds": kinds, "error": type(exc).__name__}
        data["reason"] = _clip(str(exc)) or type(exc).__name__
        if isinstance(exc, LLMError):
            data["llm_error"] = exc.kind
        if outcome is not None:
            data |= {k: v for k, v in _summary(outcome).items() if k not in ("kinds", "reply")}
        self._emit("review_failed", data)

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        try:
            self._on_event(kind, redacted(data))
        except Exception:  # a listener must never break a review or a turn
            log.warning("the review's on_event listener failed on %s", kind, exc_info=True)


def _strings(kinds: object) -> bool:
    if isinstance(kinds, str) or not isinstance(kinds, Collection):
        return False
    return all(isinstance(k, str) for k in kinds)


def _summary(outcome: ReviewOutcome) -> dict[str, Any]:
    data = asdict(outcome)
    data.pop("actions")
    return data
