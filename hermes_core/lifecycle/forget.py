"""Forget a person: delete everything the home keeps about one user id, and say what was left.

Why one function over parts rather than a method of the host: the host only hands over its
home, plugins, session store and memory documents (``Hermes.forget_user``), so this floor
never imports the host. The order matters:

1. read who wrote which shared ``MEMORY.md`` entries (the audit lines are deleted later);
2. delete the session rows (one transaction), then scrub the database files: in the store in
   use and in every other session store the home holds (:mod:`.forget_stores`: a store the
   configuration no longer names still has the person's rows); backups are reported;
3. delete the person's memory files and copies, staged memory and skill writes
   (:mod:`.forget_skills`) and audit lines (whose a line is: ``forget_files.owns_line``);
4. ask every plugin that implements ``memory_forget`` (external providers, the
   ``postgres`` memory backend, ``threat_judge``), each on its own, so one failure hides
   nothing.

The report counts what was deleted per kind, lists what could not be (a provider without the
hook, a plugin that failed, a database another process kept from being scrubbed) and the
shared entries the person wrote, which are kept (other users see them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.errors import InvalidArgument
from hermes_core.lifecycle import forget_files, forget_skills, forget_stores
from hermes_core.memory.layout import describe
from hermes_core.redact import redact

if TYPE_CHECKING:
    from hermes_core.memory.documents import MemoryDocuments
    from hermes_core.plugins.manager import PluginHost
    from hermes_core.sessions.store import SessionStore

__all__ = ["ForgetReport", "check_user_id", "forget_user"]

HOOK = "memory_forget"


@dataclass
class ForgetReport:
    """What ``forget`` did for one user id."""

    user_id: str | None
    #: kind -> rows, files or lines deleted by the core (sessions, messages, memory files...)
    deleted: dict[str, int] = field(default_factory=dict)
    #: plugin -> its own counts per kind
    providers: dict[str, dict[str, int]] = field(default_factory=dict)
    #: what could not be deleted or scrubbed, one sentence each
    not_deleted: list[str] = field(default_factory=list)
    #: entries of the shared MEMORY.md the person wrote: kept, listed for the operator
    shared_entries: list[dict[str, str]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True when nothing was left that this home could have deleted."""
        return not self.not_deleted

    def to_json(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "complete": self.complete,
            "deleted": dict(self.deleted),
            "providers": {name: dict(counts) for name, counts in self.providers.items()},
            "not_deleted": list(self.not_deleted),
            "shared_entries_kept": list(self.shared_entries),
        }


def check_user_id(user_id: object) -> str | None:
    """``user_id`` when it names a principal: a non-empty string, or ``None`` for the
    anonymous one; InvalidArgument otherwise (before anything is deleted)."""
    if user_id is None:
        return None
    if not isinstance(user_id, str) or not user_id:
        raise InvalidArgument(
            f"user_id must be a non-empty string, or None for the anonymous principal of a "
            f"single-user home; got {describe(user_id)} (nothing was deleted)"
        )
    return user_id


def forget_user(
    user_id: str | None,
    *,
    home: Path,
    plugins: PluginHost,
    store: SessionStore | None,
    documents: MemoryDocuments | None,
    vacuum_full: bool = False,
    state_db: Path | None = None,
) -> ForgetReport:
    """Delete ``user_id`` from ``home``, its session stores, its memory and its plugins.
    ``state_db`` is the configured SQLite file (``sessions.db_path``), looked at even when
    it lies outside the home or the store in use is another."""
    user = check_user_id(user_id)
    report = ForgetReport(user)
    _note_shared(report, home, documents)
    _forget_sessions(report, store, vacuum_full)
    _forget_state_files(report, home, store, state_db, vacuum_full)
    report.deleted.update(forget_files.forget_memory_files(home, user))
    report.deleted.update(forget_files.forget_staged_records(home, user))
    counts, problems = forget_skills.forget_staged_skill_writes(home, user)
    report.deleted.update(counts)
    report.not_deleted.extend(problems)
    counts, problems = forget_files.forget_audit_lines(home, user)
    report.deleted.update(counts)
    report.not_deleted.extend(problems)
    _ask_plugins(report, plugins)
    return report


