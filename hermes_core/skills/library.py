"""The skills library of one home: list, view and index skills; every write validated,
threat-scanned before it reaches the disk, approved (or staged, or refused), then applied
atomically under the library's lock.

Why this order: a refused write must leave nothing behind, not even for a moment (a reader
in another process could load a poisoned SKILL.md between a write and its rollback, as a
scan-after-write design allows). So the write is planned and its new text scanned first;
under the lock it is planned again against the disk as it is then (another process may have
changed it), scanned again if its text differs, and only then written (temp file + rename).
Readers never lock and never see half a file. ``memory.untrusted_writes`` is applied after
the scan: a write whose words came from untrusted text the model read is staged, refused or
let through with its provenance (:mod:`hermes_core.provenance`).
"""

from __future__ import annotations

import builtins
import dataclasses
import logging
import sys
import time
from pathlib import Path

from hermes_core.provenance import Provenance, assess, audit, decide, refusal_text
from hermes_core.provenance.audit_log import AuditRecorder, actor_of, cli_actor
from hermes_core.skills.catalog import (
    Problem,
    locate,
    locations,
    read_skill,
)
from hermes_core.skills.changes import (
    Change,
    Result,
    SkillRequest,
    failure,
    plan,
    request_problem,
)
from hermes_core.skills.dates import SkillDates
from hermes_core.skills.execute import execute
from hermes_core.skills.files import SkillError, locked, real_root
from hermes_core.skills.frontmatter import ParsedSkill, SkillMeta
from hermes_core.skills.index import one_line, render_index
from hermes_core.skills.layout import (
    MAX_SKILL_CHARS,
    without_invisible,
)
from hermes_core.skills.pending import (
    APPROVAL_MODES,
    ORIGINS,
    PendingSkillWrites,
    must_stage,
    record_provenance,
    request_detail,
    request_texts,
    stage_reason,
)
from hermes_core.skills.screening import Scan, blocked_message, default_scan, findings
from hermes_core.skills.shortcuts import SkillShortcuts
from hermes_core.skills.viewing import SkillViews

__all__ = ["SkillLibrary"]

log = logging.getLogger("hermes_context.skills")


