"""Invisible characters (zero-width, direction marks, bidi controls, tag characters):
refused in what a write saves, removed from the index, escaped in the command's output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from skill_support import library, skill_md, tree

from hermes_core.cli import main
from hermes_core.skills import SkillLibrary

INVISIBLE = [
    "\u200b",
    "\u200c",
    "\u200d",
    "\u200e",
    "\u200f",
    "\u061c",
    "\u202a",
    "\u202e",
    "\u2066",
    "\u2069",
    "\ufeff",
    "\U000e0041",
]


@pytest.mark.parametrize("char", INVISIBLE)
def test_a_description_with_an_invisible_or_bidi_character_is_refused(
    lib: SkillLibrary, tmp_path: Path, char: str
) -> None:
    before = tree(tmp_path)
    result = lib.create("s", skill_md("s", description=f"Use for deploys.{char} ok"))
    assert result["reason"] == "invalid", result
    assert f"U+{ord(char):04X}" in result["error"] and "Remove it" in result["error"]
    assert tree(tmp_path) == before


def test_version_and_tags_and_patches_are_checked_too(lib: SkillLibrary, root: Path) -> None:
    assert lib.create("s", skill_md("s", extra="version: '1\u200f'\n"))["reason"] == "invalid"
    assert lib.create("s", skill_md("s", extra="tags: [ops\u200b]\n"))["reason"] == "invalid"
    assert lib.create("s", skill_md("s"))["success"]
    before = (root / "s" / "SKILL.md").read_text()
    patched = lib.patch("s", "Use when deploying", "Use\u200e when deploying")
    assert patched["reason"] == "invalid" and "U+200E" in patched["error"]
    assert (root / "s" / "SKILL.md").read_text() == before


def planted(root: Path, name: str, description: str) -> None:
    (root / name).mkdir(parents=True)
    text = f'---\nname: {name}\ndescription: "{description}"\n---\nbody\n'
    (root / name / "SKILL.md").write_text(text, encoding="utf-8")


def test_the_index_removes_them_from_a_description_planted_by_hand(root: Path) -> None:
    lib = library(root)
    planted(root, "rlm", "Use for deploys.\u200f\u200e ok \u061cright\ufeff \U000e0041x")
    planted(root, "zwsp", "Use when EV\u200bIL")  # the toy scanner flags EVIL once joined
    index = lib.index()
    assert "rlm: Use for deploys. ok right x" in index
    assert "zwsp: [description withheld: it matches threat pattern(s) toy_evil]" in index
    assert not any(char in index for char in INVISIBLE)


def test_show_and_list_escape_them_in_text_and_json(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    root = isolated_home / "skills"
    planted(root, "marks", "Use for deploys \u200f caf\u00e9 \u200b")
    skill_file = root / "marks" / "SKILL.md"
    skill_file.write_text(skill_file.read_text() + "\u202eright-to-left\u202c\x7f\n")
    description = "Use for deploys \u200f caf\u00e9 \u200b"
    for argv in (["show", "marks", "--json"], ["list", "--json"], ["show", "marks"], ["list"]):
        assert main(["skills", *argv]) == 0
        out, _ = capsys.readouterr()
        assert not any(char in out for char in [*INVISIBLE, "\x7f"]), argv
        assert "\\u200f" in out and "caf\u00e9" in out, argv
        if "show" in argv:
            assert "\\u202e" in out
        if argv == ["show", "marks", "--json"]:  # escaped, and still the same text
            data = json.loads(out)
            assert data["description"] == description
            assert data["content"].endswith("\u202eright-to-left\u202c\x7f\n")
        elif argv == ["list", "--json"]:
            assert json.loads(out)["skills"][0]["description"] == description
