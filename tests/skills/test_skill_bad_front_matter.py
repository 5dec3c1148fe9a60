"""One hand-edited SKILL.md whose front matter YAML reads but cannot build (an impossible
date, an out-of-range time zone) is left out with a reason; the rest keeps working."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from skill_support import library, skill_md

from hermes_core.cli import main
from hermes_core.skills.frontmatter import parse_skill

BAD_VALUES = [
    "created: 2024-02-30",
    "created: 2024-13-01",
    "created: 2024-01-01 25:00:00",
    "created: 2001-12-14t21:59:43.10-25:00",
    "metadata: {released: [2023-02-29]}",
]


@pytest.mark.parametrize("line", BAD_VALUES)
def test_parse_skill_reports_a_value_yaml_cannot_build(line: str) -> None:
    problem = parse_skill(skill_md("deploy", extra=line + "\n"), "deploy")
    assert isinstance(problem, str)
    assert "front matter holds a value YAML cannot read" in problem


def plant(root: Path, relative: str, text: str) -> None:
    path = root / relative / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_the_index_skips_the_bad_skill_with_a_warning_naming_it(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    plant(root, "good", skill_md("good", "Use the good one."))
    plant(root, "ops/bad", skill_md("bad", extra="created: 2024-02-30\n"))
    lib = library(root)
    skills, problems = lib.scan_all()
    assert [s.name for s in skills] == ["good"]
    assert [p.path for p in problems] == ["ops/bad"]
    with caplog.at_level(logging.WARNING, logger="hermes_context.skills"):
        index = lib.index()
    assert "good: Use the good one." in index and "bad" not in index
    assert "ops/bad" in caplog.text and "day is out of range" in caplog.text


def test_the_cli_lists_the_rest_and_shows_the_bad_one_with_its_problem(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    root = isolated_home / "skills"
    plant(root, "good", skill_md("good"))
    plant(root, "bad", skill_md("bad", extra="created: 2024-02-30\n"))
    assert main(["skills", "list"]) == 0
    out, err = capsys.readouterr()
    assert "good" in out and "skipped bad: the front matter holds a value" in err
    assert main(["skills", "list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["skipped"][0]["path"] == "bad"
    assert main(["skills", "show", "bad"]) == 0
    out, err = capsys.readouterr()
    assert "created: 2024-02-30" in out
    assert "warning: bad is not a valid skill: the front matter holds a value" in err
    assert "Traceback" not in err
    assert main(["skills", "show", "bad", "--json"]) == 0
    assert "YAML cannot read" in json.loads(capsys.readouterr().out)["problem"]
