"""Running a consolidation through the real writers (issue 28 item 2): from the background
review every change waits for a person with its provenance, from the command line it follows
the approval mode, a dry run changes nothing, a plan is never staged twice nor again once a
person rejected it, and a skill merge never loses a step."""

from __future__ import annotations

import json
from pathlib import Path

from review_support import Memory, real_memory

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
#: the order the entries were last changed in (the caller's dates)
AGES = {entry: float(100 + i) for i, entry in enumerate(ENTRIES)}
KEPT = [ENTRIES[2], ENTRIES[3], ENTRIES[4]]


def _dates(_target: str) -> dict[str, float]:
    return AGES


def _memory(tmp_path: Path, mode: str = "allow") -> Memory:
    memory = real_memory(tmp_path, mode=mode)
    for entry in ENTRIES:
        assert memory.store.add("memory", entry)["success"]
    return memory


def test_the_review_stages_the_plan_once_and_approval_applies_it(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    before = memory.file("memory").read_bytes()
    done = consolidate_memory(memory.writer, "memory", origin="background_review", dates=_dates)
    assert done.result is not None and done.result.get("staged") is True
    assert memory.file("memory").read_bytes() == before  # nothing landed
    [record] = memory.pending()
    assert record["origin"] == "background_review" and record["provenance"]
    removed = [op["selected"] for op in record["operations"] if op["action"] == "remove"]
    assert sorted(removed) == sorted([ENTRIES[0], ENTRIES[1]])
    again = consolidate_memory(memory.writer, "memory", origin="background_review", dates=_dates)
    assert again.already_staged == record["id"] and again.result is None
    assert len(memory.pending()) == 1
    assert memory.writer.approve(record["id"])["success"]
    assert memory.store.entries("memory") == KEPT
    assert consolidate_memory(memory.writer, "memory", origin="cli", dates=_dates).plan.steps == ()


def test_a_rejected_plan_is_not_staged_again_while_the_block_stays(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    ledger = tmp_path / "pending" / "consolidation.json"
    first = consolidate_memory(
        memory.writer, "memory", origin="background_review", dates=_dates, ledger=ledger
    )
    assert first.result is not None
    assert memory.writer.reject(str(first.result["pending_id"]))["success"]
    again = consolidate_memory(
        memory.writer, "memory", origin="background_review", dates=_dates, ledger=ledger
    )
    assert again.declined and again.result is None and memory.pending() == []
    # a block that changed makes a new plan, which is proposed
    assert memory.store.add("memory", "deploys happen on fridays after the review")["success"]
    third = consolidate_memory(
        memory.writer, "memory", origin="background_review", dates=_dates, ledger=ledger
    )
    assert third.result is not None and third.result.get("staged")


def test_approval_is_refused_when_an_entry_that_stood_for_a_removal_is_gone(
    tmp_path: Path,
) -> None:
    memory = _memory(tmp_path)
    done = consolidate_memory(memory.writer, "memory", origin="background_review", dates=_dates)
    assert done.result is not None
    assert memory.store.remove("memory", ENTRIES[3])["success"]  # the keeper of a duplicate
    refused = memory.writer.approve(str(done.result["pending_id"]))
    assert not refused["success"]
    assert ENTRIES[1] in memory.store.entries("memory")  # the fact is still somewhere


def test_a_dry_run_shows_the_plan_and_changes_nothing(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    before = memory.file("memory").read_bytes()
    done = consolidate_memory(memory.writer, "memory", origin="cli", dry_run=True, dates=_dates)
    assert [s.reason for s in done.plan.steps] == ["contradicted", "duplicate"]
    assert done.result is None
    assert memory.file("memory").read_bytes() == before and memory.pending() == []


def test_without_dates_a_contradiction_is_shown_not_removed(tmp_path: Path) -> None:
    """A block written by hand has no dates: which of two opposite entries is newer is
    unknown, so both stay (entries the store adds within one second have equal dates too)."""
    memory = real_memory(tmp_path)
    memory.file("memory").parent.mkdir(parents=True, exist_ok=True)
    memory.file("memory").write_text("\n§\n".join(ENTRIES) + "\n", encoding="utf-8")
    done = consolidate_memory(memory.writer, "memory", origin="cli", dry_run=True)
    assert [s.reason for s in done.plan.steps] == ["duplicate"]
    assert done.plan.conflicts == ((ENTRIES[0], ENTRIES[2]),)


def test_from_the_command_line_it_follows_the_approval_mode(tmp_path: Path) -> None:
    allowed = _memory(tmp_path / "allow")
    consolidate_memory(allowed.writer, "memory", origin="cli", dates=_dates)
    assert allowed.store.entries("memory") == KEPT
    staged = _memory(tmp_path / "stage", mode="stage")
    result = consolidate_memory(staged.writer, "memory", origin="cli", dates=_dates).result
    assert result is not None and result.get("staged") is True
    assert staged.store.entries("memory") == ENTRIES


def _skill(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


def _library(tmp_path: Path, **kwargs: object) -> SkillLibrary:
    library = SkillLibrary(tmp_path / "skills", scan=lambda _text: [], **kwargs)  # type: ignore[arg-type]
    for name, description, body in [
        ("deploy-app", "Deploy the app to production with docker", "1. docker build\n"),
        ("app-deploy", "Deploy the application to production using docker", "1. push image\n"),
        ("write-tests", "Write pytest tests for a module", "1. pytest\n"),
    ]:
        done = library.write(SkillRequest("create", name, content=_skill(name, description, body)))
        assert done["success"], done
    return library


def _names(library: SkillLibrary) -> list[str]:
    return sorted(s.name for s in library.list())


def test_a_skill_merge_waits_for_its_edit_before_its_delete(tmp_path: Path) -> None:
    library = _library(tmp_path)
    dry = consolidate_skills(library, origin="cli", dry_run=True)
    assert [(m.keep, m.fold) for m in dry.merges] == [("deploy-app", "app-deploy")]
    assert dry.results == []
    first = consolidate_skills(library, origin="background_review")
    [result] = first.results
    assert result["edit"]["staged"] and "delete" not in result  # the delete waits
    again = consolidate_skills(library, origin="background_review")
    assert again.results[0]["edit"].get("already_staged")
    pending = sorted((tmp_path / "pending" / "skills").glob("*.json"))
    [record] = [json.loads(p.read_text()) for p in pending]
    assert library.approve(record["id"])["success"]
    merged = library.view("deploy-app")["content"]
    assert "1. docker build" in merged and "## Merged from app-deploy" in merged
    assert "1. push image" in merged
    then = consolidate_skills(library, origin="background_review")
    assert then.results[0]["delete"]["staged"]
    assert _names(library) == ["app-deploy", "deploy-app", "write-tests"]
    [delete] = [
        json.loads(p.read_text())
        for p in (tmp_path / "pending" / "skills").glob("*.json")
        if json.loads(p.read_text())["action"] == "delete"
    ]
    assert library.approve(delete["id"])["success"]
    assert _names(library) == ["deploy-app", "write-tests"]


def test_a_refused_merge_edit_deletes_nothing(tmp_path: Path) -> None:
    library = _library(tmp_path)
    refusing = SkillLibrary(
        tmp_path / "skills",
        scan=lambda text: [] if "Merged from" not in text else [_finding()],
    )
    done = consolidate_skills(refusing, origin="cli")
    [result] = done.results
    assert not result["edit"]["success"] and "delete" not in result
    assert _names(library) == ["app-deploy", "deploy-app", "write-tests"]


def _finding():  # type: ignore[no-untyped-def]
    from hermes_core.types import Finding

    return Finding("toy", "override", "refuses merged text")


def test_a_skill_with_support_files_is_left_for_a_person(tmp_path: Path) -> None:
    library = _library(tmp_path)
    scripts = tmp_path / "skills" / "app-deploy" / "scripts"
    scripts.mkdir()
    (scripts / "push.sh").write_text("echo push\n")
    done = consolidate_skills(library, origin="cli")
    assert done.merges == [] and "app-deploy" in done.left
    assert _names(library) == ["app-deploy", "deploy-app", "write-tests"]


def test_the_stores_own_dates_decide_which_statement_is_newer(tmp_path: Path) -> None:
    """A replace keeps an entry's place in the file but makes it the newer statement: the
    store's ``updated`` date, not the place, decides which of two opposite entries goes."""
    from hermes_core.memory.dated import read_block_dates, write_block_dates

    memory = real_memory(tmp_path)
    likes, no_longer = (
        "User likes dark mode in the editor",
        "User no longer likes dark mode in the editor",
    )
    assert memory.store.add("memory", likes)["success"]
    assert memory.store.add("memory", no_longer)["success"]
    dates = read_block_dates(memory.store.documents, "memory", None)
    for record, day in zip(dates["entries"], ("2026-01-01", "2026-02-01"), strict=True):
        record["created"] = record["updated"] = f"{day}T00:00:00Z"
    assert write_block_dates(memory.store.documents, "memory", None, dates) == 2
    plan = consolidate_memory(memory.writer, "memory", origin="cli", dry_run=True).plan
    assert [(s.entry, s.reason) for s in plan.steps] == [(likes, "contradicted")]
    again = "User likes dark mode in the editor again"
    assert memory.store.replace("memory", likes, again)["success"]  # keeps its place: first
    plan = consolidate_memory(memory.writer, "memory", origin="cli", dry_run=True).plan
    assert [(s.entry, s.reason) for s in plan.steps] == [(no_longer, "contradicted")]