def _note_shared(report: ForgetReport, home: Path, documents: MemoryDocuments | None) -> None:
    lines = forget_files.audit_lines(home)
    table = getattr(documents, "audit_log", None)
    if table is not None:
        try:
            lines.extend(table.read()[0])
        except Exception as exc:  # noqa: BLE001 - the report says so; the deletes still run
            report.not_deleted.append(
                f"the memory audit table could not be read ({type(exc).__name__}), so "
                "shared MEMORY.md entries this user wrote cannot be listed"
            )
    shas = forget_files.written_shared(lines, report.user_id)
    if documents is None or not shas:
        return
    try:
        text = documents.read("memory", None)
    except Exception as exc:  # noqa: BLE001
        report.not_deleted.append(
            f"the shared MEMORY.md could not be read ({type(exc).__name__}), so the "
            f"{len(shas)} entries this user wrote there cannot be listed"
        )
        return
    report.shared_entries = forget_files.shared_entries_by(text, shas)


def _forget_sessions(report: ForgetReport, store: SessionStore | None, full: bool) -> None:
    if store is None:
        return
    forget = getattr(store, "forget_user", None)
    scrub = getattr(store, "scrub", None)
    if forget is None or scrub is None:
        report.not_deleted.append(
            f"the session store {type(store).__name__} cannot forget a user (it has no "
            "forget_user/scrub): the user's sessions were not deleted"
        )
        return
    for kind, count in forget(report.user_id).items():
        report.deleted[kind] = report.deleted.get(kind, 0) + count
    report.not_deleted.extend(scrub(full=full))
    refresh = getattr(store, "refresh_statistics", None)
    if refresh is not None:  # the planner's statistics after a large delete (issue 28 item 6)
        refresh()


def _forget_state_files(
    report: ForgetReport,
    home: Path,
    store: SessionStore | None,
    configured: Path | None,
    full: bool,
) -> None:
    """The person in every other session store of the home; backups holding them named."""
    import sqlite3

    from hermes_core.errors import SessionError
    from hermes_core.sessions.sqlite.store import SQLiteSessionStore

    in_use = getattr(store, "path", None)
    own = Path(in_use).resolve() if isinstance(in_use, (str, Path)) else None
    for found in forget_stores.state_files(home, configured):
        if found.path.resolve() == own:
            continue  # done above, through the store in use
        if found.kind == "backup":
            held = forget_stores.backup_holds(found.path, report.user_id)
            if held is not False:
                what = "holds" if held else "could not be read, so it may hold"
                report.not_deleted.append(
                    f"{found.path}: a backup of the session store (`sessions backup`) {what} "
                    "this user's sessions; forget does not rewrite backups: delete it, or take "
                    "a new backup now and delete the old one"
                )
            continue
        try:
            other = SQLiteSessionStore(found.path)
            try:
                _forget_sessions(report, other, full)
            finally:
                other.close()
        except (SessionError, OSError, sqlite3.Error) as exc:
            report.not_deleted.append(
                f"{found.path}: a session store that could not be opened or written "
                f"({redact(str(exc))}); the user's sessions in it may remain; fix it and run "
                "forget again"
            )


def _ask_plugins(report: ForgetReport, plugins: PluginHost) -> None:
    answered = plugins.implementations(HOOK)
    for name in answered:
        seen = len(plugins.call_errors)
        ok, value = plugins.call_one(HOOK, name, user_id=report.user_id)
        if not ok:
            errors = [e.error for e in plugins.call_errors[seen:] if e.plugin == name]
            why = redact(str(errors[-1])) if errors else "it raised"
            report.not_deleted.append(f"plugin '{name}' could not forget the user: {why}")
            report.providers[name] = {}
        elif value is not None:
            report.providers[name] = {str(k): int(v) for k, v in dict(value).items()}
    provider = plugins.external_provider()
    if provider is not None and provider not in answered:
        report.not_deleted.append(
            f"memory provider '{provider}' has no memory_forget hook: what it keeps about "
            "the user was not deleted; delete it in the service itself"
        )
