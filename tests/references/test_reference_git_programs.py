"""A repository's configuration cannot make ``@diff``, ``@staged`` or ``@git:N`` run a
program: signature checks, lazy fetches of a partial clone, submodule work trees.

Each test first shows that plain git, given the same repository, does run the planted
script (so the setup is real), then that the reference does not.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from reference_support import GIT_ENV, git, make_repo, tokens_by_length

from hermes_core.config.settings import ReferencesSettings
from hermes_core.references import expand_references
from hermes_core.references.git import git_command

#: The three signature formats git knows, each verified by its own program.
SIGNATURES = {
    "openpgp": ("gpg.program", "PGP SIGNATURE"),
    "ssh": ("gpg.ssh.program", "SSH SIGNATURE"),
    "x509": ("gpg.x509.program", "SIGNED MESSAGE"),
}


def expand(text: str, workspace: Path) -> tuple[str, list[str]]:
    result = expand_references(
        text,
        workspace=workspace,
        context_length=1_000_000,
        count_tokens=tokens_by_length,
        settings=ReferencesSettings(),
        user_home=Path("/nonexistent-home"),
    )
    return result.attached, result.warnings


def marking_script(folder: Path, name: str, stdin: str = "cat >/dev/null") -> tuple[Path, Path]:
    """A script that leaves a mark when it runs, does ``stdin`` (a filter copies it through,
    a fetch must not wait for it) and fails unless it is a filter."""
    mark = folder / f"{name}.ran"
    script = folder / f"{name}.sh"
    status = 0 if stdin == "cat" else 1
    script.write_text(f"#!/bin/sh\ntouch '{mark}'\n{stdin}\nexit {status}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script, mark


def plain_git(repo: Path, *args: str) -> None:
    """git as a user would run it: the repository's configuration in full force."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV, HOME=str(repo.parent))
    subprocess.run(
        ["git", *args],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
        timeout=120,  # a safety net only: nothing here waits on input
    )


def signed_commit(repo: Path, tmp_path: Path, kind: str, banner: str) -> None:
    """A commit on top of HEAD carrying a ``gpgsig`` header, which git verifies when asked."""
    (repo / f"{kind}.txt").write_text(f"{kind}\n")
    git(repo, "add", f"{kind}.txt")
    tree = git(repo, "write-tree").strip()
    parent = git(repo, "rev-parse", "HEAD").strip()
    raw = tmp_path / f"{kind}.commit"
    raw.write_text(
        f"tree {tree}\nparent {parent}\n"
        "author Test <test@example.invalid> 1700000000 +0000\n"
        "committer Test <test@example.invalid> 1700000000 +0000\n"
        f"gpgsig -----BEGIN {banner}-----\n \n AAAA\n -----END {banner}-----\n"
        f"\nsigned with {kind}\n"
    )
    commit = git(repo, "hash-object", "-t", "commit", "-w", str(raw)).strip()
    git(repo, "update-ref", "HEAD", commit)


@pytest.mark.parametrize(
    ("key", "value"),
    [("log.showSignature", "true"), ("format.pretty", "format:%H %G? %GS%n%n%B")],
)
def test_signature_programs_never_run(tmp_path: Path, key: str, value: str) -> None:
    repo = make_repo(tmp_path / "repo")
    marks = []
    for kind, (program_key, banner) in SIGNATURES.items():
        signed_commit(repo, tmp_path, kind, banner)
        script, mark = marking_script(tmp_path, kind)
        git(repo, "config", program_key, str(script))
        marks.append(mark)
    git(repo, "config", "gpg.openpgp.program", str(marking_script(tmp_path, "openpgp")[0]))
    (tmp_path / "allowed_signers").write_text("test@example.invalid ssh-ed25519 AAAA\n")
    git(repo, "config", "gpg.ssh.allowedSignersFile", str(tmp_path / "allowed_signers"))
    git(repo, "config", key, value)
    plain_git(repo, "log", "-3", "-p")
    assert all(mark.exists() for mark in marks), "the setup must make plain git run them"
    for mark in marks:
        mark.unlink()
    attached, warnings = expand("@git:3 @git:5 @diff @staged", repo)
    assert warnings == []
    assert "signed with openpgp" in attached and "signed with x509" in attached
    assert [mark for mark in marks if mark.exists()] == []


@pytest.mark.parametrize("transport", ["ssh", "local"])
def test_a_partial_clone_never_fetches(tmp_path: Path, transport: str) -> None:
    """A blob missing from a promisor repository makes plain git fetch it, through a
    command the repository names; the reference fails instead."""
    repo = make_repo(tmp_path / "repo")
    script, mark = marking_script(tmp_path, "fetch", stdin=":")
    git(repo, "config", "core.repositoryformatversion", "1")
    git(repo, "config", "extensions.partialClone", "origin")
    git(repo, "config", "remote.origin.promisor", "true")
    if transport == "ssh":
        git(repo, "config", "remote.origin.url", "ssh://example.invalid/repo")
        git(repo, "config", "core.sshCommand", str(script))
    else:
        git(repo, "config", "remote.origin.url", str(tmp_path / "elsewhere"))
        git(repo, "config", "remote.origin.uploadpack", str(script))
    git(repo, "config", "protocol.allow", "always")
    blob = git(repo, "rev-parse", "HEAD:app.py").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    plain_git(repo, "log", "-1", "-p")
    assert mark.exists(), "the setup must make plain git fetch"
    mark.unlink()
    _attached, warnings = expand("@git:1", repo)
    assert len(warnings) == 1 and "git failed" in warnings[0]
    assert not mark.exists()


def test_submodule_work_trees_are_not_inspected(tmp_path: Path) -> None:
    """A submodule's own clean filter would run when ``git diff`` checks its work tree."""
    repo = make_repo(tmp_path / "repo")
    sub = repo / "sub"
    sub.mkdir()
    git(sub, "init", "-q")
    (sub / "f.txt").write_text("one\n")
    git(sub, "add", "f.txt")
    git(sub, "commit", "-q", "-m", "sub")
    script, mark = marking_script(tmp_path, "filter", stdin="cat")
    (sub / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    git(sub, "config", "filter.evil.clean", str(script))
    git(repo, "add", "sub")
    (sub / "f.txt").write_text("two\n")
    plain_git(repo, "diff")
    assert mark.exists(), "the setup must make plain git run the filter"
    mark.unlink()
    (sub / "f.txt").write_text("three\n")
    attached, warnings = expand("@diff @staged @git:2", repo)
    assert warnings == [] and "+unstaged line" in attached
    assert not mark.exists()


@pytest.mark.parametrize("kind", ["diff", "staged", "git"])
def test_every_override_is_on_the_command_line(kind: str) -> None:
    command = git_command(kind, 2 if kind == "git" else None)
    settings = {command[i + 1] for i, word in enumerate(command) if word == "-c"}
    for program in (
        "gpg.program",
        "gpg.openpgp.program",
        "gpg.x509.program",
        "gpg.ssh.program",
        "core.sshCommand",
        "core.hooksPath",
    ):
        assert f"{program}={os.devnull}" in settings
    for setting in (
        "log.showSignature=false",
        "protocol.allow=never",
        "protocol.ssh.allow=never",
        "protocol.file.allow=never",
        "protocol.ext.allow=never",
        "core.fsmonitor=false",
        "diff.external=",
        "credential.helper=",
    ):
        assert setting in settings
    flags = command[: command.index("--")]
    assert "--ignore-submodules=dirty" in flags and "--no-textconv" in flags
    if kind == "git":
        assert "--no-show-signature" in flags and "--pretty=medium" in flags
