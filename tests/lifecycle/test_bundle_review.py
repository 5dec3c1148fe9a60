"""The review of export/import (issue 28 item 3): each case a bundle once got wrong.

A hand-appended note travels as its own entry; a parent link out of the bundle, another
user's staged skill write, a file listed twice, a skill inside another skill and a per-user
MEMORY.md where the home shares one are refused before anything is written; a skill that
cannot be written is named, and an import run again finishes it."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bundle_homes import (
    alice_bundle,
    edit_lines,
    file_parts,
    home_state,
    reseal_manifest,
    rewrite_bundle,
    seed_files,
    seed_sessions,
)

from hermes_core.cli import main
from hermes_core.lifecycle.bundle_export import BundleParts, export_bundle
from hermes_core.lifecycle.bundle_format import BundleError, manifest_digest
from hermes_core.lifecycle.bundle_import import import_bundle
from hermes_core.memory.store import MemoryStore
from hermes_core.sessions.sqlite import SQLiteSessionStore


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return alice_bundle(tmp_path_factory.mktemp("review"))


@pytest.fixture
def target(tmp_path: Path) -> Iterator[BundleParts]:
    """A home where carol has a session."""
    store = SQLiteSessionStore(tmp_path / "target" / "state.db")
    store.open_session("carol-1", user_id="carol", title="carol's own")
    yield file_parts(tmp_path / "target", store)
    store.close()


def _state(parts: BundleParts) -> tuple[Any, dict[str, bytes]]:
    return home_state(parts)


def _skills(members: dict[str, bytes]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in members["skills.jsonl"].splitlines() if line]


def _put_skills(members: dict[str, bytes], entries: list[dict[str, Any]]) -> None:
    members["skills.jsonl"] = b"".join(json.dumps(e).encode() + b"\n" for e in entries)


def _circle(members: dict[str, bytes]) -> None:
    """a-3's parent is a-2: make a-2's parent a-3."""
    lines = [json.loads(line) for line in members["sessions.jsonl"].splitlines() if line]
    for line in lines:
        if line["id"] == "a-2":
            line["parent_session_id"] = "a-3"
    members["sessions.jsonl"] = b"".join(json.dumps(i).encode() + b"\n" for i in lines)


def _skill(name: str, file: str = "SKILL.md", data: str = "") -> dict[str, Any]:
    text = data or f"---\nname: {name.rpartition('/')[2]}\ndescription: planted\n---\nx\n"
    return {"skill": name, "file": file, "encoding": "utf-8", "data": text}


def test_an_appended_note_travels_as_its_own_entry(tmp_path: Path) -> None:
    """``echo note >> MEMORY.md``, export, import: the note is an entry of its own in the
    target, and ``remove`` of the entry it was glued to leaves it."""
    home = tmp_path / "source"
    source = MemoryStore(home / "memories", scanner=lambda text: [])
    assert source.add("memory", "alpha")["success"] and source.add("memory", "beta")["success"]
    with open(home / "memories" / "MEMORY.md", "a") as handle:
        handle.write("note\n")
    assert source.entries("memory") == ["alpha", "beta", "note"]
    sessions = SQLiteSessionStore(home / "state.db")
    export_bundle(tmp_path / "anon.zip", file_parts(home, sessions), user_id=None)
    sessions.close()
    other = tmp_path / "target"
    target_sessions = SQLiteSessionStore(other / "state.db")
    assert import_bundle(tmp_path / "anon.zip", file_parts(other, target_sessions)).memory_blocks
    target_sessions.close()
    imported = MemoryStore(other / "memories", scanner=lambda text: [])
    assert imported.entries("memory") == ["alpha", "beta", "note"]
    assert imported.remove("memory", "beta")["success"]
    assert imported.entries("memory") == ["alpha", "note"]


REFUSED: dict[str, tuple[Any, str]] = {
    "parent of another user": (
        edit_lines("sessions.jsonl", lambda s: s.__setitem__("parent_session_id", "carol-1")),
        "parent session 'carol-1' the bundle does not hold",
    ),
    "parents in a circle": (_circle, "goes round"),
    "another user's staged skill write": (
        edit_lines(
            "pending_skills.jsonl",
            lambda r: r.__setitem__("provenance", {**r["provenance"], "user_id": "bob"}),
        ),
        "pending_skills.jsonl line 1 belongs to another user",
    ),
    "a skill file twice": (
        lambda m: _put_skills(m, _skills(m) + _skills(m)[-1:]),
        "in the bundle twice",
    ),
    "a skill without SKILL.md": (
        lambda m: _put_skills(m, [_skill("nomd", "references/only.md", "orphan")]),
        "has no SKILL.md",
    ),
    "a skill inside a skill of the bundle": (
        lambda m: _put_skills(m, [_skill("brew"), _skill("brew/scripts")]),
        "lies inside its skill brew",
    ),
    "skill dates that are not dates": (
        lambda m: m.__setitem__(
            "skill_dates.json", b'{"v": 1, "skills": {"deploy": {"created": "yesterday"}}}'
        ),
        "no valid dates for 'deploy'",
    ),
    "a file where a folder must be": (
        lambda m: _put_skills(
            m, [_skill("s"), _skill("s", "assets/a", "1"), _skill("s", "assets/a/b", "2")]
        ),
        "as a file and as a folder",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_crafted_bundles_are_refused_before_any_write(
    case: str, bundle: Path, target: BundleParts, tmp_path: Path
) -> None:
    change, message = REFUSED[case]
    bad = rewrite_bundle(bundle, tmp_path / "bad.zip", change)
    before = _state(target)
    with pytest.raises(BundleError, match=message):
        import_bundle(bad, target)
    assert _state(target) == before
    assert target.store.list_sessions(user_id="alice") == []


def test_a_skill_inside_a_skill_of_the_target_is_a_collision(
    bundle: Path, target: BundleParts, tmp_path: Path
) -> None:
    brew = target.skills_root / "brew"
    brew.mkdir(parents=True)
    (brew / "SKILL.md").write_text("---\nname: brew\ndescription: tea\n---\nsteep\n")
    bad = rewrite_bundle(
        bundle, tmp_path / "nest.zip", lambda m: _put_skills(m, [_skill("brew/references")])
    )
    before = _state(target)
    with pytest.raises(BundleError, match=r"brew/references \(inside the skill brew\)"):
        import_bundle(bad, target)
    assert _state(target) == before
    report = import_bundle(bad, target, skip_existing=True)
    assert report.skills == 0 and report.sessions == 3
    assert report.skipped["skills"] == ["brew/references (inside the skill brew)"]
    assert sorted(p.name for p in brew.iterdir()) == ["SKILL.md"]


def test_a_skill_whose_name_the_target_has_in_another_category_is_a_collision(
    bundle: Path, target: BundleParts
) -> None:
    """Names are unique in a library (the model views a skill by name): the bundle's
    devops/deploy cannot land beside the target's ops/deploy."""
    ops = target.skills_root / "ops" / "deploy"
    ops.mkdir(parents=True)
    (ops / "SKILL.md").write_text("---\nname: deploy\ndescription: ours\n---\nship\n")
    before = _state(target)
    with pytest.raises(BundleError, match=r"a skill called deploy exists: ops/deploy"):
        import_bundle(bundle, target)
    assert _state(target) == before
    report = import_bundle(bundle, target, skip_existing=True)
    assert [s.split(" ")[0] for s in report.skipped["skills"]] == ["devops/deploy"]
    assert not (target.skills_root / "devops" / "deploy").exists()


