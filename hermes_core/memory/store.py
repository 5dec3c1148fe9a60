"""The bounded memory: add, replace, remove and batch writes to MEMORY.md and USER.md.

Why it looks like this: every operation answers a model (or a person) with a short result it
can act on, and never raises for anything the caller sent; every write is decided on the text
as it is now, under the storage's concurrency control (the file lock, or PostgreSQL's version
column), so that concurrent writers all land; a text edited by other means is never
rewritten wholesale (drift), and a text that cannot be read is never treated as empty. Where
the text lives is :class:`~hermes_core.memory.documents.MemoryDocuments`' business: files
under the home by default.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_core.errors import MemoryStoreError
from hermes_core.memory.dated import block_view, dated_entries
from hermes_core.memory.dates import EntryDates
from hermes_core.memory.documents import (
    Claim,
    DatedDocuments,
    Decision,
    MemoryDocuments,
    scope_of,
)
from hermes_core.memory.entries import (
    TARGET_FILES,
    entry_problem,
    normal_content,
    parse_entries,
    size_of,
    usage_text,
)
from hermes_core.memory.file_documents import FileMemoryDocuments
from hermes_core.memory.layout import (
    describe,
    safe_user_id,
    shared_target,
    validate_target,
)
from hermes_core.memory.plan import Outcome, Plan, failure, plan_writes
from hermes_core.memory.shown_dates import lineage, report_appended, with_dates
from hermes_core.memory.snapshot import Scanner, render_block
from hermes_core.memory.store_checks import (
    blocked_message,
    check_operation,
    numbered,
    refusal,
    threat,
)

__all__ = ["MemoryStore", "Result", "blocked_message"]

log = logging.getLogger("hermes_context.memory")
Result = dict[str, Any]


def _default_scanner() -> Scanner:
    from hermes_core.threats import scan

    return lambda text: scan(text, "strict")


class MemoryStore:
    """MEMORY.md and USER.md of one user: the files under ``directory`` (normally
    ``$HERMES_HOME/memories``), or whatever :class:`MemoryDocuments` it is given instead
    (the ``memory_documents`` hook's answer: rows in PostgreSQL, say).

    ``scanner`` takes text and returns findings (default: the built-in strict scanner);
    ``user_id`` selects ``users/<id>/USER.md`` (and ``MEMORY.md`` with ``per_user_memory``);
    ``memory_enabled`` / ``user_enabled`` are the seed's gates: a disabled target is neither
    shown in the snapshot nor writable.
    """

    def __init__(
        self,
        directory: str | Path | MemoryDocuments,
        *,
        memory_char_limit: int = 2200,
        user_char_limit: int = 1375,
        scanner: Scanner | None = None,
        user_id: str | None = None,
        per_user_memory: bool = False,
        memory_enabled: bool = True,
        user_enabled: bool = True,
    ) -> None:
        if isinstance(directory, (str, Path)):
            directory = FileMemoryDocuments(directory)
        self.documents: MemoryDocuments = directory
        #: the memory directory when the documents are files (None otherwise)
        self.directory: Path | None = (
            directory.directory if isinstance(directory, FileMemoryDocuments) else None
        )
        self.limits = {"memory": int(memory_char_limit), "user": int(user_char_limit)}
        self.scan: Scanner = scanner if scanner is not None else _default_scanner()
        if user_id is not None:
            safe_user_id(user_id)  # a bad id fails here, not in the middle of a write
        self.user_id = user_id
        self.per_user_memory = per_user_memory
        self.enabled = {"memory": memory_enabled, "user": user_enabled}

    # --- reading ----------------------------------------------------------------------------

    def scope(self, target: str) -> str | None:
        """Whose text ``target`` is for this store: the user's, or None (the shared one)."""
        if error := validate_target(target):
            raise ValueError(error)
        return scope_of(target, self.user_id, per_user_memory=self.per_user_memory)

    def where(self, target: str) -> str:
        """Where the text of ``target`` is kept, for a person (a path, or a row's key)."""
        return self.documents.where(target, self.scope(target))

    def path(self, target: str) -> Path:
        """The file of ``target`` for this store's user (file documents only)."""
        return self._files().path(target, self.scope(target))

    def real_path(self, target: str) -> Path:
        """Where the file of ``target`` really is (links followed); raises
        :class:`MemoryStoreError` when that is outside the home (file documents only)."""
        return self._files().real_path(target, self.scope(target))

    def _files(self) -> FileMemoryDocuments:
        if not isinstance(self.documents, FileMemoryDocuments):
            raise MemoryStoreError(
                f"this memory is kept in {self.documents.kind}, not in files: use where()"
            )
        return self.documents

    def shared(self, target: str) -> bool:
        """Whether ``target``'s text is shared with every other user of the home
        (``MEMORY.md`` of a store with a user id, unless ``per_user_memory``)."""
        return shared_target(target, self.user_id, per_user_memory=self.per_user_memory)

    def raw(self, target: str) -> str:
        """The text as it is stored ("" when missing); raises when unreadable (or reached
        through a link out of the home)."""
        return self.documents.read(target, self.scope(target)) or ""

    def entries(self, target: str) -> list[str]:
        """The entries of ``target`` (raw, unscanned; text appended by hand after the store's
        own is an entry of its own); raises :class:`MemoryStoreError` when the text exists
        but cannot be read."""
        scope = self.scope(target)
        return parse_entries(block_view(self.documents, target, scope, self.raw(target)).text or "")

    def dated(self, target: str) -> list[tuple[str, EntryDates | None]]:
        """Each entry of ``target`` with its dates (None: not dated yet, as an entry written
        by hand until the next write; always None for documents that keep no dates)."""
        return dated_entries(self.documents, target, self.scope(target))

    def usage(self, target: str) -> str:
        """``63% — 1,386/2,200 chars``."""
        return usage_text(size_of(self.entries(target)), self.limits[target])

    def block(self, target: str) -> str:
        """The prompt block of one target ("" when empty or disabled)."""
        if not self.enabled[target]:
            return ""
        return render_block(target, self.entries(target), self.limits[target], self.scan)

    def snapshot(self) -> str:
        """Both blocks as the system prompt shows them, entries rescanned ("" when empty).

        A host freezes this at session start; writes made later are stored at once but
        show up in the prompt only in the next session (the prompt-cache rule).
        """
        blocks = []
        for target in ("memory", "user"):
            try:
                blocks.append(self.block(target))
            except MemoryStoreError as exc:  # one unreadable text must not blank the other
                log.warning("memory block left out of the prompt: %s", exc)
        return "\n\n".join(b for b in blocks if b)

    # --- writing ----------------------------------------------------------------------------

    def add(self, target: str, content: str) -> Result:
        """Append an entry (an exact duplicate succeeds without writing)."""
        return self._write(target, [{"action": "add", "content": content}], batch=False)

    def replace(self, target: str, old_text: str, content: str) -> Result:
        """Replace the whole entry ``old_text`` designates (exact entry first, else the unique
        entry containing it); the result carries the replaced text (as the prompt shows it)."""
        op = {"action": "replace", "content": content, "old_text": old_text}
        return self._write(target, [op], batch=False)

    def remove(self, target: str, old_text: str) -> Result:
        """Remove the entry ``old_text`` designates; the result carries the removed text."""
        return self._write(target, [{"action": "remove", "old_text": old_text}], batch=False)

    def batch(
        self,
        target: str,
        operations: Sequence[Mapping[str, Any]],
        *,
        exact: bool = False,
        claim: Claim | None = None,
    ) -> Result:
        """Apply ``[{action, content?, old_text?}, ...]`` all or nothing: every content is
        scanned first, and only the final size is checked. ``exact``: each ``old_text`` must
        equal an entry (how an approved write is re-applied); ``claim``: the staged record
        this applies, consumed with the write (refused, ``gone``, once it is not staged)."""
        if not isinstance(operations, Sequence) or isinstance(operations, str) or not operations:
            return failure("invalid", "operations must be a non-empty list of {action, ...}.")
        return self._write(target, operations, batch=True, exact=exact, claim=claim)

    def preview(
        self, target: str, operations: Sequence[Mapping[str, Any]], *, batch: bool
    ) -> Outcome:
        """What these writes would do now, without the concurrency control and without
        writing (used to judge a write before staging it)."""
        ops = self._prepared(target, operations)
        if isinstance(ops, dict):
            return Outcome(ops)
        try:
            text = self.documents.read(target, self.scope(target))
            text = block_view(self.documents, target, self.scope(target), text).text
        except MemoryStoreError as exc:
            return Outcome(refusal(exc))
        return plan_writes(self._plan(target), text, parse_entries(text or ""), ops, batch=batch)

    def check(self, target: str, operations: Sequence[Mapping[str, Any]]) -> Result | None:
        """The refusal these writes would get before the text is touched (target, switched
        off, arguments, threat scan of every content), or None."""
        prepared = self._prepared(target, operations)
        return prepared if isinstance(prepared, dict) else None

    # --- internals --------------------------------------------------------------------------

    def _plan(self, target: str, exact: bool = False) -> Plan:
        return Plan(target, self.limits[target], self.scan, exact)

    def _prepared(
        self, target: str, operations: Sequence[Mapping[str, Any]]
    ) -> list[dict[str, Any]] | Result:
        """The operations checked, with normalised content, or the refusal."""
        if error := validate_target(target):
            return failure("invalid", error)
        if not self.enabled[target]:
            setting = "memory_enabled" if target == "memory" else "user_profile_enabled"
            return failure(
                "disabled", f"the {target} store is switched off (memory.{setting}: false)."
            )
        many = len(operations) > 1
        ops: list[dict[str, Any]] = []
        for n, op in enumerate(operations, 1):
            if error := check_operation(op):
                return failure("invalid", numbered(n, many) + error)
            ops.append(dict(op))
        for n, op in enumerate(ops, 1):
            if op["action"] == "remove":
                continue
            if refused := self._refuse_content(op["content"]):
                refused["error"] = numbered(n, many) + refused["error"]
                return refused
            op["content"] = normal_content(op["content"])
        return ops

    def _write(
        self,
        target: str,
        operations: Sequence[Mapping[str, Any]],
        *,
        batch: bool,
        exact: bool = False,
        claim: Claim | None = None,
    ) -> Result:
        """Check and scan first; then let the documents read, decide and store under their
        concurrency control (the decision may run again if another writer got there first)."""
        ops = self._prepared(target, operations)
        if isinstance(ops, dict):
            return ops
        plan = self._plan(target, exact)

        def decide(text: str | None) -> Decision[Result]:
            entries = parse_entries(text or "")
            outcome = plan_writes(plan, text, entries, ops, batch=batch)
            result = outcome.result
            renamed, used = lineage(ops, outcome.selected, entries)
            return Decision(
                result,
                outcome.new_text,
                keep_copy=result.get("reason") == "drift",
                succeeded=bool(result.get("success")),
                renamed=renamed,
                used=used,
            )

        try:
            updated = self.documents.update(target, self.scope(target), decide, claim=claim)
        except MemoryStoreError as exc:
            return refusal(exc)
        except OSError as exc:
            return failure(
                "io",
                f"could not write {self.where(target)}: {exc.strerror or exc}. "
                "Nothing was changed.",
            )
        if updated is None:
            assert claim is not None
            return failure(
                "gone",
                f"pending write {claim.record.id} was applied, rejected or changed meanwhile "
                "(by another process); nothing was changed. See `hermes-context memory "
                "pending`.",
            )
        result = updated.value
        if updated.copy_note:
            result["error"] += updated.copy_note
        if updated.appended:
            report_appended(result, TARGET_FILES[target], updated)
        elif updated.appended_note and result.get("success"):  # an entry edited by hand changed
            result["message"] = (
                f"{result.get('message', '')} It had been edited by hand, so the text as it "
                f"was is kept:{updated.appended_note}"
            )
        if "entries" in result and isinstance(self.documents, DatedDocuments):
            with_dates(result, self.dated(target))
        return result

    def reset(self, target: str) -> Result:
        """Delete the text of ``target`` after keeping a whole copy; refused (nothing
        deleted) when the copy cannot be made, or when the text is shared with other users
        (``MEMORY.md`` of a user's store without ``per_user_memory``). A symbolic link (inside
        the home) is removed itself; what it points to is left alone."""
        if error := validate_target(target):
            return failure("invalid", error)
        where = self.where(target)
        if self.shared(target):
            return failure(
                "shared",
                f"{TARGET_FILES[target]} is shared by every user of this home "
                "(memory.per_user_memory is false), so it is not reset for user "
                f"{describe(self.user_id)}: other users' entries are in it. Nothing was "
                "deleted. Remove single entries instead, or reset it for everyone (without a "
                "user id).",
            )
        try:
            removed = self.documents.reset(target, self.scope(target))
        except MemoryStoreError as exc:
            return refusal(exc)
        except OSError as exc:
            return failure(
                "io",
                f"could not reset {where}: {exc.strerror or exc}. Nothing was deleted (a reset "
                "deletes only once its copy is complete); free some space and try again.",
            )
        if removed is None:
            return {"success": True, "done": True, "message": f"{where} does not exist."}
        kept = f" (copy: {removed.copy_label})" if removed.copy_label else ""
        return {
            "success": True,
            "done": True,
            "message": f"deleted {removed.where}{kept}",
            "copy": removed.copy,
        }

    def _refuse_content(self, content: object) -> Result | None:
        if not isinstance(content, str):
            return failure("invalid", "content must be a string.")
        text = normal_content(content)
        if not text:
            return failure("invalid", "content is empty: write the fact to remember.")
        if problem := entry_problem(text):
            return failure("invalid", problem)
        findings = list(self.scan(text))
        if findings:
            return threat(findings)
        return None
