"""A person's skills audit lines and staged skill writes (reviewer's f4): the skills recorder
names the user at the top level; forget finds a line or record by the top-level user or the
provenance's; ``--anonymous`` takes only what names no user and is not the operator's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from forget_plant import home_bytes, where

from hermes_core.host import Hermes
from hermes_core.memory.home import memory_audit_log
from hermes_core.provenance.audit_log import AuditRecorder
from hermes_core.provenance.context import WriteContext, using
from hermes_core.provenance.record import Provenance
from hermes_core.provenance.taint import TaintIndex
from hermes_core.skills.changes import SkillRequest
from hermes_core.skills.home import open_library, pending_directory, skills_audit_log
from hermes_core.skills.pending import PendingSkillWrite, PendingSkillWrites


def _host(home: Path) -> Hermes:
    (home / "config.yaml").write_text(
        "memory:\n  per_user_memory: true\nskills:\n  write_approval: stage\n", encoding="utf-8"
    )
    return Hermes.from_config(home / "config.yaml", home=home)


def _write(hermes: Hermes, user: str | None, word: str, *, cli: bool = False) -> None:
    """A skill write staged through the real library: in a session of ``user``, or by the
    operator at the command line (no session)."""
    library = open_library(hermes.home, hermes.settings)
    skill = f"---\nname: s{word}\ndescription: Steps {word}\n---\nRun {word} first.\n"
    request = SkillRequest("create", f"s{word}", content=skill)
    if cli:
        result = library.write(request, origin="cli")
    else:
        with using(WriteContext(TaintIndex(), session_id=f"s-{user}", user_id=user)):
            result = library.write(request)
    assert result["success"], result


def _old_line(hermes: Hermes, user: str | None, word: str) -> None:
    """A line as the skills recorder wrote it before: the user only inside provenance."""
    recorder = AuditRecorder(skills_audit_log(hermes.home, hermes.settings), store="skills")
    provenance = Provenance("user", user_id=user, session_id=f"s-{user}", note=f"said {word}")
    recorder.record("staged", actor="model", provenance=provenance, contents=[f"do {word}"])


def _lines(home: Path) -> list[dict[str, Any]]:
    text = (home / "audit" / "skills.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_a_skills_audit_line_names_its_user_at_the_top_level(tmp_path: Path) -> None:
    with _host(tmp_path) as hermes:
        _write(hermes, "alice", "zqalicenew")
        _write(hermes, None, "zqanonnew")
        _write(hermes, None, "zqoperatornew", cli=True)
    words = ("zqalicenew", "zqanonnew", "zqoperatornew")
    users = {w: line["user_id"] for line in _lines(tmp_path) for w in words if w in line["content"]}
    assert users == {"zqalicenew": "alice", "zqanonnew": None, "zqoperatornew": None}


def test_forget_takes_the_users_skill_lines_and_staged_writes_by_either_user_id(
    tmp_path: Path,
) -> None:
    with _host(tmp_path) as hermes:
        for user in ("alice", "bob"):
            _write(hermes, user, f"zq{user}new")
            _old_line(hermes, user, f"zq{user}old")
        _write(hermes, None, "zqanonnew")
        _old_line(hermes, None, "zqanonold")
        _write(hermes, None, "zqoperatornew", cli=True)
        tokens = ("new", "old")
        report = hermes.forget_user("alice")
        after = home_bytes(tmp_path)
        assert [t for t in tokens if where(after, f"zqalice{t}")] == []
        assert report.deleted["audit lines"] == 2 and report.deleted["staged skill writes"] == 1
        assert report.complete, report.not_deleted
        kept = ("zqbobnew", "zqbobold", "zqanonnew", "zqanonold", "zqoperatornew")
        assert [t for t in kept if not where(after, t)] == []

        anonymous = hermes.forget_user(None)
        after = home_bytes(tmp_path)
    assert where(after, "zqanonnew") == [] and where(after, "zqanonold") == []
    assert anonymous.deleted["audit lines"] == 2
    assert anonymous.deleted["staged skill writes"] == 1
    # bob's lines (named only in provenance, or at the top) and the operator's stay
    for token in ("zqbobnew", "zqbobold", "zqoperatornew"):
        assert any("audit" in p for p in where(after, token)), token
    assert any("pending" in p for p in where(after, "zqoperatornew"))
    assert anonymous.complete, anonymous.not_deleted


def test_a_staged_write_whose_user_cannot_be_told_is_kept_and_reported(tmp_path: Path) -> None:
    with _host(tmp_path) as hermes:
        pending = PendingSkillWrites(pending_directory(tmp_path))
        old = PendingSkillWrite(  # from before provenance was kept
            id=pending.new_id(),
            action="create",
            name="s",
            origin="assistant_tool",
            created=0.0,
            content="steps zqwhosewords",
        )
        pending.add(old)
        report = hermes.forget_user("alice")
    assert where(home_bytes(tmp_path), "zqwhosewords")
    assert not report.complete
    [problem] = report.not_deleted
    assert old.id in problem and "cannot be told" in problem


def test_the_anonymous_principal_keeps_the_operators_shared_memory_lines(tmp_path: Path) -> None:
    with _host(tmp_path) as hermes:
        recorder = AuditRecorder(memory_audit_log(tmp_path, hermes.settings), store="memory")
        recorder.record("landed", actor="cli:op", contents=["zqopshared"], target="memory")
        recorder.record("landed", actor="cli:op", contents=["zqopprofile"], target="user")
        recorder.record("landed", actor="model", contents=["zqanonshared"], target="memory")
        report = hermes.forget_user(None)
    after = home_bytes(tmp_path)
    assert where(after, "zqopshared") and report.deleted["audit lines"] == 2
    assert not where(after, "zqopprofile") and not where(after, "zqanonshared")
