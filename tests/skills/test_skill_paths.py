"""Traversal and symbolic links: nothing is read or written outside a skill."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from skill_support import library, skill_md, tree

from hermes_core.skills import SkillLibrary, SkillTool

TRAVERSALS = [
    "../x.md",
    "../../outside.md",
    "references/../../x.md",
    "references/../SKILL.md",
    "/etc/passwd",
    "/tmp/x.md",
    "C:/x.md",
    "~/.ssh/authorized_keys",
    "references\\..\\..\\x.md",
    "references/./x.md",
    "references//x.md",
    "references/.env",
    "SKILL.md",
    "other/x.md",
    "references",
    "references/",
    "references/a\x00b.md",
    "references/" + "a/" * 9 + "x.md",
]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "secret.txt").write_text("the secret\n")
    return secret


@pytest.fixture
def skill(lib: SkillLibrary, root: Path) -> Path:
    assert lib.create("s", skill_md("s"))["success"]
    return root / "s"


@pytest.mark.parametrize("file_path", TRAVERSALS)
def test_traversal_is_refused_by_every_action(
    lib: SkillLibrary, skill: Path, tmp_path: Path, file_path: str
) -> None:
    before = tree(tmp_path)
    tool = SkillTool(lib)
    for args in (
        {"action": "write_file", "file_content": "x"},
        {"action": "remove_file"},
        {"action": "patch", "old_string": "Run", "new_string": "Go"},
        {"action": "view"},
    ):
        if args["action"] in ("view", "patch") and file_path == "SKILL.md":
            continue  # SKILL.md itself is what view and patch read by default
        result = lib_call(tool, {"name": "s", "file_path": file_path, **args})
        assert result["success"] is False, (args, file_path)
        assert result["reason"] in ("invalid", "not_found"), result
    assert tree(tmp_path) == before


def lib_call(tool: SkillTool, args: dict[str, object]) -> dict[str, object]:
    import json

    answer: dict[str, object] = json.loads(tool.handle(args))
    return answer


def test_a_linked_support_folder_pointing_out_is_refused(
    lib: SkillLibrary, skill: Path, outside: Path, tmp_path: Path
) -> None:
    (skill / "references").symlink_to(outside, target_is_directory=True)
    before = tree(tmp_path)
    write = lib.write_file("s", "references/new.md", "x")
    assert write["reason"] == "unsafe_path" and "symbolic link" in write["error"]
    assert lib.write_file("s", "references/secret.txt", "overwritten")["reason"] == "unsafe_path"
    assert lib.view("s", "references/secret.txt")["reason"] == "unsafe_path"
    assert lib.remove_file("s", "references/secret.txt")["reason"] == "unsafe_path"
    assert lib.patch("s", "the", "a", "references/secret.txt")["reason"] == "unsafe_path"
    assert "secret" not in str(lib.view("s"))  # not listed among the support files
    assert tree(tmp_path) == before
    assert (outside / "secret.txt").read_text() == "the secret\n"


def test_a_linked_support_file_pointing_out_is_never_read_or_written(
    lib: SkillLibrary, skill: Path, outside: Path
) -> None:
    (skill / "references").mkdir()
    (skill / "references" / "notes.md").symlink_to(outside / "secret.txt")
    view = lib.view("s", "references/notes.md")
    assert not view["success"] and "the secret" not in str(view)
    for result in (
        lib.write_file("s", "references/notes.md", "pwned"),
        lib.patch("s", "the secret", "pwned", "references/notes.md"),
        lib.remove_file("s", "references/notes.md"),
    ):
        assert result["reason"] == "unsafe_path", result
    assert (outside / "secret.txt").read_text() == "the secret\n"
    assert os.path.islink(skill / "references" / "notes.md")


def test_a_linked_skill_md_or_skill_folder_is_not_a_skill(
    root: Path, outside: Path, tmp_path: Path
) -> None:
    (outside / "SKILL.md").write_text(skill_md("linked"))
    root.mkdir(parents=True)
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "md").mkdir()
    (root / "md" / "SKILL.md").symlink_to(outside / "SKILL.md")
    lib = library(root)
    skills, problems = lib.scan_all()
    assert skills == []
    assert {p.path for p in problems} == {"linked", "md"}
    assert lib.view("linked")["reason"] == "not_found"
    assert "symbolic link" in lib.view("md")["error"]
    before = tree(tmp_path)
    assert lib.edit("md", skill_md("md"))["reason"] == "unsafe_path"
    assert lib.delete("linked")["reason"] == "not_found"
    assert tree(tmp_path) == before


def test_a_linked_category_folder_is_not_followed(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "x").mkdir(parents=True)
    (elsewhere / "x" / "SKILL.md").write_text(skill_md("x"))
    root.mkdir(parents=True)
    (root / "cat").symlink_to(elsewhere, target_is_directory=True)
    lib = library(root)
    assert lib.list() == []
    result = lib.create("y", skill_md("y"), "cat")
    assert result["reason"] == "unsafe_path"
    assert not (elsewhere / "y").exists()


def test_a_skills_root_that_is_a_link_to_a_folder_works(tmp_path: Path) -> None:
    real = tmp_path / "real-skills"
    real.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    (home / "skills").symlink_to(real, target_is_directory=True)
    lib = library(home / "skills")
    assert lib.create("a", skill_md("a"))["success"]
    assert (real / "a" / "SKILL.md").exists() and [s.name for s in lib.list()] == ["a"]
    (home / "dangling").symlink_to(tmp_path / "nowhere", target_is_directory=True)
    dangling = library(home / "dangling")
    assert dangling.create("b", skill_md("b"))["reason"] == "unsafe_path"
    assert not (tmp_path / "nowhere").exists()


def test_a_fifo_planted_as_a_support_file_does_not_hang(lib: SkillLibrary, skill: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    (skill / "references").mkdir()
    os.mkfifo(skill / "references" / "pipe.md")
    assert lib.view("s", "references/pipe.md")["reason"] == "unsafe_path"
    assert lib.write_file("s", "references/pipe.md/x.md", "x")["reason"] == "unsafe_path"
