"""Issue 28: each skill's created, updated (a write that landed) and last used (a view),
kept in ``skills.meta.json`` beside the library (never in the skill or the prompt's index),
shown by ``skills list --dates`` / ``skills show --dates`` and in their JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.cli import main
from hermes_core.memory.dates import EntryDates, moment
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


def _two_brews(root: Path) -> SkillLibrary:
    lib = SkillLibrary(root, scan=lambda text: [])
    assert lib.write(SkillRequest("create", "brew", content=SKILL, category="tea"))["success"]
    (root / "beer" / "brew").mkdir(parents=True)
    (root / "beer" / "brew" / "SKILL.md").write_text(SKILL, encoding="utf-8")  # by hand
    return lib


def test_skills_of_one_name_in_two_categories_keep_dates_of_their_own(tmp_path: Path) -> None:
    lib = _two_brews(tmp_path / "skills")
    tea = lib.dates.read()["tea/brew"]
    assert lib.view("beer/brew")["success"]
    assert lib.dates.read()["tea/brew"] == tea  # viewing beer/brew is not a use of tea/brew
    assert lib.dates.read()["beer/brew"].last_used is not None
    assert lib.write(SkillRequest("delete", "beer/brew"))["success"]
    assert lib.dates.read() == {"tea/brew": tea}  # tea/brew's dates outlive beer/brew
    assert lib.dates.by_name() == {"brew": tea}


def test_a_sidecar_keyed_by_bare_name_is_read_and_rewritten_by_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    lib = SkillLibrary(home / "skills", scan=lambda text: [])
    assert lib.write(SkillRequest("create", "brew", content=SKILL, category="tea"))["success"]
    old = {"created": "2025-01-02T03:04:05Z", "updated": "2025-01-03T00:00:00Z", "last_used": None}
    (home / "skills.meta.json").write_text(json.dumps({"v": 1, "skills": {"brew": old}}))
    assert lib.dates.read()["tea/brew"].created == moment("2025-01-02T03:04:05Z")
    assert main(["--home", str(home), "skills", "show", "tea/brew", "--dates"]) == 0
    assert "added 2025-01-02" in capsys.readouterr().out
    assert lib.view("tea/brew")["success"]  # the next change writes it by path
    stored = json.loads((home / "skills.meta.json").read_text(encoding="utf-8"))
    assert stored["v"] == 2 and list(stored["skills"]) == ["tea/brew"]
    # a bare name shared by two skills cannot be told apart: it is left out, never guessed
    (home / "skills" / "beer" / "brew").mkdir(parents=True)
    (home / "skills" / "beer" / "brew" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (home / "skills.meta.json").write_text(json.dumps({"v": 1, "skills": {"brew": old}}))
    assert lib.dates.read() == {}
    # the public pair: a bare name written is read as the one skill of that name
    (home / "skills" / "beer" / "brew" / "SKILL.md").unlink()
    (home / "skills" / "beer" / "brew").rmdir()
    assert lib.dates.write({"brew": EntryDates(1.0e9, 1.0e9)}) == 1
    assert lib.dates.read()["tea/brew"] == EntryDates(1.0e9, 1.0e9)


def test_changes_named_by_bare_name_reach_the_one_skill_of_that_name(tmp_path: Path) -> None:
    """What an import of an older bundle (dates keyed by bare name) does through the public
    methods: a bare name is the one skill of that name."""
    lib = SkillLibrary(tmp_path / "skills", scan=lambda text: [])
    assert lib.write(SkillRequest("create", "brew", content=SKILL, category="tea"))["success"]
    lib.dates.used("brew", now=2.0e9)
    assert set(lib.dates.read()) == {"tea/brew"}
    assert lib.dates.read()["tea/brew"].last_used == 2.0e9
