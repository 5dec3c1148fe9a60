"""hermes-agent's ``ContextEngine`` backed by our ``Session`` and ``Compressor``.

hermes-agent keeps the message list and asks the engine three things: *whether* to compact
(``should_compress`` on the provider's real prompt count, the preflight estimate), *how*
(``compress`` returns the new list), and what the token fields say for its status line. Each
answer comes from our session for the hermes session id: the trigger is our threshold and
anti-thrash guard, ``compress`` takes the host's list into our store and compacts it there
at once (the decision was ``should_compress``'s, or the user's ``/compress``), with the focus
topic and the memory providers' text in the summary; the summary, the archive and the
compaction state are committed under the same id, so a restarted host that resumes the id
finds our state where it left it. Our session opens at its first use: by then our memory
provider has named the user, and hermes-agent's background-review fork, which never
compacts, leaves nothing behind.

The host never gets our exception: a bad argument or a call before ``on_session_start`` is
logged in one line and answered with the harmless default (the list unchanged, ``False``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent.context_engine import ContextEngine

from hermes_core import Session
from hermes_core.compression.engine import Compressor
from hermes_core.compression.policy import tail_message_floor
from hermes_core.errors import HermesError
from hermes_core.provenance import TaintIndex
from hermes_core.sessions.recall_tool import SESSION_RECALL_SCHEMA
from hermes_core.sessions.search_tool import SESSION_SEARCH_SCHEMA
from hermes_plugins.hermes_agent.carry import carry_taint
from hermes_plugins.hermes_agent.pairs import paired
from hermes_plugins.hermes_agent.runtime import clean_user, context_home, runtime
from hermes_plugins.hermes_agent.tools import (
    arguments_of,
    guarded,
    host_name,
    our_name,
    tool_error,
)

__all__ = ["ENGINE_NAME", "HermesContextEngine"]

log = logging.getLogger("hermes_context.hermes_agent")
ENGINE_NAME = "hermes-context"
_ENGINE_TOOLS = frozenset({"session_search", "session_recall"})
#: platforms of one local user (hermes-agent's CLI and friends): no user id is expected there
_LOCAL = frozenset({"", "cli", "local", "tui", "acp", "cron"})


def _count(value: Any, what: str, *, sentinel: bool = False) -> int:
    """A token count from the host; ``sentinel``: hermes-agent's -1 ("no real count yet")
    is read as unknown (0)."""
    if value is None or (sentinel and isinstance(value, int) and value == -1):
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise HermesError(f"{what} must be a whole number of tokens, got {value!r}")
    return value


class HermesContextEngine(ContextEngine):  # type: ignore[misc]
    """Selected with ``context.engine: hermes-context`` in hermes-agent's config.yaml."""

    #: the provider's last real prompt count (hermes-agent logs it when preflight defers;
    #: ``last_prompt_tokens`` it overwrites with its own estimates)
    last_real_prompt_tokens: int = 0

    def __init__(self) -> None:
        self._session: Session | None = None
        self._session_id: str | None = None
        self._home: Path | None = None
        self._model = ""
        self._holder = f"engine-{id(self)}"
        self._overhead = 0  # the host's tokens beside the messages: system prompt, tools
        self._overhead_known = False  # learned at the first compress
        self._early_pending = (
            False  # the last decision was the cost schedule's, before the threshold
        )
        self._user: str | None = None  # the agent's user, kept across its session ids
        self._fresh = True  # the bound id starts a conversation (not a compaction's child)
        self._platform = ""
        self._parent_taint: TaintIndex | None = None  # carried into the next session opened

    @property
    def name(self) -> str:
        return ENGINE_NAME

    def __deepcopy__(self, memo: dict[int, Any]) -> HermesContextEngine:
        """hermes-agent copies the registered engine for each agent: a fresh, unbound one
        with the same window (a session is opened by the copy's own ``on_session_start``)."""
        twin = HermesContextEngine()
        twin._model, twin.context_length = self._model, self.context_length
        twin.threshold_tokens = self.threshold_tokens
        return twin

    # --- session lifecycle -------------------------------------------------------------------

    def on_session_start(self, session_id: str, **kwargs: Any) -> None:
        guarded("on_session_start", None, lambda: self._start(session_id, kwargs))

    def _start(self, session_id: Any, kwargs: Mapping[str, Any]) -> None:
        """Bind to ``session_id``; our session opens at its first use (see ``_need``)."""
        if not isinstance(session_id, str) or not session_id.strip():
            raise HermesError(f"on_session_start needs a session id, got {session_id!r}")
        if session_id == self._session_id:
            return  # an in-place compaction boundary: same conversation, same session
        given = kwargs.get("hermes_home")
        home = context_home(given) if given else self._home or context_home(None)
        # a new id for the same agent (a rotating compaction, /new, /resume): the same user
        # goes on there; the engine hears of it before the memory provider does
        user = clean_user(kwargs.get("user_id")) or runtime().user_of(session_id) or self._user
        if user is not None:
            runtime().note_user(session_id, user)
        self._fresh = kwargs.get("boundary_reason") != "compression"  # else the count goes on
        # a compaction's child: the model keeps its context, so the child keeps the taint
        self._parent_taint = None if self._fresh else self._taint_of(kwargs.get("old_session_id"))
        self._release()
        self._session_id, self._home, self._user = session_id, home, user
        platform = kwargs.get("platform")
        self._platform = platform if isinstance(platform, str) else ""
        model = kwargs.get("model")
        if isinstance(model, str) and model:
            self._model = model
        self._follow_window()

    def _taint_of(self, old_session_id: Any) -> TaintIndex | None:
        """The taint index of the session a compaction leaves (ours, or the memory
        provider's when ours was never opened)."""
        if self._session is not None:
            return self._session.taint.index
        if isinstance(old_session_id, str) and old_session_id and self._home is not None:
            found = runtime().open_session(self._home, old_session_id)
            return found.taint.index if found is not None else None
        return None

    def on_session_end(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        """Store the final list in our session when one is open. None is opened for it: a
        fork of hermes-agent (its background review) ends with its parent's list, which is
        not the fork's to store."""

        def end() -> None:
            if self._session is not None and isinstance(messages, list) and messages:
                self._session.end_turn(messages)

        guarded("on_session_end", None, end)
        self._release()

    def on_session_reset(self) -> None:
        super().on_session_reset()
        self._release()

    def _release(self) -> None:
        if self._session is not None and self._home is not None and self._session_id:
            runtime().release(self._home, self._session_id, self._holder)
        self._session = None
        self._session_id = None

    def _committed(self) -> int:
        if self._home is None or not self._session_id:
            return 0
        return runtime().committed(self._home, self._session_id)

    def _need(self, what: str) -> Session:
        """Our session, opened now if this is its first use: by then the memory provider
        (when it is ours) has named the user, and a fork that never compacts opens none."""
        if self._session is not None:
            return self._session
        if not self._session_id or self._home is None:
            raise HermesError(f"{what} was called before on_session_start: no session to use")
        user = self._user or runtime().user_of(self._session_id)
        session = runtime().acquire(self._home, self._session_id, self._holder, user_id=user)
        self._session, self._user = session, session.info.user_id
        if self._parent_taint is not None:
            carry_taint(self._parent_taint, session.taint.index)
            self._parent_taint = None
        self._follow_window()
        if self._fresh:  # a resumed conversation: its compactions so far
            self.compression_count = session.compressor.compactions
        return session

    # --- window and usage --------------------------------------------------------------------

    def update_model(  # noqa: PLR0917 - the ABC's signature
        self,
        model: str,
        context_length: int,
        base_url: str = "",
        api_key: str = "",
        provider: str = "",
        api_mode: str = "",
    ) -> None:
        def follow() -> None:
            self._model = model if isinstance(model, str) else ""
            self.context_length = _count(context_length, "context_length")
            self._follow_window()

        guarded("update_model", None, follow)

    def _follow_window(self) -> None:
        """Our compressor takes the host's window; ``threshold_tokens`` is then ours (our
        ``compression.threshold`` and ``threshold_tokens`` cap, not the host's percentage)."""
        if not self.context_length:
            return
        if self._session is not None:
            self._session.set_model(self._model, context_length=self.context_length)
            compressor = self._session.compressor
        else:
            settings = runtime().host(self._home or context_home(None)).settings
            compressor = Compressor(settings, context_length=self.context_length, model=self._model)
        self.threshold_tokens = compressor.threshold_tokens
        self.threshold_percent = self.threshold_tokens / self.context_length
        # what hermes-agent's cheap preflight gate reads: our head and tail floors
        comp = compressor.settings.compression
        self.protect_first_n = comp.protect_first_n
        self.protect_last_n = tail_message_floor(comp.protect_last_n)

    def update_from_response(self, usage: dict[str, Any]) -> None:
        def take() -> None:
            if not isinstance(usage, Mapping):
                raise HermesError(f"usage must be a mapping, got {type(usage).__name__}")
            prompt = _count(usage.get("prompt_tokens"), "usage prompt_tokens")
            completion = _count(usage.get("completion_tokens"), "usage completion_tokens")
            total = usage.get("total_tokens")
            self.last_total_tokens = (
                _count(total, "usage total_tokens") if total is not None else (prompt + completion)
            )
            self.last_prompt_tokens, self.last_completion_tokens = prompt, completion
            self.last_real_prompt_tokens = prompt
            self._early_pending = False  # a request went through: that decision is stale
            if self._session is not None and prompt > 0:
                # judges our last compaction (the anti-thrash guard waits for this figure), in
                # the units our count has: the messages, without hermes-agent's system prompt
                # and tool schemas (a fixed share that no compaction can save)
                messages_only = max(1, prompt - self._overhead)
                self._session.compressor.update_from_usage({"prompt_tokens": messages_only})

        guarded("update_from_response", None, take)

    # --- the decision -------------------------------------------------------------------------

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        def decide() -> bool:
            session = self._need("should_compress")
            given = _count(prompt_tokens, "prompt_tokens", sentinel=True)
            tokens = given or max(self.last_prompt_tokens, 0)
            return self._decide(session, tokens)

        return guarded("should_compress", False, decide)

    def _decide(self, session: Any, tokens: int) -> bool:
        """Our trigger's verdict on the whole prompt. An early one (the cost schedule's) only
        once hermes-agent's own prompt and tools are measured (at the first compaction): the
        schedule weighs the messages alone; then ``compress`` runs it as optional."""
        go = bool(session.compressor.should_compress(tokens)[0])
        early = go and session.compressor.early_due
        if early and not self._overhead_known:
            return False
        self._early_pending = early
        return go

    def should_compress_preflight(self, messages: list[dict[str, Any]]) -> bool:
        def decide() -> bool:
            session = self._need("should_compress_preflight")
            if not isinstance(messages, list):
                raise HermesError(f"messages must be a list, got {type(messages).__name__}")
            tokens = session.compressor.count(messages) + self._overhead  # + prompt, tools
            return self._decide(session, tokens)

        return guarded("should_compress_preflight", False, decide)

    def should_defer_preflight_to_real_usage(self, rough_tokens: int) -> bool:
        """Trust the provider's last real count over the host's rough estimate only while
        that count fit and the estimate is no more than a fifth above our threshold."""
        if not isinstance(rough_tokens, int) or isinstance(rough_tokens, bool):
            return False
        real = self.last_real_prompt_tokens
        fits = 0 < real < self.threshold_tokens
        return fits and self.threshold_tokens <= rough_tokens <= self.threshold_tokens * 1.2

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        def any_middle() -> bool:
            if not isinstance(messages, list):
                raise HermesError(f"messages must be a list, got {type(messages).__name__}")
            talk = [m for m in messages if isinstance(m, Mapping) and m.get("role") != "system"]
            return len(talk) > int(self.protect_first_n) + 2

        return guarded("has_content_to_compress", False, any_middle)

    def compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        force: bool = False,
        memory_context: str = "",
    ) -> list[dict[str, Any]]:
        def run() -> list[dict[str, Any]]:
            session = self._need("compress")
            if not isinstance(messages, list):
                raise HermesError(f"messages must be a list, got {type(messages).__name__}")
            if focus_topic is not None and not isinstance(focus_topic, str):
                raise HermesError(f"focus_topic must be text, got {type(focus_topic).__name__}")
            messages_in, mended = paired(messages)
            if mended:
                log.warning(
                    "hermes-context: mended %d tool pair(s) before compacting: %s",
                    len(mended),
                    "; ".join(mended[:5]),
                )
            given = _count(current_tokens, "current_tokens", sentinel=True)
            tokens = given or self.last_real_prompt_tokens
            if tokens > 0:
                self._overhead = max(0, tokens - session.compressor.count(messages_in))
                # the cost schedule weighs the messages: should_compress gets the whole prompt
                session.compressor.carry.fixed, self._overhead_known = self._overhead, True
            optional, self._early_pending = self._early_pending, False
            before = self._committed()
            # the decision was ours already (should_compress: threshold and anti-thrash
            # guard) or the user's (/compress): compact now, whatever the count says
            out = session.compact(
                messages_in,
                force=not optional,
                optional=optional,
                focus=focus_topic,
                memory_context=memory_context if isinstance(memory_context, str) else "",
                prompt_tokens=tokens - self._overhead if tokens > 0 else None,
            )
            if self._committed() > before:
                self.compression_count += 1
            return out

        return guarded("compress", messages, run)

    # --- tools and status ---------------------------------------------------------------------

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """``hc_session_search`` (our store, archived turns included) and ``session_recall``
        (the originals this conversation's compactions replaced); known before a session
        starts, since hermes-agent asks first."""
        out = []
        for schema in (SESSION_SEARCH_SCHEMA, SESSION_RECALL_SCHEMA):
            function = dict(schema["function"])
            function["name"] = host_name(function["name"])
            out.append(function)
        return out

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        def run() -> str:
            ours = our_name(str(name))
            if ours not in _ENGINE_TOOLS:
                return tool_error(f"hermes-context has no tool {name!r}")
            session = self._need(f"tool {name}")
            if session.info.user_id is None and self._platform not in _LOCAL:
                # a gateway serves many users: without the user's id a search would span them
                return tool_error(
                    "session search needs the user's identity here: set memory.provider: "
                    "hermes_context in hermes-agent's config.yaml"
                )
            return session.handle_tool_call(ours, arguments_of(args))

        return guarded(f"tool {name}", tool_error(f"{name} failed; see the log"), run)

    def get_status(self) -> dict[str, Any]:
        status: dict[str, Any] = dict(super().get_status())
        status["engine"] = ENGINE_NAME
        status["session_id"] = self._session_id
        return status
