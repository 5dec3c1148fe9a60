"""Several processes writing one library at once: nothing is lost, nothing is torn."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest
from skill_support import skill_md

from hermes_core.skills import SkillLibrary
from hermes_core.skills.frontmatter import ParsedSkill, parse_skill

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
FORK = multiprocessing.get_context("fork") if hasattr(os, "fork") else None
WORKERS = 4
PATCHES = 10  # forty patches racing on one file; two creates per worker
MARKER = "<!-- more steps above -->"


def _work(root: str, worker: int, start: object) -> None:
    """Create skills of its own, patch the shared one, rewrite a shared support file and
    race the others to create one name; any refusal but the expected ones fails."""
    lib = SkillLibrary(root)  # the real scanner, the real lock
    start.wait()  # type: ignore[attr-defined]  # a multiprocessing.Event
    for n in range(PATCHES):
        line = f"- step from worker {worker} number {n}\n"
        result = lib.patch("shared", MARKER, line + MARKER)
        if not result["success"]:
            raise SystemExit(f"patch failed: {result}")
        if n % 5 == 0:
            own = f"w{worker}-{n}"
            created = lib.create(own, skill_md(own, f"Worker {worker} skill {n}."), f"c{worker}")
            if not created["success"]:
                raise SystemExit(f"create failed: {created}")
        body = f"written by worker {worker} round {n}\n" * 200
        written = lib.write_file("shared", "references/log.md", body)
        if not written["success"]:
            raise SystemExit(f"write_file failed: {written}")
    race = lib.create("contested", skill_md("contested", f"Won by worker {worker}."))
    if not race["success"] and race.get("reason") != "exists":
        raise SystemExit(f"contested create failed: {race}")


def test_four_processes_patching_one_skill_lose_no_update(tmp_path: Path) -> None:
    assert FORK is not None
    root = tmp_path / "skills"
    lib = SkillLibrary(root)
    assert lib.create("shared", skill_md("shared", body=f"# Steps\n{MARKER}\n"))["success"]
    start = FORK.Event()
    procs = [FORK.Process(target=_work, args=(str(root), w, start)) for w in range(WORKERS)]
    for proc in procs:
        proc.start()
    start.set()
    views = 0
    while any(proc.is_alive() for proc in procs):  # read while they write: never a torn file
        view = lib.view("shared")
        assert view["success"] and isinstance(parse_skill(view["content"], "shared"), ParsedSkill)
        log = lib.view("shared", "references/log.md")
        if log["success"]:
            lines = set(log["content"].splitlines())
            assert len(lines) == 1 and len(log["content"].splitlines()) == 200
        views += 1
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    assert views > 0
    text = (root / "shared" / "SKILL.md").read_text(encoding="utf-8")
    steps = [line for line in text.splitlines() if line.startswith("- step from worker")]
    assert sorted(steps) == sorted(
        f"- step from worker {w} number {n}" for w in range(WORKERS) for n in range(PATCHES)
    )
    assert text.rstrip().endswith(MARKER)
    skills, problems = lib.scan_all()
    assert problems == []
    assert sorted(s.path for s in skills) == sorted(
        ["shared", "contested"]
        + [f"c{w}/w{w}-{n}" for w in range(WORKERS) for n in range(0, PATCHES, 5)]
    )
    contested = lib.view("contested")["description"]
    assert contested.startswith("Won by worker ")
    leftovers = [p.name for p in root.rglob(".*") if p.name != ".lock"]
    assert leftovers == []  # no temp files, no half-deleted folders
