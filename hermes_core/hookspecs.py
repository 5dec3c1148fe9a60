"""Hook specifications: the contract between hermes-context and its plugins.

The docstrings below are the reference manual (``docs/hooks.md`` is generated from them).
Every hook is called by the core through :class:`hermes_core.plugins.PluginHost`, which
applies the hook's *call policy* and isolates plugin errors:

``first_result``
    Implementations run newest-registered first and built-ins last; the first non-``None``
    answer wins. An implementation that raises is reported and skipped.
``collect``
    Every implementation runs in a stable order (registration order, built-ins first); the
    non-``None`` answers are collected. One that raises contributes nothing.
``broadcast``
    Every implementation runs; return values are ignored. One that raises is logged and
    never breaks the caller.
``fail_closed``
    Like ``collect``, but an implementation that raises counts as a finding: a scanner that
    cannot answer must not let text through.

Order within a policy follows pluggy's markers: ``tryfirst`` implementations come first and
``trylast`` ones last. ``prune_tool_result`` is the one hook that stops at the first error:
a pruner that fails keeps the original result rather than letting another one guess.

With ``plugins.strict: true`` every plugin error is re-raised instead (for CI and plugin
development). Implementations may accept any subset of a hook's arguments, by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from hermes_core.markers import hookspec
from hermes_core.types import Finding, Message, SessionInfo, SummaryContext, Turn

CallPolicy = Literal["first_result", "collect", "broadcast", "fail_closed"]
_F = TypeVar("_F", bound=Callable[..., Any])

#: hook name -> (call policy, version that added it); read by the host and the docs.
HOOK_POLICIES: dict[str, tuple[CallPolicy, str]] = {}
#: first-result hooks whose call ends at the first implementation that raises.
STOP_ON_ERROR: set[str] = set()


def _policy(
    policy: CallPolicy, since: str = "0.1.0", *, stop_on_error: bool = False
) -> Callable[[_F], _F]:
    def mark(function: _F) -> _F:
        HOOK_POLICIES[function.__name__] = (policy, since)
        if stop_on_error:
            STOP_ON_ERROR.add(function.__name__)
        return function

    return mark


# --- compression -----------------------------------------------------------------------


@_policy("first_result", stop_on_error=True)
@hookspec(firstresult=True)
def prune_tool_result(
    tool_name: str, arguments: Mapping[str, Any], result: str, max_chars: int
) -> str | None:
    """Shorten one old tool result to a line an agent can still act on.

    Called by the compressor's pruning phase for each tool result outside the protected tail
    that is longer than ``compression.min_prune_chars``.

    :param tool_name: the function name of the call this result answers (``"terminal"``,
        ``"read_file"``, ...); ``""`` when the call cannot be found.
    :param arguments: the call's arguments, parsed from JSON (``{}`` when they are not JSON).
    :param result: the tool result text.
    :param max_chars: the longest answer the compressor will accept.
    :return: the replacement text, or ``None`` to let the next implementation decide.
        Example: ``[terminal] ran `npm test` -> exit 0, 47 lines output``.

    Policy: ``first_result``; the built-in implementation runs last and always answers.
    When an implementation raises, the call stops there: the original result is kept and the
    error is logged once.
    """


@_policy("first_result")
@hookspec(firstresult=True)
def summarize_middle(
    messages: Sequence[Message],
    previous_summary: str | None,
    budget_tokens: int,
    context: SummaryContext,
) -> str | None:
    """Summarise the middle of a transcript that is about to be replaced.

    :param messages: the middle turn groups, whole (tool calls with their results), never
        mutated by the callee.
    :param previous_summary: the summary made at the previous compaction of this session, to
        be updated rather than summarised again; ``None`` the first time.
    :param budget_tokens: how long the summary may be; an instruction, not a hard cut.
    :param context: model, window and session of the compaction.
    :return: the summary text, or ``None`` to pass to the next implementation.

    Policy: ``first_result``; the built-in LLM summariser runs last. When an implementation
    raises, the next one is tried, then the compressor's fallback layers (spec 10 §5).
    The text returned is threat-scanned before use.
    """


@_policy("collect", "0.4.0")
@hookspec
def plan_compaction(
    messages: Sequence[Message], task: str, focus: str | None, session: SessionInfo | None
) -> Mapping[int, str] | None:
    """Steer a compaction: mark what of the span about to be summarised to keep, drop or
    shorten, knowing the task.

    Called once per summary the compressor is about to write (not when pruning alone does),
    before the summariser runs, with the span it would summarise (never the protected head
    or tail).

    :param messages: the span, as redacted copies (changing them changes nothing); answer
        with indices into this list.
    :param task: the text of the newest real user message (redacted), ``""`` when none.
    :param focus: what the host asked the summary to keep (``compress(focus=...)``,
        ``session.compact_now(focus=...)``, hermes-agent's ``/compress <topic>``), or ``None``.
    :param session: the conversation, or ``None`` for a compression without a session
        (``hermes-context compress``).
    :return: a mapping of span index to mark, or ``None`` for no opinion. ``"keep"``: the
        message stays verbatim after the summary, in order, instead of being summarised;
        ``"drop"``: it is left out of the summary's input (archived all the same, so it can
        still be recalled); ``"shorten"``: it enters the summary's input as one line (a tool
        result as the ``prune_tool_result`` line, long call arguments cut, other text
        clipped to 300 characters). Unmarked messages are summarised as usual.
        Example: ``{0: "drop", 7: "keep"}``.

    Policy: ``collect``; when answers disagree about a message, the mark that keeps more wins
    (keep over shorten over drop). A tool call and its results move as one: a ``keep`` or
    ``drop`` on one of them applies to the whole group. Marks that make no sense (not a
    mapping, an index out of range, an unknown mark) are ignored with a warning; a kept
    message that would sit next to another message of its role, or an earlier compaction's
    summary, is summarised instead. A plan that keeps every message leaves the transcript
    unchanged. An implementation that raises contributes nothing. What the plan changed is
    in the result's ``stats["plan"]``.
    """


# --- memory ----------------------------------------------------------------------------


@_policy("collect")
@hookspec
def memory_prefetch(query: str, session: SessionInfo) -> str | None:
    """Recall what is relevant to the user's next message.

    :param query: the user's message text (already redacted of secrets).
    :param session: the conversation, including the ``user_id`` every lookup must be bound to.
    :return: recalled text, or ``None`` when there is nothing to add. The core threat-scans
        it, neutralises fences and wraps it in a ``<memory-context>`` block marked as
        background data, never instructions.

    Policy: ``collect`` in a stable order. External providers run on a worker thread with
    ``memory.prefetch_timeout``; one that raises or times out contributes nothing.
    """


@_policy("broadcast")
@hookspec
def memory_sync(turn: Turn, session: SessionInfo) -> None:
    """Store a completed turn.

    Called after the reply was delivered, on one FIFO worker per session (turn N lands before
    N+1). Interrupted or empty turns are not synced.

    Policy: ``broadcast``; an error is logged and never breaks a turn.
    """


@_policy("fail_closed")
@hookspec
def scan_threat(content: str, scope: str) -> list[Finding] | None:
    """Look for prompt injection, exfiltration and secrets in text.

    :param content: the text about to be trusted (a memory write, a summary, recalled text).
    :param scope: ``"strict"`` for memory and skill writes, ``"context"`` for recalled text
        and summaries.
    :return: a list of :class:`~hermes_core.types.Finding` (empty when clean) or ``None``.

    Policy: ``fail_closed``: every implementation's findings are collected, and an
    implementation that raises counts as a finding, so a broken scanner blocks rather than
    waves text through.
    """


# --- sessions --------------------------------------------------------------------------


@_policy("first_result", "0.2.0", stop_on_error=True)
@hookspec(firstresult=True)
def session_store() -> Any | None:
    """Open the session store this home uses (spec 40 §1).

    Called once, when a :class:`~hermes_core.host.Hermes` first needs its store (a session,
    ``session_search``, the ``sessions`` commands), and only when ``sessions.enabled`` is
    true. The plugin reads where and how from its :class:`~hermes_core.plugins.PluginContext`
    (``settings.sessions``, ``home``).

    :return: an object implementing :class:`hermes_core.sessions.SessionStore`, or ``None``
        to let the next implementation answer. The host closes it on shutdown.

    Policy: ``first_result``; the built-in SQLite store (``$HERMES_HOME/state.db``, or
    ``sessions.db_path``) runs last and answers when ``sessions.backend`` is ``sqlite``; the
    ``postgres`` plugin answers for ``postgres``. An implementation that raises ends the call
    (its error is the host's error): a store that cannot open must never be replaced by
    another one, which would split a user's sessions in two.
    """


@_policy("first_result", "0.3.0", stop_on_error=True)
@hookspec(firstresult=True)
def memory_documents(home: Path) -> Any | None:
    """Open where ``MEMORY.md`` / ``USER.md`` and their staged writes are kept (spec 20).

    Called when a memory store is built for ``home`` (a session, a background review, the
    ``memory`` commands). The built-in file layout (``home/memories``, ``home/pending``)
    answers last when ``memory.backend`` is ``files``; the ``postgres`` plugin answers for
    ``postgres`` (rows per user with a version column, shared by every host).

    :return: an object implementing :class:`hermes_core.memory.documents.MemoryDocuments`,
        or ``None`` to let the next implementation answer.

    Policy: ``first_result``; an implementation that raises ends the call (never a fallback
    to another place, which would lose writes).
    """


# --- provider lifecycle ----------------------------------------------------------------


@_policy("broadcast")
@hookspec
def memory_session_start(session: SessionInfo) -> None:
    """A conversation begins or resumes. Providers open per-session state here.

    Policy: ``broadcast``; errors are logged.
    """


@_policy("broadcast")
@hookspec
def memory_session_end(session: SessionInfo, reason: str) -> None:
    """A conversation ends (``reason``: ``"closed"``, ``"compression"``, ``"error"``, ...).

    Policy: ``broadcast``; errors are logged.
    """


@_policy("broadcast")
@hookspec
def memory_session_switch(session: SessionInfo, parent_session_id: str) -> None:
    """The host continues a conversation under a new session id.

    Happens when a compaction with ``compression.in_place: false`` starts a child session;
    ``parent_session_id`` is the session that was ended.

    Policy: ``broadcast``; errors are logged.
    """


@_policy("collect")
@hookspec
def memory_tools(session: SessionInfo) -> list[dict[str, Any]] | None:
    """Tool schemas (OpenAI function format) this provider offers the model.

    Tools whose names collide with core tools (``memory``, ``session_search``, ``session_recall``,
    ``skill_manage``) are dropped with a warning: core names win.

    Policy: ``collect``; one that raises offers no tools.
    """


@_policy("first_result")
@hookspec(firstresult=True)
def memory_handle_tool(session: SessionInfo, name: str, arguments: Mapping[str, Any]) -> str | None:
    """Run one of the tools this provider offered.

    :return: the tool result as JSON text, or ``None`` when ``name`` is not this provider's.
        Every call must be bound to ``session.user_id``: never read or change another user's
        data.

    Policy: ``first_result``; an implementation that raises is reported and the model gets a
    JSON error result.
    """


@_policy("collect")
@hookspec
def memory_system_block(session: SessionInfo) -> str | None:
    """Static text for the system prompt, fixed for the whole session.

    A plugin that is not built in may hold what it derived from turns it was sent (tool
    results included), which no person approved: its block is threat-scanned like recalled
    text (an item that matches is withheld, a ``recall_blocked`` event) and fenced in a
    ``<memory-context>`` block marked as background data, never instructions.

    Policy: ``collect``; one that raises contributes nothing.
    """


@_policy("collect")
@hookspec
def memory_on_pre_compress(messages: Sequence[Message], session: SessionInfo) -> str | None:
    """Text to hand the summariser before the middle of a transcript is compacted.

    A provider can rescue facts from turns that are about to be replaced.

    Policy: ``collect``; one that raises contributes nothing.
    """


@_policy("broadcast")
@hookspec
def memory_on_write(action: str, target: str, content: str, session: SessionInfo | None) -> None:
    """Mirror of a write to the built-in file memory (``action``: add, replace, remove).

    Policy: ``broadcast``; errors are logged.
    """


@_policy("collect", "0.5.0")
@hookspec
def memory_forget(user_id: str | None) -> Mapping[str, int] | None:
    """Delete everything this plugin keeps about one person (``hermes-context forget``).

    Called once by :meth:`Hermes.forget_user <hermes_core.host.Hermes.forget_user>` after the
    core deleted the person's sessions, files and staged records. An external provider must
    delete, on its service, every memory, message, profile and derived fact stored under the
    principal it uses for ``user_id`` (the one :func:`hermes_core.provider_kit.principal`
    gives for a session of that user), through the service's own delete API, and nothing
    stored under any other principal.

    :param user_id: the person; ``None`` is the anonymous principal of a single-user home
        (the provider's configured default id), named explicitly by the operator. It never
        matches a named user, nor a named user it.
    :return: what was deleted, as counts per kind (``{"memories": 12}``; ``{}`` when the
        service held nothing for the person), or ``None`` when the plugin keeps no per-user
        data for this home (it is then not listed in the report).

    Failures: raise (a :class:`~hermes_core.errors.ProviderError` saying what was not
    deleted and why, no secret in it). The core reports the plugin as failed and the person
    as not wholly forgotten; it never retries on its own (run the command again). A
    provider configured as ``memory.provider`` that does not implement this hook is reported
    as "could not forget: no memory_forget hook".

    Policy: ``collect``; each implementation is called on its own, so one failure never
    hides another plugin's answer.
    """


@_policy("broadcast")
@hookspec
def memory_shutdown() -> None:
    """The host is closing. Flush queues and release connections (bounded time).

    Called in reverse registration order. Policy: ``broadcast``; errors are logged.
    """
