"""How a session compacts: when due, commit to the store first, then the view.

Apart from :class:`~hermes_core.host.session.Session` because it is one idea with its own
failure rules: a compaction the store refuses is not done (the compressor's state goes back
to before it, so a refusal never counts as an ineffective compaction); a store that another
process moved on is reloaded; a compaction with ``in_place: false`` continues in a child.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hermes_core.compression.arguments import check_flag
from hermes_core.compression.guidance import Guidance
from hermes_core.compression.references import ArchiveRefs
from hermes_core.errors import InvalidArgument, SessionError, StaleSessionError
from hermes_core.host.events import EventListener, emit
from hermes_core.host.session_state import MAX_ID_CHARS, SessionState, compaction_counters
from hermes_core.host.undo_history import UNDO_SECTIONS, CompactionRecord, to_runs

if TYPE_CHECKING:
    from hermes_core.compression.engine import Compressor
    from hermes_core.compression.result import CompressionResult
    from hermes_core.config.settings import Settings
    from hermes_core.host.session_memory import SessionMemory
    from hermes_core.host.view import ActiveView
    from hermes_core.sessions.store import SessionStore
    from hermes_core.types import SessionInfo

__all__ = ["CompactionSteps", "joined"]

log = logging.getLogger("hermes_context.session")
Message = dict[str, Any]


def joined(base: str, blocks: str | None) -> str:
    """The system prompt: the host's base, then the frozen blocks."""
    return f"{base}\n\n{blocks}" if base and blocks else base or blocks or ""


