"""Issue 11 §2.5: ``memory reset --user bob`` deleted the shared MEMORY.md (Alice's entries
included) when ``per_user_memory`` is false. A reset for a user deletes only what is theirs;
a shared target named explicitly is refused with the reason, and nothing is deleted."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.cli import main
from hermes_core.memory import MemoryStore

pytestmark = pytest.mark.usefixtures("isolated_home")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def memories(home: Path) -> Path:
    return home / "memories"


def fill(capsys: pytest.CaptureFixture[str]) -> None:
    for user in ("alice", "bob"):
        assert run(capsys, "memory", "add", "--user", user, f"{user}: shared fact")[0] == 0
        assert run(capsys, "memory", "add", "--user", user, "--target", "user", user)[0] == 0


def test_reset_for_a_user_keeps_the_shared_memory_file(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    fill(capsys)
    shared = memories(isolated_home) / "MEMORY.md"
    assert shared.read_text(encoding="utf-8") == "alice: shared fact\n§\nbob: shared fact\n"
    code, out, err = run(capsys, "memory", "reset", "--user", "bob", "--yes")
    assert code == 0
    assert "is shared by every user of this home" in err and "per_user_memory" in err
    assert f"will delete {shared}" not in out
    assert not (memories(isolated_home) / "users" / "bob" / "USER.md").exists()
    assert shared.read_text(encoding="utf-8") == "alice: shared fact\n§\nbob: shared fact\n"
    assert (memories(isolated_home) / "users" / "alice" / "USER.md").exists()


def test_reset_of_the_shared_target_for_a_user_is_refused(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    fill(capsys)
    before = sorted(p.relative_to(isolated_home) for p in isolated_home.rglob("*.md"))
    code, _, err = run(capsys, "memory", "reset", "--user", "bob", "--target", "memory", "--yes")
    assert code == 1 and "is shared by every user" in err and "Nothing was deleted" in err
    assert "without --user" in err
    assert sorted(p.relative_to(isolated_home) for p in isolated_home.rglob("*.md")) == before


def test_with_per_user_memory_a_reset_deletes_that_users_files_only(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    (isolated_home / "config.yaml").write_text("memory:\n  per_user_memory: true\n")
    fill(capsys)
    code, _, err = run(capsys, "memory", "reset", "--user", "bob", "--yes")
    assert code == 0 and "shared" not in err
    bob, alice = (
        memories(isolated_home) / "users" / "bob",
        memories(isolated_home) / "users" / "alice",
    )
    assert not (bob / "MEMORY.md").exists() and not (bob / "USER.md").exists()
    assert (alice / "MEMORY.md").exists() and (alice / "USER.md").exists()
    assert sorted(p.name.split(".bak.")[0] for p in bob.glob("*.bak.*")) == ["MEMORY.md", "USER.md"]


def test_the_store_refuses_a_shared_reset_too(memdir: Path) -> None:
    shared = MemoryStore(memdir)
    assert shared.add("memory", "alice's fact")["success"]
    result = MemoryStore(memdir, user_id="bob").reset("memory")
    assert result["success"] is False and result["reason"] == "shared"
    assert shared.entries("memory") == ["alice's fact"]


def test_reset_refuses_a_link_out_of_the_home_before_asking(
    capsys: pytest.CaptureFixture[str], isolated_home: Path, tmp_path: Path
) -> None:
    target = tmp_path / "dotfiles-memory.md"
    target.write_text("not ours", encoding="utf-8")
    memories(isolated_home).mkdir(parents=True)
    (memories(isolated_home) / "MEMORY.md").symlink_to(target)
    code, out, err = run(capsys, "memory", "reset", "--yes")
    assert code == 1 and "outside the memory home" in err and "will delete" not in out
    assert target.read_text(encoding="utf-8") == "not ours"
    assert (memories(isolated_home) / "MEMORY.md").is_symlink()


def test_reset_of_a_link_inside_the_home_removes_the_link_only(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    real = memories(isolated_home) / "archive" / "MEMORY.md"
    real.parent.mkdir(parents=True)
    real.write_text("kept where it is", encoding="utf-8")
    (memories(isolated_home) / "MEMORY.md").symlink_to(Path("archive", "MEMORY.md"))
    code, out, _ = run(capsys, "memory", "reset", "--target", "memory", "--yes")
    assert code == 0 and "a link to" in out
    assert not (memories(isolated_home) / "MEMORY.md").exists()
    assert real.read_text(encoding="utf-8") == "kept where it is"