def test_a_skill_that_cannot_be_written_is_named_and_finished_later(
    bundle: Path, target: BundleParts
) -> None:
    """The checks pass; the library's lock is a link (found only when writing): the error
    names the skill and what was imported, nothing of the skill is left, and an import run
    again with --skip-existing writes it."""
    target.skills_root.mkdir(parents=True)
    (target.skills_root / ".lock").symlink_to("/nowhere")
    with pytest.raises(BundleError, match="the skill devops/deploy could not be written") as err:
        import_bundle(bundle, target)
    assert "Skills written: none" in str(err.value) and "--skip-existing" in str(err.value)
    assert [p.name for p in target.skills_root.iterdir()] == [".lock"]
    (target.skills_root / ".lock").unlink()
    stale = target.skills_root / ".import-deploy-0000"  # an import killed midway left it
    stale.mkdir()
    (stale / "SKILL.md").write_text("half")
    report = import_bundle(bundle, target, skip_existing=True)
    assert not stale.exists()
    assert report.skills == 1 and report.skipped["sessions"] == ["a-1", "a-2", "a-3"]
    script = target.skills_root / "devops" / "deploy" / "scripts" / "ship.sh"
    assert script.stat().st_mode & 0o777 == 0o700
    assert (script.parent.parent / "SKILL.md").stat().st_mode & 0o777 == 0o600


