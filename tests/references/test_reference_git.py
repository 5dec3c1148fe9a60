"""``@diff``, ``@staged`` and ``@git:N`` against real repositories made here."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from reference_support import git, make_repo, tokens_by_length

from hermes_core.config.settings import ReferencesSettings
from hermes_core.references import expand_references
from hermes_core.references.git import filter_sensitive, git_command, run_git
from hermes_core.references.refusal import Refused


def expand(text: str, workspace: Path | None) -> tuple[str, list[str]]:
    result = expand_references(
        text,
        workspace=workspace,
        context_length=1_000_000,
        count_tokens=tokens_by_length,
        settings=ReferencesSettings(),
        user_home=Path("/nonexistent-home"),
    )
    return result.attached, result.warnings


def test_diff_staged_and_log(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    diff = run_git(repo, "diff").text
    assert "+unstaged line" in diff and "print(2)" not in diff
    staged = run_git(repo, "staged").text
    assert "+print(2)" in staged and "-print(1)" in staged and "unstaged" not in staged
    last = run_git(repo, "git", 1).text
    assert "second commit" in last and "first commit" not in last and "+print(1)" in last
    both = run_git(repo, "git", 2).text
    assert "second commit" in both and "first commit" in both and "+hello" in both


def test_expansion_labels_each_git_reference(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    attached, warnings = expand("Review @diff, @staged and @git:1", repo)
    assert warnings == []
    assert "@diff (git diff" in attached and "+unstaged line" in attached
    assert "@staged (git diff --staged" in attached and "+print(2)" in attached
    assert "@git:1 (git log -1 -p: the last commit" in attached


def test_nothing_to_show_is_said_plainly(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "third")
    attached, warnings = expand("@diff @staged", repo)
    assert warnings == []
    assert "(no unstaged changes)" in attached and "(nothing staged)" in attached


def test_not_a_repository_and_no_commits(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(Refused, match="not inside a git repository"):
        run_git(plain, "diff")
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    with pytest.raises(Refused, match="no commits"):
        run_git(empty, "git", 1)


def test_git_references_need_a_workspace() -> None:
    _attached, warnings = expand("@diff @staged @git:2", None)
    assert len(warnings) == 3 and all("no workspace" in w for w in warnings)


def test_sensitive_files_never_appear_in_git_output(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / ".env").write_text("API_KEY=first\n")
    (repo / "auth.json").write_text('{"token": "first"}\n')  # not in the pathspec excludes
    (repo / "config").mkdir()
    (repo / "config" / "prod.env").write_text("DB_PASSWORD=first\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add secrets")
    (repo / ".env").write_text("API_KEY=second\n")
    (repo / "auth.json").write_text('{"token": "second"}\n')
    (repo / "config" / "prod.env").write_text("DB_PASSWORD=second\n")
    git(repo, "add", "auth.json")
    attached, warnings = expand("@diff @staged @git:1", repo)
    for word in ("first", "second"):
        assert f"API_KEY={word}" not in attached
        assert f'"token": "{word}"' not in attached
        assert f"DB_PASSWORD={word}" not in attached
    assert "+unstaged line" in attached  # the rest is still there
    assert any("auth.json" in w and "sensitive" in w for w in warnings)


def test_the_output_stays_inside_a_workspace_below_the_repository_root(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "mod.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "pkg")
    (repo / "pkg" / "mod.py").write_text("x = 2\n")
    diff = run_git(repo / "pkg", "diff").text
    assert "+x = 2" in diff and "unstaged line" not in diff


def test_the_repository_cannot_run_programs(tmp_path: Path) -> None:
    """External diff, textconv, fsmonitor and pager settings of the repository are all
    pointed at a script that leaves a mark; none of them runs."""
    repo = make_repo(tmp_path / "repo")
    mark = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f'#!/bin/sh\ntouch {mark}\ncat "$@" 2>/dev/null\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    (repo / ".gitattributes").write_text("* diff=evil\n")
    for key in ("diff.evil.textconv", "diff.evil.command", "diff.external", "core.pager"):
        git(repo, "config", key, str(script))
    git(repo, "config", "core.fsmonitor", str(script))
    attached, warnings = expand("@diff @staged @git:2", repo)
    assert warnings == []
    assert "+unstaged line" in attached and "+print(2)" in attached
    assert not mark.exists()


def test_the_callers_git_environment_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    other = make_repo(tmp_path / "other")
    (other / "README.md").write_text("other repository\n")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    assert "+unstaged line" in run_git(repo, "diff").text


def test_the_command_is_fixed() -> None:
    command = git_command("git", 3)
    assert command[0] == "git" and "-3" in command and "--no-ext-diff" in command
    assert "--no-textconv" in command and command[command.index("--") + 1] == "."
    for bad in (0, 51, None):
        with pytest.raises(ValueError, match="no git command"):
            git_command("git", bad)
    with pytest.raises(ValueError, match="no git command"):
        git_command("push")


def test_the_output_filter_fails_closed() -> None:
    output = (
        "commit abc\n\n    message\n\n"
        "diff --git a/ok.py b/ok.py\n--- a/ok.py\n+++ b/ok.py\n@@ -1 +1 @@\n-a\n+b\n"
        'diff --git "a/sp ace/.env" "b/sp ace/.env"\n--- "a/sp ace/.env"\n'
        '+++ "b/sp ace/.env"\n@@ -1 +1 @@\n-K=1\n+K=2\n'
        "diff --git a/id_rsa b/id_rsa\nold mode 100644\nnew mode 100600\n"
        "diff --git garbled\n@@ -1 +1 @@\n+hidden\n"
    )
    kept, left_out = filter_sensitive(output)
    assert "+b" in kept and "message" in kept
    assert "K=2" not in kept and "id_rsa" not in kept and "hidden" not in kept
    assert "sp ace/.env" in left_out and "id_rsa" in left_out
    assert any("could not be read" in name for name in left_out)
