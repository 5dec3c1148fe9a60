"""Hard links and the per-skill caps on support files: refused with nothing read or written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from skill_support import skill_md, tree

from hermes_core.skills import SkillLibrary
from hermes_core.skills.layout import (
    MAX_SUPPORT_BYTES,
    MAX_SUPPORT_FILES,
    MAX_SUPPORT_TOTAL_BYTES,
)


@pytest.fixture
def skill(lib: SkillLibrary, root: Path) -> Path:
    assert lib.create("s", skill_md("s"))["success"]
    return root / "s"


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text("OUTSIDE-SECRET\n")
    return path


def test_a_hard_linked_support_file_is_not_read_or_written_over(
    lib: SkillLibrary, skill: Path, secret: Path, tmp_path: Path
) -> None:
    (skill / "references").mkdir()
    os.link(secret, skill / "references" / "notes.md")
    before = tree(tmp_path)
    view = lib.view("s", "references/notes.md")
    assert view["reason"] == "unsafe_path" and "hard links" in view["error"]
    assert "OUTSIDE-SECRET" not in str(view)
    for result in (
        lib.write_file("s", "references/notes.md", "pwned"),
        lib.patch("s", "OUTSIDE", "pwned", "references/notes.md"),
    ):
        assert result["reason"] == "unsafe_path" and "hard links" in result["error"], result
    assert tree(tmp_path) == before
    removed = lib.remove_file("s", "references/notes.md")  # unlinking one link is harmless
    assert removed["success"], removed
    assert secret.read_text() == "OUTSIDE-SECRET\n" and os.stat(secret).st_nlink == 1


def test_a_hard_linked_skill_md_is_skipped_and_not_shown(
    lib: SkillLibrary, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(skill_md("h", description="Planted."))
    (root / "h").mkdir(parents=True)
    os.link(outside, root / "h" / "SKILL.md")
    skills, problems = lib.scan_all()
    assert skills == [] and problems[0].path == "h" and "hard links" in problems[0].reason
    assert "Planted" not in lib.index()
    assert lib.view("h")["reason"] == "unsafe_path"
    assert lib.edit("h", skill_md("h"))["reason"] == "unsafe_path"
    assert outside.read_text() == skill_md("h", description="Planted.")


def test_files_per_skill_are_capped(lib: SkillLibrary, skill: Path, tmp_path: Path) -> None:
    for n in range(MAX_SUPPORT_FILES):
        assert lib.write_file("s", f"assets/f{n}.txt", "x")["success"], n
    before = tree(tmp_path)
    refused = lib.write_file("s", "references/one-more.md", "x")
    assert (
        refused["reason"] == "too_large"
        and f"{MAX_SUPPORT_FILES} support files" in refused["error"]
    )
    assert tree(tmp_path) == before
    assert lib.write_file("s", "assets/f0.txt", "replaced")["success"]  # not a new file
    assert lib.remove_file("s", "assets/f1.txt")["success"]
    assert lib.write_file("s", "references/one-more.md", "x")["success"]


def test_total_support_bytes_per_skill_are_capped(
    lib: SkillLibrary, skill: Path, tmp_path: Path
) -> None:
    whole = MAX_SUPPORT_TOTAL_BYTES // MAX_SUPPORT_BYTES
    for n in range(whole):
        assert lib.write_file("s", f"assets/f{n}.bin", "x" * MAX_SUPPORT_BYTES)["success"], n
    before = tree(tmp_path)
    refused = lib.write_file("s", "assets/extra.bin", "x")
    assert refused["reason"] == "too_large" and "10 MiB" in refused["error"]
    assert lib.write_file("s", "assets/f0.bin", "x" * MAX_SUPPORT_BYTES)["success"]  # same size
    assert tree(tmp_path) == before
    assert lib.write_file("s", "assets/f0.bin", "small")["success"]  # shrinking is fine
    assert lib.write_file("s", "assets/extra.bin", "x")["success"]


def test_a_patch_that_grows_a_support_file_past_the_total_is_refused(
    lib: SkillLibrary, skill: Path, tmp_path: Path
) -> None:
    whole = MAX_SUPPORT_TOTAL_BYTES // MAX_SUPPORT_BYTES
    for n in range(whole - 1):
        assert lib.write_file("s", f"assets/f{n}.bin", "x" * MAX_SUPPORT_BYTES)["success"]
    assert lib.write_file("s", "assets/short.bin", "x" * (MAX_SUPPORT_BYTES - 200))["success"]
    assert lib.write_file("s", "references/last.md", "y" * 147 + "END")["success"]  # 50 left
    before = tree(tmp_path)
    refused = lib.patch("s", "END", "END" + "z" * 100, "references/last.md")
    assert refused["reason"] == "too_large" and "10 MiB" in refused["error"]
    assert tree(tmp_path) == before
    assert lib.patch("s", "END", "END+", "references/last.md")["success"]  # still fits


def test_a_skill_over_the_caps_by_hand_may_still_shrink(
    lib: SkillLibrary, skill: Path, tmp_path: Path
) -> None:
    assets = skill / "assets"
    assets.mkdir()
    for n in range(MAX_SUPPORT_FILES + 5):
        (assets / f"f{n}.txt").write_text("planted by hand")
    assert lib.write_file("s", "assets/new.txt", "x")["reason"] == "too_large"
    assert lib.write_file("s", "assets/f0.txt", "shorter")["success"]
    assert lib.remove_file("s", "assets/f1.txt")["success"]