def test_a_per_user_memory_md_needs_a_per_user_home(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "source"
    home.mkdir()
    store = SQLiteSessionStore(home / "state.db")
    seed_sessions(store)
    seed_files(home)
    (home / "memories" / "users" / "alice" / "MEMORY.md").write_text("alice's project notes")
    bundle = tmp_path / "alice.zip"
    export_bundle(bundle, file_parts(home, store, per_user_memory=True), user_id="alice")
    store.close()
    shared = tmp_path / "shared"
    shared.mkdir()
    assert main(["import", "--home", str(shared), str(bundle)]) == 1
    assert "memory.per_user_memory: true" in capsys.readouterr().err
    assert not (shared / "memories").exists() and not (shared / "skills").exists()
    per_user = tmp_path / "per-user"
    per_user.mkdir()
    (per_user / "config.yaml").write_text("memory:\n  per_user_memory: true\n")
    assert main(["import", "--home", str(per_user), str(bundle)]) == 0
    capsys.readouterr()
    alice = MemoryStore(per_user / "memories", user_id="alice", per_user_memory=True)
    assert alice.entries("memory") == ["alice's project notes"]


def _members(bundle: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(bundle) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_the_manifest_is_covered_and_its_counts_are_true(
    bundle: Path, target: BundleParts, tmp_path: Path
) -> None:
    members = _members(bundle)
    manifest = json.loads(members["manifest.json"])
    edited = tmp_path / "edited.zip"
    with zipfile.ZipFile(edited, "w") as archive:
        archive.writestr("manifest.json", json.dumps({**manifest, "notes": ["all is well"]}))
        for name, data in members.items():
            if name != "manifest.json":
                archive.writestr(name, data)
    with pytest.raises(BundleError, match="checksum does not match the manifest"):
        import_bundle(edited, target)
    # resealed by hand: the digest fits, the counts do not
    fitted = {n: d for n, d in members.items() if n != "manifest.json"}
    wrong = {**manifest}
    reseal_manifest(wrong, fitted)
    wrong["counts"] = {**wrong["counts"], "sessions": 1}
    wrong["sha256"] = manifest_digest(wrong)
    counted = tmp_path / "counted.zip"
    with zipfile.ZipFile(counted, "w") as archive:
        archive.writestr("manifest.json", json.dumps(wrong))
        for name, data in fitted.items():
            archive.writestr(name, data)
    with pytest.raises(BundleError, match="sessions: 1 stated, 3 held"):
        import_bundle(counted, target)
    assert target.store.list_sessions(user_id="alice") == []


def test_a_repeated_member_name_is_refused(
    bundle: Path, target: BundleParts, tmp_path: Path
) -> None:
    members = _members(bundle)
    twice = tmp_path / "twice.zip"
    with zipfile.ZipFile(twice, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        with pytest.warns(UserWarning, match="Duplicate name"):
            archive.writestr("skills.jsonl", b"")
    with pytest.raises(BundleError, match=r"skills\.jsonl more than once"):
        import_bundle(twice, target)
    assert target.store.list_sessions(user_id="alice") == []