class CompactionSteps:
    """The compaction half of a session (mixed into :class:`Session`)."""

    compressor: Compressor
    view: ActiveView
    state: SessionState
    store: SessionStore | None
    settings: Settings
    info: SessionInfo
    memory: SessionMemory
    requested_id: str
    _listener: EventListener | None
    _base: str | None
    _system_prompt: str | None
    _last_seq: int
    _lock: threading.RLock

    @property
    def session_id(self) -> str:
        """The id the conversation continues under (a child's, after ``in_place: false``)."""
        return self.info.session_id

    def _compose_blocks(self) -> str:
        raise NotImplementedError

    def _count(self, deltas: dict[str, int]) -> None:
        raise NotImplementedError

    def _reload(self) -> None:
        raise NotImplementedError

    def _check_open(self) -> None:
        raise NotImplementedError

    def _save_state(self) -> None:
        raise NotImplementedError

    def _take(self, messages: Sequence[Mapping[str, Any]], *, with_recall: bool) -> None:
        raise NotImplementedError

    def compact(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        force: bool = False,
        focus: str | None = None,
        memory_context: str = "",
        prompt_tokens: int | None = None,
        optional: bool = False,
    ) -> list[Message]:
        """For a host that decides *when* itself and hands over its list (hermes-agent's
        ``compress()``): take the list in, compact now when due (``force``: at once, past the
        guard's cooldowns) keeping ``focus`` and ``memory_context`` in the summary, commit to
        the store, and return the active transcript (copies). ``prompt_tokens``: the host's
        real count of the request this list made, which anchors the trigger. ``optional``:
        now, as the early compaction the cost schedule said was due (dropped, the list kept,
        if it cuts little: compression/early.py)."""
        with self._lock:
            self._check_open()
            check_flag("force", force)
            check_flag("optional", optional)
            for name, value in (("focus", focus), ("memory_context", memory_context)):
                if value is not None and not isinstance(value, str):
                    raise InvalidArgument(
                        f"compact(): {name} must be text or None, got {type(value).__name__}"
                    )
            self._take(messages, with_recall=False)
            real = prompt_tokens if isinstance(prompt_tokens, int) else 0
            if real > 0 and not isinstance(prompt_tokens, bool):
                self.compressor.update_from_usage({"prompt_tokens": real}, self.view.sent)
            guidance = Guidance(focus, memory_context)
            self._compress_when_due(force=force, guidance=guidance, optional=optional)
            self._save_state()
            return [dict(m) for m in self.view.sent]

    def compact_now(self, focus: str | None = None) -> list[Message]:
        """Compact the active transcript now, whatever the trigger and the guard's cooldowns
        say (the user asked: hermes-agent's ``/compress <focus>``), keeping ``focus`` in the
        summary; commit to the store and return the active transcript (copies). Nothing to
        compact, or a compaction that would not shrink it, returns it unchanged."""
        with self._lock:
            self._check_open()
            if focus is not None and not isinstance(focus, str):
                raise InvalidArgument.of("compact_now(): focus", "text or None", focus)
            self._compress_when_due(force=True, guidance=Guidance(focus))
            self._save_state()
            return [dict(m) for m in self.view.sent]

    def _compress_when_due(
        self, *, force: bool = False, guidance: Guidance | None = None, optional: bool = False
    ) -> None:
        if not force and not optional:
            tokens = self.compressor.observe(self.view.sent)
            go, _why = self.compressor.should_compress(tokens)
            if not go:
                return
        before = self.compressor.export_state()
        refs = self._archive_refs(self.view.seqs)
        result = self.compressor.compress(
            self.view.sent, force=force, guidance=guidance, references=refs, optional=optional
        )
        forms = list(result.messages)
        changed = result.status in ("compressed", "pruned")
        if self.state.overflowed:
            forms, changed = self._strip_images_if_over(result, forms, changed)
            self.state.overflowed = False
        if not changed:
            return
        forms = self._refresh_system_prompt(forms)
        in_place = self.settings.compression.in_place
        mark = (self.session_id, list(self.view.seqs), self._last_seq)  # for undo
        if self._commit(forms, in_place=in_place):
            self._count_compaction(result)
            self._remember_compaction(mark, result, before)
        else:  # not committed, so not done: no strike, no cooldown, no previous summary
            self.compressor.restore_state(before)

    def _strip_images_if_over(
        self, result: CompressionResult, forms: list[Message], changed: bool
    ) -> tuple[list[Message], bool]:
        from hermes_core.compression.images import strip_tool_images

        if result.tokens_after < self.compressor.threshold_tokens and changed:
            return forms, changed
        refs = self._archive_refs(self.view.origins(forms))
        stripped, count = strip_tool_images(forms, tag=refs.tag if refs else lambda _i: "")
        if not count:
            return forms, changed
        emit(self._listener, "images_stripped", self.session_id, {"images": count})
        return list(stripped), True

    def _archive_refs(self, seqs: Sequence[int | None]) -> ArchiveRefs | None:
        """The store rows stand-ins will name (docs/recall.md); None without a store."""
        if self.store is None:
            return None
        from hermes_core.sessions.lineage import ancestry

        chain = ancestry(self.store, self.session_id, user_id=self.info.user_id)
        return ArchiveRefs.of(seqs, depth=max(0, len(chain) - 1))

    def _refresh_system_prompt(self, forms: list[Message]) -> list[Message]:
        """A compaction rewrote the transcript (the prompt cache is gone anyway): the system
        prompt we made gets a fresh memory snapshot."""
        first = forms[0] if forms else None
        if (
            first is None
            or self._base is None
            or first.get("role") != "system"
            or first.get("content") != self._system_prompt
        ):
            return forms
        self.state.blocks = self._compose_blocks()
        fresh = joined(self._base, self.state.blocks)
        if fresh == self._system_prompt:
            return forms
        self._system_prompt = fresh
        return [{**first, "content": fresh}, *forms[1:]]

    def _commit(self, forms: list[Message], *, in_place: bool, stale_raises: bool = False) -> bool:
        """Make ``forms`` the active view, in the store first; False (view unchanged) when the
        store refused. ``stale_raises``: another process's write is the caller's to handle
        (raised as it is) instead of a reload and ``False``."""
        if self.store is None:
            self.view.replace(forms, [None] * len(forms))
            return True
        origins = self.view.origins(forms)
        base = self.requested_id[: MAX_ID_CHARS - 13]  # a child's id is a valid id too
        child = None if in_place else f"{base}.{uuid.uuid4().hex[:12]}"
        try:
            commit = self.store.commit_compaction(
                self.session_id,
                forms,
                origins,
                in_place=in_place,
                child_session_id=child,
                after_seq=self._last_seq,
            )
        except StaleSessionError:
            if stale_raises:
                raise  # the caller reloads and decides again
            self._reload()  # another process wrote: its view is the truth now; compact later
            return False
        except SessionError as exc:
            log.error("compaction not committed, transcript kept as it was: %s", exc)
            emit(self._listener, "store_error", self.session_id, {"error": str(exc)})
            return False
        self.view.replace(forms, list(commit.seqs))
        fresh = [s for s in commit.seqs if s is not None]
        if commit.session_id == self.session_id:
            self._last_seq = max([self._last_seq, *fresh])
        else:  # a child: its rows are numbered from 1
            self._last_seq = max(fresh, default=0)
            parent = self.session_id
            self.info = replace(self.info, session_id=commit.session_id, parent_session_id=parent)
            self.memory.switch(self.info, parent)
            emit(self._listener, "session_switched", parent, {"child": commit.session_id})
        emit(
            self._listener,
            "compaction_committed",
            self.session_id,
            {"messages": len(forms), "archived": commit.archived, "in_place": in_place},
        )
        return True

    def _count_compaction(self, result: CompressionResult) -> None:
        self._count(compaction_counters(result))

    def _remember_compaction(
        self,
        mark: tuple[str, list[int | None], int],
        result: CompressionResult,
        compressor: Mapping[str, Any],
    ) -> None:
        """Add the committed compaction to the history an undo reads (host/undo.py)."""
        session, before, last = mark
        if self.store is None or None in before or None in self.view.seqs:
            return  # without a store there is no archive to undo from
        into = self.session_id
        after = [s for s in self.view.seqs if s is not None and (into != session or s > last)]
        history = self.state.history
        history.add(
            CompactionRecord(
                n=history.next_number(),
                session=session,
                into=into,
                at=time.time(),
                before=to_runs(s for s in before if s is not None),
                inserted=to_runs(sorted(after)),
                tokens_before=result.tokens_before,
                tokens_after=result.tokens_after,
                summarizer=result.summarizer,
                compressor={k: v for k, v in compressor.items() if k in UNDO_SECTIONS},
                last=last,
            )
        )
