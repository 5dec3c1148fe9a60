"""skills.write_approval (allow / stage / block) and background review's proposals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from skill_support import library, skill_md, tree

from hermes_core.host import Hermes
from hermes_core.skills import SkillLibrary, SkillTool
from hermes_core.skills.home import open_library, pending_directory, skills_directory


@pytest.fixture
def pending(tmp_path: Path) -> Path:
    return tmp_path / "home" / "pending" / "skills"


def staged(result: dict[str, object]) -> str:
    assert result["success"] and result["staged"], result
    pending_id = result["pending_id"]
    assert isinstance(pending_id, str)
    return pending_id


def test_stage_writes_nothing_to_the_library_until_approved(root: Path, pending: Path) -> None:
    lib = library(root, approval="stage")
    pending_id = staged(lib.create("deploy", skill_md("deploy"), "devops"))
    assert not root.exists() and lib.list() == []
    record = json.loads((pending / f"{pending_id}.json").read_text())
    assert record["action"] == "create" and record["origin"] == "assistant_tool"
    approved = lib.approve(pending_id)
    assert approved["success"] and "applied" in approved["message"]
    assert [s.path for s in lib.list()] == ["devops/deploy"]
    assert list(pending.iterdir()) == []


def test_stage_judges_the_write_first_refusals_are_not_staged(root: Path, pending: Path) -> None:
    lib = library(root, approval="stage")
    assert lib.create("bad", "no front matter")["reason"] == "invalid"
    assert lib.create("evil", skill_md("evil", body="EVIL\n"))["reason"] == "threat"
    assert lib.write_file("nope", "references/x.md", "x")["reason"] == "not_found"
    assert not pending.exists() and not root.exists()


def test_stage_every_kind_of_write_and_reject(root: Path, pending: Path) -> None:
    allow = library(root)
    assert allow.create("s", skill_md("s"))["success"]
    assert allow.write_file("s", "references/a.md", "A")["success"]
    before = tree(root)
    lib = library(root, approval="stage")
    ids = [
        staged(lib.edit("s", skill_md("s", body="new body\n"))),
        staged(lib.patch("s", "Run", "Start")),
        staged(lib.write_file("s", "references/b.md", "B")),
        staged(lib.remove_file("s", "references/a.md")),
        staged(lib.delete("s")),
    ]
    assert tree(root) == before
    assert [r.id for r in lib.pending.all()[0]] == ids
    for pending_id in ids:
        assert lib.reject(pending_id)["success"]
    assert tree(root) == before and list(pending.iterdir()) == []
    with pytest.raises(KeyError, match="no pending skill write"):
        lib.reject(ids[0])


def test_approve_refuses_when_the_file_changed_since_it_was_staged(root: Path) -> None:
    assert library(root).create("s", skill_md("s"))["success"]
    lib = library(root, approval="stage")
    pending_id = staged(lib.patch("s", "Run `make deploy`", "Run `make ship`"))
    assert library(root).patch("s", "Check the health page.", "Check logs.")["success"]
    result = lib.approve(pending_id)
    assert result["reason"] == "changed" and pending_id in result["error"]
    assert "make deploy" in (root / "s" / "SKILL.md").read_text()
    assert lib.pending.all()[0][0].id == pending_id  # kept for a person to reject


def test_approve_scans_again(root: Path, pending: Path) -> None:
    lib = library(root, approval="stage")
    pending_id = staged(lib.create("s", skill_md("s")))
    path = pending / f"{pending_id}.json"
    record = json.loads(path.read_text())
    record["content"] = skill_md("s", body="EVIL\n")
    path.write_text(json.dumps(record))
    assert lib.approve(pending_id)["reason"] == "threat"
    assert not (root / "s").exists()


def test_a_tampered_record_cannot_be_approved(root: Path, pending: Path) -> None:
    lib = library(root, approval="stage")
    pending_id = staged(lib.create("s", skill_md("s")))
    path = pending / f"{pending_id}.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "origin": "root"}))
    with pytest.raises(KeyError, match="cannot be read"):
        lib.approve(pending_id)
    assert lib.pending.all() == ([], [pending_id])
    with pytest.raises(KeyError, match="not a pending id"):
        lib.approve("../../x")


def test_block_refuses_every_write_and_still_reads(root: Path) -> None:
    assert library(root).create("s", skill_md("s"))["success"]
    before = tree(root)
    lib = library(root, approval="block")
    tool = SkillTool(lib)
    for args in (
        {"action": "create", "name": "t", "content": skill_md("t")},
        {"action": "edit", "name": "s", "content": skill_md("s")},
        {"action": "patch", "name": "s", "old_string": "Run", "new_string": "Go"},
        {"action": "write_file", "name": "s", "file_path": "assets/a", "file_content": "a"},
        {"action": "remove_file", "name": "s", "file_path": "assets/a"},
        {"action": "delete", "name": "s"},
    ):
        result = json.loads(tool.handle(args))
        assert result["reason"] == "read_only" and "write_approval: block" in result["error"]
    assert tree(root) == before
    assert json.loads(tool.handle({"action": "view", "name": "s"}))["success"]
    assert json.loads(tool.handle({"action": "list"}))["count"] == 1


def test_background_review_only_proposes_even_a_new_skill(root: Path, pending: Path) -> None:
    """Issue 26: a review writes what nobody asked for, so under ``allow`` its new skill and
    new support file wait for a person too (they used to land at once)."""
    lib = library(root)
    review = SkillTool(lib, origin="background_review")

    def call(**args: object) -> dict[str, object]:
        answer: dict[str, object] = json.loads(review.handle(args))
        return answer

    assert call(action="create", name="n", content=skill_md("n"))["staged"]
    assert not (root / "n").exists()
    agent = SkillTool(lib)
    assert json.loads(agent.handle({"action": "create", "name": "r", "content": skill_md("r")}))[
        "done"
    ]
    written = {"action": "write_file", "name": "r", "file_path": "references/a.md"}
    assert json.loads(agent.handle(written | {"file_content": "A"}))["done"]
    before = tree(root)
    for args in (
        {
            "action": "write_file",
            "name": "r",
            "file_path": "references/new.md",
            "file_content": "N",
        },
        {"action": "write_file", "name": "r", "file_path": "references/a.md", "file_content": "B"},
        {"action": "edit", "name": "r", "content": skill_md("r", body="other\n")},
        {"action": "patch", "name": "r", "old_string": "Run", "new_string": "Go"},
        {"action": "remove_file", "name": "r", "file_path": "references/a.md"},
        {"action": "delete", "name": "r"},
    ):
        result = call(**args)
        assert result.get("staged"), args
    assert tree(root) == before
    records = lib.pending.all()[0]
    assert [r.origin for r in records] == ["background_review"] * 7
    assert lib.approve(records[-1].id)["success"]  # a person approves the deletion
    assert not (root / "r").exists()


def test_write_approval_comes_from_the_config(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for mode, expect in (("allow", "done"), ("stage", "staged"), ("block", "read_only")):
        config = {"skills": {"write_approval": mode}}
        with Hermes.from_config(config, home=home) as host:
            lib = open_library(host.home, host.settings)
        assert lib.approval == mode
        result = lib.create(f"m-{mode}", skill_md(f"m-{mode}"))
        outcome = result.get("reason") or ("staged" if result.get("staged") else "done")
        assert result["success"] is (mode != "block") and outcome == expect, result
    assert [s.name for s in SkillLibrary(skills_directory(home)).list()] == ["m-allow"]
    assert len(list(pending_directory(home).iterdir())) == 1


def test_an_unknown_approval_mode_is_refused(root: Path) -> None:
    with pytest.raises(ValueError, match="allow, stage or block"):
        SkillLibrary(root, approval="yes")
