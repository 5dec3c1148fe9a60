"""A session's background review: when it is due, what it may touch, the flush on close.

Why apart from :class:`~hermes_core.host.session.Session`: the review is a policy of its own
(spec 40 §4). The counts live in the session's state (so a restart keeps counting) and are
advanced from the messages the session absorbs, each once; a review starts after the reply,
on a daemon thread, on a copy of the active transcript, with the auxiliary LLM and only two
tools: ``memory`` (the session user's files, origin ``background_review``: replace and remove
are staged as proposals, and so is any write no quote of the user backs) and ``skill_manage``
(every write staged). Each write carries provenance ``review``, judged against the snapshot.
It is given nothing else: not the external provider, not the session store, not the
compressor.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from hermes_core.compression.summarizer import LLMSummarizer
from hermes_core.errors import HermesError
from hermes_core.host.session_skills import strict_scanner
from hermes_core.host.session_taint import SessionTaint
from hermes_core.llm import ChatClient
from hermes_core.memory.home import open_writer
from hermes_core.memory.tool import MEMORY_TOOL_SCHEMA, MemoryTool
from hermes_core.provenance import TaintIndex
from hermes_core.review import BackgroundReview, ReviewCounters, tool_iterations, tools_used
from hermes_core.transcript.messages import is_real_user_message
from hermes_core.types import SessionInfo

if TYPE_CHECKING:
    from pathlib import Path

    from hermes_core.host.services import SessionHost

__all__ = ["FINAL_REVIEW_MAX_S", "SessionReview", "counted"]

#: The final review on close waits at most this long (or the summariser's timeout, if less).
FINAL_REVIEW_MAX_S: Final = 30.0
Message = dict[str, Any]
Handler = Callable[[Mapping[str, Any] | str], str]


def counted(
    settings: Any, state: Mapping[str, Any] | None, new: Sequence[Message]
) -> dict[str, int]:
    """The review counts after ``new`` messages arrived: user turns, tool iterations, and a
    reset of a count when the model used that tool itself (pure: the caller stores it)."""
    counters = ReviewCounters.from_settings(settings, state)
    for message in new:
        if is_real_user_message(message):
            counters.on_user_turn()
    counters.on_tool_iteration(tool_iterations(new))
    used = tools_used(new)
    if "memory" in used:
        counters.on_memory_tool_used()
    if "skill_manage" in used:
        counters.on_skill_tool_used()
    return counters.to_dict()


def _index_of(snapshot: Sequence[Mapping[str, Any]]) -> TaintIndex:
    """The snapshot indexed as the session indexes its view (tool names, recalled text)."""
    taint = SessionTaint()
    taint.absorb(snapshot)
    return taint.index


class SessionReview:
    """The review runner of one session, or none (no auxiliary LLM configured, or
    ``skip_memory``); ``skill_tool`` is the session's ``skill_manage`` (handler, schema)."""

    def __init__(
        self,
        host: SessionHost,
        info: SessionInfo,
        *,
        enabled: bool,
        emit: Callable[[str, dict[str, Any]], None],
        skill_tool: tuple[Handler, dict[str, Any]] | None = None,
    ) -> None:
        self.settings = host.settings
        self.runner: BackgroundReview | None = None
        endpoint = LLMSummarizer(self.settings.auxiliary.compression, self.settings.model).primary
        if not enabled or endpoint is None:
            return
        self.timeout = min(FINAL_REVIEW_MAX_S, endpoint.timeout)
        handlers: dict[str, Handler] = {}
        schemas: list[dict[str, Any]] = []
        memory = self.settings.memory
        tool: MemoryTool | None = None
        documents = None
        if memory.memory_enabled or memory.user_profile_enabled:
            home = info.home or host.home
            try:
                documents = host.memory_documents(home)
            except HermesError as exc:  # no memory to review (file_memory off, database down)
                emit(
                    "review_skipped",
                    {"kinds": ["memory"], "reason": "no_memory", "error": str(exc)},
                )
        if documents is not None:
            writer = open_writer(
                home,
                self.settings,
                user_id=info.user_id,
                scanner=strict_scanner(host),
                documents=documents,
            )
            tool = MemoryTool(writer, origin="background_review")
            handlers["memory"], schemas = tool.handle, [MEMORY_TOOL_SCHEMA]
        if skill_tool is not None:
            handlers["skill_manage"] = skill_tool[0]
            schemas.append(skill_tool[1])
        if not handlers:
            return
        self.runner = BackgroundReview(
            lambda: ChatClient(endpoint),
            handlers,
            schemas,
            emit,
            context=tool.writer.store.snapshot if tool is not None else None,
            before_each=(
                (lambda: self._before_each(tool, emit, home / "pending" / "consolidation.json"))
                if tool is not None
                else None
            ),
            index_of=_index_of,
            session_id=info.session_id,
            user_id=info.user_id,
        )

    @staticmethod
    def _before_each(
        tool: MemoryTool, emit: Callable[[str, dict[str, Any]], None], ledger: Path
    ) -> None:
        """As each review begins: the tool's retry count starts again, and the offline
        consolidation of both blocks is proposed (staged for a person, never applied; a plan
        already waiting, or rejected (``ledger``), is not staged again). Its problems become an
        event, never an error."""
        tool.new_turn()
        from hermes_core.host.consolidate import consolidate_memory

        for target in ("memory", "user"):
            try:
                done = consolidate_memory(
                    tool.writer, target, origin="background_review", ledger=ledger
                )
            except Exception as exc:  # noqa: BLE001 - a review never fails the host
                emit("review_failed", {"kinds": ["consolidation"], "error": type(exc).__name__})
                continue
            if done.plan.steps:
                emit(
                    "review_consolidation",
                    {
                        "target": target,
                        "steps": len(done.plan.steps),
                        "staged": bool(done.result and done.result.get("staged")),
                        "already_staged": done.already_staged,
                        "declined": done.declined,
                    },
                )

    def start_due(self, state: Mapping[str, Any], snapshot: Sequence[Message]) -> dict[str, int]:
        """Start the reviews that are due (after the reply); the counts with theirs reset."""
        counters = ReviewCounters.from_settings(self.settings, state)
        due = counters.due()
        if due and self.runner is not None and self.runner.start(snapshot, due) is not None:
            for kind in due:
                counters.reset(kind)
        return counters.to_dict()

    def close(self, state: Mapping[str, Any], snapshot: Sequence[Message]) -> dict[str, int]:
        """On close: one final memory review when enough user turns passed since the last
        (bounded in time, never raising), else stop any running one; the counts after."""
        counters = ReviewCounters.from_settings(self.settings, state)
        if self.runner is None:
            return counters.to_dict()
        if counters.final_due():
            self.runner.final(snapshot, self.timeout)
            counters.reset("memory")
        else:
            self.runner.stop()
        return counters.to_dict()
