"""``hermes-context skills ...`` end to end, with the real built-in threat scanner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from skill_support import POISON, skill_md

from hermes_core.cli import main
from hermes_core.skills import SkillLibrary, SkillTool

pytestmark = pytest.mark.usefixtures("isolated_home")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def plant(home: Path, relative: str, text: str) -> Path:
    path = home / "skills" / relative / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_list_shows_name_category_and_description(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    assert run(capsys, "skills", "list") == (0, "", f"no skills in {isolated_home / 'skills'}\n")
    plant(isolated_home, "devops/deploy", skill_md("deploy", extra="tags: [ops]\n"))
    plant(isolated_home, "lint", skill_md("lint", "Run the linters."))
    plant(isolated_home, "broken", "no front matter")
    code, out, err = run(capsys, "skills", "list")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["name", "category", "description"]
    assert lines[1].split()[:2] == ["deploy", "devops"] and "Run the linters." in lines[2]
    assert "skipped broken: SKILL.md must start with YAML front matter" in err
    code, out, _ = run(capsys, "skills", "list", "--json")
    data = json.loads(out)
    assert [s["name"] for s in data["skills"]] == ["deploy", "lint"]
    assert data["skills"][0]["tags"] == ["ops"] and data["skills"][0]["category"] == "devops"
    assert data["skipped"][0]["path"] == "broken"


def test_show_prints_the_skill_and_json_splits_front_matter_and_body(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    text = skill_md("deploy", extra="version: 2\ncreated: 2024-05-01\n")
    plant(isolated_home, "devops/deploy", text)
    code, out, err = run(capsys, "skills", "show", "deploy")
    assert code == 0 and err == ""
    assert out == f"# {isolated_home / 'skills' / 'devops/deploy' / 'SKILL.md'}\n{text}"
    code, out, _ = run(capsys, "skills", "show", "devops/deploy", "--json")
    data = json.loads(out)
    assert data["name"] == "deploy" and data["version"] == "2" and data["category"] == "devops"
    assert data["front_matter"]["created"] == "2024-05-01"
    assert data["body"].startswith("# Steps") and data["threats"] == []


def test_an_unknown_skill_exits_1_and_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "skills", "show", "nope")
    assert code == 1 and "no skill called 'nope'" in err
    assert run(capsys, "skills", "show", "../etc")[0] == 1
    assert run(capsys, "skills")[0] == 2
    assert run(capsys, "skills", "frobnicate")[0] == 2


def test_show_escapes_control_characters_and_warns_about_threats(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    plant(isolated_home, "evil", skill_md("evil", body=f"\x1b[8m{POISON}\x1b[0m\n"))
    code, out, err = run(capsys, "skills", "show", "evil")
    assert code == 0 and "\x1b" not in out and "\\x1b[8m" in out
    assert "matches threat pattern(s)" in err and "not shown" in err
    tool = SkillTool(SkillLibrary(isolated_home / "skills"))
    assert json.loads(tool.handle({"action": "view", "name": "evil"}))["reason"] == "threat"


def test_pending_approve_and_reject_with_write_approval_stage(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    (isolated_home / "config.yaml").write_text("skills:\n  write_approval: stage\n")
    lib = SkillLibrary(isolated_home / "skills", approval="stage")
    first = lib.create("one", skill_md("one"))["pending_id"]
    second = lib.create("two", skill_md("two"))["pending_id"]
    code, out, _ = run(capsys, "skills", "pending")
    assert code == 0 and first in out and "create one" in out and second in out
    code, out, _ = run(capsys, "skills", "pending", "--json")
    assert [r["id"] for r in json.loads(out)["pending"]] == [first, second]
    code, out, _ = run(capsys, "skills", "approve", first)
    assert code == 0 and "applied" in out
    assert (isolated_home / "skills" / "one" / "SKILL.md").exists()
    code, out, _ = run(capsys, "skills", "reject", "all")
    assert code == 0 and second in out
    assert not (isolated_home / "skills" / "two").exists()
    assert run(capsys, "skills", "pending")[2] == "no pending skill writes\n"
    code, _, err = run(capsys, "skills", "approve", "deadbeef")
    assert code == 1 and "no pending skill write deadbeef" in err


def test_a_skill_the_tool_creates_is_listed_and_indexed(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    from hermes_core.host import Hermes
    from hermes_core.skills.home import open_library

    with Hermes.from_config({}, home=isolated_home) as host:
        tool = SkillTool(open_library(host.home, host.settings))
    args = {"action": "create", "name": "rebase", "content": skill_md("rebase", "Rebase safely.")}
    assert json.loads(tool.handle(json.dumps(args)))["success"]
    code, out, _ = run(capsys, "skills", "list")
    assert code == 0 and "rebase" in out and "Rebase safely." in out
    assert "rebase: Rebase safely." in tool.library.index().splitlines()
