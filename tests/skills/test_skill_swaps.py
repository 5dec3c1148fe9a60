"""A folder swapped for a link after a write was checked: the write stops, nothing lands
outside. The swap is made between planning and carrying out (no timing involved)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from skill_support import skill_md, tree

from hermes_core.skills import SkillLibrary
from hermes_core.skills.changes import Change, SkillRequest, plan
from hermes_core.skills.execute import execute
from hermes_core.skills.files import SkillError


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    (path / "a.md").write_text("outside a\n")
    return path


def planned(root: Path, request: SkillRequest) -> Change:
    change = plan(root.resolve(), request)
    assert isinstance(change, Change), change
    return change


def swap_for_link(folder: Path, target: Path) -> None:
    shutil.rmtree(folder)
    folder.symlink_to(target, target_is_directory=True)


def test_a_write_into_a_folder_swapped_for_a_link_stops(
    lib: SkillLibrary, root: Path, outside: Path
) -> None:
    assert lib.create("s", skill_md("s"))["success"]
    assert lib.write_file("s", "references/a.md", "inside a\n")["success"]
    for file_path in ("references/a.md", "references/new.md", "references/deep/new.md"):
        request = SkillRequest("write_file", "s", file_path=file_path, file_content="PAYLOAD")
        change = planned(root, request)
        swap_for_link(root / "s" / "references", outside)
        before = tree(outside)
        with pytest.raises(SkillError, match="symbolic link"):
            execute(root.resolve(), change)
        assert tree(outside) == before and "PAYLOAD" not in str(before)
        (root / "s" / "references").unlink()
        (root / "s" / "references").mkdir()


def test_a_missing_folder_that_appears_as_a_link_stops_the_write(
    lib: SkillLibrary, root: Path, outside: Path
) -> None:
    assert lib.create("s", skill_md("s"))["success"]
    request = SkillRequest("write_file", "s", file_path="templates/x.md", file_content="PAYLOAD")
    change = planned(root, request)
    (root / "s" / "templates").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SkillError):
        execute(root.resolve(), change)
    assert sorted(p.name for p in outside.iterdir()) == ["a.md"]


def test_a_skill_folder_swapped_for_a_link_stops_an_edit(
    lib: SkillLibrary, root: Path, tmp_path: Path
) -> None:
    assert lib.create("s", skill_md("s"))["success"]
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(root / "s", elsewhere)
    change = planned(root, SkillRequest("edit", "s", content=skill_md("s", body="PAYLOAD\n")))
    swap_for_link(root / "s", elsewhere)
    with pytest.raises(SkillError):
        execute(root.resolve(), change)
    assert "PAYLOAD" not in (elsewhere / "SKILL.md").read_text()


def test_a_removal_through_a_swapped_folder_stops(
    lib: SkillLibrary, root: Path, outside: Path
) -> None:
    assert lib.create("s", skill_md("s"))["success"]
    assert lib.write_file("s", "references/a.md", "inside a\n")["success"]
    change = planned(root, SkillRequest("remove_file", "s", file_path="references/a.md"))
    swap_for_link(root / "s" / "references", outside)
    with pytest.raises(SkillError):
        execute(root.resolve(), change)
    assert (outside / "a.md").read_text() == "outside a\n"


def test_a_delete_through_a_swapped_category_stops(
    lib: SkillLibrary, root: Path, tmp_path: Path
) -> None:
    assert lib.create("s", skill_md("s"), category="ops")["success"]
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(root / "ops", elsewhere)
    change = planned(root, SkillRequest("delete", "s"))
    swap_for_link(root / "ops", elsewhere)
    with pytest.raises(SkillError):
        execute(root.resolve(), change)
    assert (elsewhere / "s" / "SKILL.md").is_file()


def test_a_file_hard_linked_after_the_check_is_not_written_over(
    lib: SkillLibrary, root: Path, outside: Path
) -> None:
    assert lib.create("s", skill_md("s"))["success"]
    assert lib.write_file("s", "references/a.md", "inside a\n")["success"]
    request = SkillRequest("write_file", "s", file_path="references/a.md", file_content="NEW")
    change = planned(root, request)
    os.unlink(root / "s" / "references" / "a.md")
    os.link(outside / "a.md", root / "s" / "references" / "a.md")
    with pytest.raises(SkillError, match="hard links"):
        execute(root.resolve(), change)
    assert (root / "s" / "references" / "a.md").read_text() == "outside a\n"
    assert [p.name for p in (root / "s" / "references").iterdir()] == ["a.md"]  # no temp left


def test_writes_removals_and_deletes_still_work_and_prune_empty_folders(
    lib: SkillLibrary, root: Path
) -> None:
    assert lib.create("s", skill_md("s"), category="ops")["success"]
    assert lib.write_file("s", "references/deep/er/x.md", "x")["success"]
    os.chmod(root / "ops" / "s" / "references" / "deep" / "er" / "x.md", 0o640)
    assert lib.write_file("s", "references/deep/er/x.md", "y")["success"]
    path = root / "ops" / "s" / "references" / "deep" / "er" / "x.md"
    assert path.read_text() == "y" and (path.stat().st_mode & 0o777) == 0o640  # mode kept
    assert lib.remove_file("s", "references/deep/er/x.md")["success"]
    assert sorted(p.name for p in (root / "ops" / "s").iterdir()) == ["SKILL.md"]
    assert lib.delete("s")["success"]
    assert sorted(p.name for p in root.iterdir()) == [".lock"]
