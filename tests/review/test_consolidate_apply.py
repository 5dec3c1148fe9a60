"""Running a consolidation through the real writers (issue 28 item 2): from the background
review every change waits for a person with its provenance, from the command line it follows
the approval mode, a dry run changes nothing, and a plan is never staged twice."""

from __future__ import annotations

import json
from pathlib import Path

from review_support import real_memory

from hermes_core.host.consolidate import consolidate_memory, consolidate_skills
from hermes_core.skills import SkillLibrary
from hermes_core.skills.changes import SkillRequest

ENTRIES = [
    "User likes dark mode in the editor",
    "Deploys happen on Fridays after review",
    "User no longer likes dark mode in the editor",
    "deploy happens friday after the review",
    "The project uses PostgreSQL 15",
]


def _memory(tmp_path: Path, mode: str = "allow"):  # type: ignore[no-untyped-def]
    memory = real_memory(tmp_path, mode=mode)
    for entry in ENTRIES:
        assert memory.store.add("memory", entry)["success"]
    return memory


def test_the_review_stages_the_plan_once_and_approval_applies_it(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    before = memory.file("memory").read_bytes()
    done = consolidate_memory(memory.writer, "memory", origin="background_review")
    assert done.result is not None and done.result.get("staged") is True
    assert memory.file("memory").read_bytes() == before  # nothing landed
    [record] = memory.pending()
    assert record["origin"] == "background_review" and record["provenance"]
    assert sorted(op["selected"] for op in record["operations"]) == sorted(
        [ENTRIES[0], ENTRIES[1]]
    )
    again = consolidate_memory(memory.writer, "memory", origin="background_review")
    assert again.already_staged == record["id"] and again.result is None
    assert len(memory.pending()) == 1
    assert memory.writer.approve(record["id"])["success"]
    assert memory.store.entries("memory") == [ENTRIES[2], ENTRIES[3], ENTRIES[4]]
    assert consolidate_memory(memory.writer, "memory", origin="cli").plan.steps == ()


def test_a_dry_run_shows_the_plan_and_changes_nothing(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    before = memory.file("memory").read_bytes()
    done = consolidate_memory(memory.writer, "memory", origin="cli", dry_run=True)
    assert [s.reason for s in done.plan.steps] == ["contradicted", "duplicate"]
    assert done.result is None
    assert memory.file("memory").read_bytes() == before and memory.pending() == []


def test_from_the_command_line_it_follows_the_approval_mode(tmp_path: Path) -> None:
    allowed = _memory(tmp_path / "allow")
    consolidate_memory(allowed.writer, "memory", origin="cli")
    assert allowed.store.entries("memory") == [ENTRIES[2], ENTRIES[3], ENTRIES[4]]
    staged = _memory(tmp_path / "stage", mode="stage")
    result = consolidate_memory(staged.writer, "memory", origin="cli").result
    assert result is not None and result.get("staged") is True
    assert staged.store.entries("memory") == ENTRIES


def test_dates_decide_which_of_two_duplicates_is_older(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    newer_first = {ENTRIES[1]: 300.0, ENTRIES[3]: 100.0}
    done = consolidate_memory(
        memory.writer, "memory", origin="cli", dry_run=True, dates=lambda _t: newer_first
    )
    assert ENTRIES[3] in [s.entry for s in done.plan.steps]
    assert ENTRIES[1] not in [s.entry for s in done.plan.steps]


def _skill(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


def test_near_duplicate_skills_are_proposed_as_a_merge_that_loses_no_step(tmp_path: Path) -> None:
    library = SkillLibrary(tmp_path / "skills", scan=lambda _text: [])
    for name, description, body in [
        ("deploy-app", "Deploy the app to production with docker", "1. docker build\n"),
        ("app-deploy", "Deploy the application to production using docker", "1. push image\n"),
        ("write-tests", "Write pytest tests for a module", "1. pytest\n"),
    ]:
        done = library.write(SkillRequest("create", name, content=_skill(name, description, body)))
        assert done["success"], done
    dry = consolidate_skills(library, origin="cli", dry_run=True)
    assert [(m.keep, m.fold) for m in dry.merges] == [("deploy-app", "app-deploy")]
    assert dry.results == []
    proposed = consolidate_skills(library, origin="background_review", last_used={})
    [result] = proposed.results
    assert result["edit"]["staged"] and result["delete"]["staged"]
    assert sorted(s.name for s in library.list()) == ["app-deploy", "deploy-app", "write-tests"]
    pending = sorted((tmp_path / "pending" / "skills").glob("*.json"))
    records = [json.loads(p.read_text()) for p in pending]
    assert sorted(r["action"] for r in records) == ["delete", "edit"]
    for record in records:
        assert library.approve(record["id"])["success"]
    assert sorted(s.name for s in library.list()) == ["deploy-app", "write-tests"]
    merged = library.view("deploy-app")["content"]
    assert "1. docker build" in merged and "## Merged from app-deploy" in merged
    assert "1. push image" in merged