class SkillLibrary(SkillViews, SkillShortcuts):
    """The skills under ``root`` (normally ``$HERMES_HOME/skills``).

    ``scan`` takes text and returns findings (default: the built-in strict scanner; the host
    passes every plugin's). ``approval`` is ``skills.write_approval``: ``allow``, ``stage``
    or ``block``; staged writes go to ``pending_dir`` (default: ``pending/skills`` next to
    ``root``). ``untrusted`` is ``memory.untrusted_writes`` (one key for memory and skills).
    """

    def __init__(
        self,
        root: str | Path,
        *,
        scan: Scan | None = None,
        approval: str = "allow",
        pending_dir: str | Path | None = None,
        untrusted: str = "stage",
        audit_log: AuditRecorder | None = None,
    ) -> None:
        if approval not in APPROVAL_MODES:
            raise ValueError(
                f"skills.write_approval must be allow, stage or block, got {approval!r}"
            )
        self.root = Path(root).expanduser()
        self.scan: Scan = scan if scan is not None else default_scan()
        self.approval = approval
        decide(untrusted, False)  # ValueError for a policy that is not one
        self.untrusted = untrusted
        pending = Path(pending_dir) if pending_dir is not None else None
        self.pending = PendingSkillWrites(pending or self.root.parent / "pending" / "skills")
        self.audit_log = audit_log
        self.dates = SkillDates(self.root)

    def _audit(
        self,
        event: str,
        request: SkillRequest | None,
        *,
        actor: str,
        provenance: Provenance | None = None,
        pending_id: str | None = None,
        reason: str | None = None,
        logged_as: str | None = None,
        **extra: str | None,
    ) -> None:
        """Tell the process-wide sinks, then this home's own audit log, about one decision."""
        plain = request_detail(request) if request is not None else {}
        why = {"reason": reason} if reason else {}
        audit(event, store="skills", provenance=provenance, pending_id=pending_id, **plain, **why)
        if self.audit_log is not None:
            texts = (request.content, request.file_content, request.new_string) if request else ()
            self.audit_log.record(
                logged_as or event,
                actor=actor,
                provenance=provenance,
                pending_id=pending_id,
                contents=[t for t in texts if isinstance(t, str)],
                shared=True,
                **plain,
                **why,
                **extra,
            )

    # --- reading ----------------------------------------------------------------------------

    def real_root(self) -> Path:
        return real_root(self.root)

    def scan_all(self) -> tuple[builtins.list[SkillMeta], builtins.list[Problem]]:
        """Every valid skill, sorted by path, and every skill left out with the reason."""
        root = self.real_root()
        found, problems = locations(root)
        skills: builtins.list[SkillMeta] = []
        for location in found:
            parsed = read_skill(location)
            if isinstance(parsed, str):
                problems.append(Problem(location.relative, parsed))
                continue
            skills.append(
                dataclasses.replace(parsed.meta, category=location.category, path=location.relative)
            )
        problems.sort(key=lambda p: p.path)
        return skills, problems

    def list(self) -> builtins.list[SkillMeta]:
        """Every valid skill, sorted by path (see :meth:`scan_all` for the ones left out)."""
        return self.scan_all()[0]

    def read(self, name: str) -> tuple[str, str, ParsedSkill | str]:
        """``(path, text, parsed or what is wrong)`` of one skill's SKILL.md, unscanned (for a
        person at a terminal); KeyError when there is no such skill."""
        root = self.real_root()
        location = locate(root, name)
        if isinstance(location, str):
            raise KeyError(location)
        text = self._read_text(location.skill_md, MAX_SKILL_CHARS * 4)
        parsed = read_skill(location)
        if isinstance(parsed, ParsedSkill):
            meta = dataclasses.replace(
                parsed.meta, category=location.category, path=location.relative
            )
            parsed = dataclasses.replace(parsed, meta=meta)
        return location.relative, text, parsed

    def index(self, platform: str = sys.platform) -> str:
        """The system-prompt block (see :func:`render_index`); "" when there are no skills
        or the folder cannot be read. A host freezes it at session start."""
        try:
            skills, problems = self.scan_all()
        except SkillError as exc:
            log.warning("the skills index is empty: %s", exc)
            return ""
        for problem in problems:
            log.warning("skill %s left out of the index: %s", problem.path, problem.reason)
        return render_index(skills, self.safe_description, platform)

    def safe_description(self, skill: SkillMeta) -> str:
        """The description on one line, shortened, or a note when it matches a threat
        pattern (it would otherwise reach every system prompt). The text is scanned as it is
        and as it reads once invisible characters are removed (``Ig<ZWSP>nore``), since the
        index shows the latter."""
        shown = without_invisible(skill.description)
        texts = [skill.description] if shown == skill.description else [skill.description, shown]
        found = findings(self.scan, texts)
        if found:
            ids = ", ".join(dict.fromkeys(f.pattern_id for f in found))
            return f"[description withheld: it matches threat pattern(s) {ids}]"
        return one_line(shown)

    # --- writing ----------------------------------------------------------------------------

    def write(self, request: SkillRequest, origin: str = "assistant_tool") -> Result:
        """Apply, stage or refuse one write; never raises for what the caller sent."""
        if origin not in ORIGINS:
            raise ValueError(f"origin must be one of {', '.join(ORIGINS)}, got {origin!r}")
        if self.approval == "block":
            self._audit(
                "refused", request, actor=actor_of(origin), reason="read_only", origin=origin
            )
            return failure(
                "read_only",
                "Skills are read-only here (skills.write_approval: block); nothing was saved. "
                "Go on without saving the skill.",
            )
        if problem := request_problem(request):
            return failure("invalid", problem)
        try:
            change = plan(self.real_root(), request)
        except SkillError as exc:
            return failure("unsafe_path", str(exc))
        if isinstance(change, dict):
            return change
        judged = assess(
            request_texts(request),
            origin=origin,
            policy=self.untrusted,
            now=time.time(),
            target=f"skill:{request.name}",
            files=change.writes,
        )
        if refusal := self._screen(change.texts):
            self._audit(
                "refused",
                request,
                actor=actor_of(origin),
                provenance=judged.provenance.with_decision("refused"),
                reason="threat",
                origin=origin,
            )
            return refusal
        if judged.action == "refuse":
            refused = judged.provenance.with_decision("refused")
            self._audit(
                "refused", request, actor=actor_of(origin), provenance=refused, origin=origin
            )
            return failure("untrusted", refusal_text(refused, "skill write"))
        if judged.tainted or must_stage(
            self.approval, origin, request.action, new_file=change.new_file
        ):
            return self._stage(request, change, origin, judged.provenance, judged.tainted)
        return self._apply(request, change.texts, origin=origin, provenance=judged.provenance)

    def _screen(self, texts: builtins.list[str]) -> Result | None:
        found = findings(self.scan, texts)
        if not found:
            return None
        ids = list(dict.fromkeys(f.pattern_id for f in found))
        return failure("threat", blocked_message(ids), patterns=ids)

    def _apply(
        self,
        request: SkillRequest,
        screened: builtins.list[str],
        *,
        origin: str = "cli",
        expected_base: str | None = None,
        exact: bool = False,
        provenance: Provenance | None = None,
    ) -> Result:
        """Plan again under the lock, scan again if the text differs, then write (or stage,
        when the file a background review would add has appeared meanwhile)."""
        try:
            root = self.real_root()
            with locked(root):
                change = plan(root, request)
                if isinstance(change, dict):
                    return change
                if exact and change.base != expected_base:
                    return failure(
                        "changed",
                        "the skill changed after this write was staged; reject it and stage "
                        "a new one against the current text.",
                    )
                if change.texts != screened and (refusal := self._screen(change.texts)):
                    return refusal
                if not exact and must_stage(
                    self.approval, origin, request.action, new_file=change.new_file
                ):
                    return self._stage(request, change, origin, provenance, False)
                execute(root, change)
                path = change.result.get("path")
                self.dates.changed(
                    path if isinstance(path, str) else request.name,
                    deleted=request.action == "delete",
                )
            if not exact:
                landed = None if provenance is None else provenance.with_decision("landed")
                self._audit(
                    "landed",
                    request,
                    actor=actor_of(origin),
                    provenance=landed,
                    origin=origin,
                    logged_as="removed" if request.action == "delete" else None,
                )
            return change.result
        except SkillError as exc:
            return failure("unsafe_path", str(exc))
        except OSError as exc:
            return failure(
                "io", f"could not write the skill: {exc.strerror or exc}. Nothing was changed."
            )

    # --- approval ---------------------------------------------------------------------------

    def _stage(
        self,
        request: SkillRequest,
        change: Change,
        origin: str,
        provenance: Provenance | None,
        untrusted: bool,
    ) -> Result:
        staged = None if provenance is None else provenance.with_decision("staged")
        record = self.pending.new_record(
            request, origin, change.base, change.result.get("path"), staged
        )
        try:
            self.pending.add(record)
        except OSError as exc:
            return failure("io", f"could not stage the write: {exc.strerror or exc}.")
        self._audit(
            "staged",
            request,
            actor=actor_of(origin),
            provenance=staged,
            pending_id=record.id,
            origin=origin,
        )
        why = stage_reason(self.approval, staged, untrusted=untrusted)
        return {
            "success": True,
            "done": True,
            "staged": True,
            "pending_id": record.id,
            "message": f"Staged for review by a person ({why}); the skill is not changed yet.",
        }

    def approve(self, pending_id: str, *, actor: str | None = None) -> Result:
        """Apply a staged write (validated and scanned again) if the file it was judged
        against is unchanged; the record is removed once applied. KeyError when it is
        missing or unreadable."""
        record = self.pending.get(pending_id)
        request = record.request()
        if problem := request_problem(request):
            return failure("invalid", f"pending skill write {pending_id}: {problem}")
        result = self._apply(request, [], expected_base=record.base, exact=True)
        if result.get("success"):
            self.pending.delete(record.id)
            result["message"] = f"Pending skill write {record.id} applied: {result['message']}"
            who = actor or cli_actor()
            self._audit(
                "approved",
                request,
                actor=who,
                provenance=record_provenance(record),
                pending_id=record.id,
                approved_by=who,
            )
        else:
            result["error"] = f"pending skill write {record.id}: {result['error']}"
        return result

    def reject(self, pending_id: str, *, actor: str | None = None) -> Result:
        """Drop a staged write unapplied; KeyError when there is none."""
        try:
            provenance = record_provenance(self.pending.get(pending_id))
        except KeyError:
            provenance = None  # an unreadable record can be rejected too
        if not self.pending.delete(pending_id):
            raise KeyError(f"no pending skill write {pending_id} (see `skills pending`)")
        who = actor or cli_actor()
        self._audit(
            "rejected",
            None,
            actor=who,
            provenance=provenance,
            pending_id=pending_id,
            rejected_by=who,
        )
        return {
            "success": True,
            "done": True,
            "message": f"Pending skill write {pending_id} rejected.",
        }
