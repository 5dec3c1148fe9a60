"""Issue 28: each skill's created, updated (a write that landed) and last used (a view),
kept in ``skills.meta.json`` beside the library (never in the skill or the prompt's index),
shown by ``skills list --dates`` / ``skills show --dates`` and in their JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.cli import main
from hermes_core.skills.changes import SkillRequest
from hermes_core.skills.library import SkillLibrary

SKILL = "---\nname: brew\ndescription: Make tea properly\n---\nBoil water, then steep.\n"


def test_a_skill_is_dated_by_writes_and_views(tmp_path: Path) -> None:
    lib = SkillLibrary(tmp_path / "skills", scan=lambda text: [])
    assert lib.write(SkillRequest("create", "brew", content=SKILL))["success"]
    first = lib.dates.read()["brew"]
    assert first.created == first.updated and first.last_used is None
    index = lib.index()
    assert lib.view("brew")["success"]
    used = lib.dates.read()["brew"]
    assert used.last_used is not None and used.created == first.created
    assert lib.index() == index and "2026-" not in index  # the prompt's index has no dates
    assert lib.patch("brew", "Boil water", "Boil fresh water")["success"]
    assert lib.dates.read()["brew"].created == first.created
    assert lib.write(SkillRequest("delete", "brew"))["success"]
    assert "brew" not in lib.dates.read()


def test_skills_list_and_show_print_dates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    (home / "skills" / "brew").mkdir(parents=True)
    (home / "skills" / "brew" / "SKILL.md").write_text(SKILL, encoding="utf-8")  # by hand
    assert main(["--home", str(home), "skills", "list", "--dates"]) == 0
    assert "not dated" in capsys.readouterr().out
    lib = SkillLibrary(home / "skills", scan=lambda text: [])
    assert lib.view("brew")["success"]
    assert main(["--home", str(home), "skills", "list", "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)["skills"]
    assert listed["dates"]["last_used"] is not None
    assert main(["--home", str(home), "skills", "show", "brew", "--dates"]) == 0
    assert "last used just now" in capsys.readouterr().out.splitlines()[1]


def test_unreadable_skill_dates_never_fail_a_view(tmp_path: Path) -> None:
    lib = SkillLibrary(tmp_path / "skills", scan=lambda text: [])
    (tmp_path / "skills" / "brew").mkdir(parents=True)
    (tmp_path / "skills" / "brew" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (tmp_path / "skills.meta.json").write_text("{broken", encoding="utf-8")
    assert lib.view("brew")["success"]
    assert lib.dates.read()["brew"].last_used is not None  # rebuilt
