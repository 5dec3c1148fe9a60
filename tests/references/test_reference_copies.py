"""Copies of secrets: backup and editor copies of sensitive files, every ``.env`` variant,
and hard links (another name for a file that may live outside the workspace)."""

from __future__ import annotations

import os
from pathlib import Path, PurePath

import pytest
from reference_support import git, make_repo, recorded_opens, tokens_by_length

from hermes_core.config.settings import ReferencesSettings
from hermes_core.references import expand_references
from hermes_core.references.git import git_command
from hermes_core.references.paths import open_inside, resolve_reference_path
from hermes_core.references.refusal import Refused
from hermes_core.references.sensitive import backup_forms, sensitive_reason

#: Reported variants first, then the other endings and editor forms.
COPIES = [
    ".env~",
    ".env-local",
    ".env_prod",
    ".envrc.bak",
    ".netrc.bak",
    ".pgpass~",
    "master.key.bak",
    ".ENV.BAK",
    ".env\u200b",
    ".envrc~",
    ".netrc.orig",
    ".npmrc.old",
    ".pypirc.save",
    "server.pem.backup",
    "tls.key.tmp",
    "id_rsa.swp",
    ".id_rsa.swp",
    ".netrc.swp",
    "#.env#",
    "master.key.bak~",
    "master.key.orig.old.bak",
    "server.pem.~1~",
    "store.p12-old",
    "auth.json.bak",
    "token.json.orig",
    "credentials.json.save",
    ".ssh.bak/config",
    ".aws_old/config",
    "my_id_rsa",
    "deploy_id_ed25519.pub.bak",
    "kubeconfig",
    "staging.kubeconfig",
]


def expand(text: str, workspace: Path, home: Path) -> tuple[str, list[str]]:
    result = expand_references(
        text,
        workspace=workspace,
        context_length=1_000_000,
        count_tokens=tokens_by_length,
        settings=ReferencesSettings(),
        user_home=home,
        hermes_home=home / ".hermes",
    )
    return result.attached, result.warnings


@pytest.mark.parametrize("name", COPIES)
def test_copies_of_sensitive_files_are_sensitive(name: str) -> None:
    assert sensitive_reason(PurePath("/w", name), workspace=PurePath("/w")) is not None


@pytest.mark.parametrize(
    "name",
    [
        "main.py~",
        "notes.bak",
        "README.md.orig",
        ".gitignore.bak",
        "app.py.swp",
        "~",
        ".bak",
        "environment.py",
        "env.sh.old",
        "keys.py.tmp",
        "backup/main.py",
        "#main.py#",
    ],
)
def test_copies_of_ordinary_files_stay_ordinary(name: str) -> None:
    assert sensitive_reason(PurePath("/w", name), workspace=PurePath("/w")) is None


def test_the_reason_names_the_original() -> None:
    reason = sensitive_reason(PurePath("/w/master.key.bak"), workspace=PurePath("/w"))
    assert reason == (
        "master.key.bak is a copy of master.key, which looks like a key, token or credentials file"
    )
    assert backup_forms("a.KEY.Orig~") == ["a.KEY.Orig~", "a.KEY.Orig", "a.KEY"]
    assert backup_forms(".id_rsa.swp") == [".id_rsa.swp", ".id_rsa", "id_rsa"]


def test_any_name_starting_with_env_is_an_environment_file() -> None:
    for name in (".env-local", ".env_prod", ".envrc.bak", ".environment", ".ENVX"):
        reason = sensitive_reason(PurePath("/w", name), workspace=PurePath("/w"))
        assert reason is not None and "environment file" in reason


def test_copies_in_the_home_and_hermes_home() -> None:
    home = PurePath("/home/u")
    reason = sensitive_reason(home / ".bashrc.bak", workspace=home, user_home=home)
    assert reason is not None and "a copy of ~/.bashrc" in reason
    assert sensitive_reason(home / ".config.old/gh/hosts.yml", workspace=home) is not None
    hermes = PurePath("/srv/hermes")
    for name in (".env~", ".env.bak", ".env-prod"):
        assert "HERMES_HOME" in (sensitive_reason(hermes / name, hermes_home=hermes) or "")


def test_copies_are_refused_and_never_opened(workspace: Path, fake_home: Path) -> None:
    for number, name in enumerate(COPIES):
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"SECRET_{number}=x\n")
    text = " ".join(f'@file:"{name}"' for name in COPIES[:16])
    rest = " ".join(f'@file:"{name}"' for name in COPIES[16:])
    with recorded_opens() as opened:
        first, first_warnings = expand(text, workspace, fake_home)
        second, second_warnings = expand(rest, workspace, fake_home)
    assert "SECRET_" not in first + second
    warnings = first_warnings + second_warnings
    assert len(warnings) == len(COPIES) and all("is never read" in w for w in warnings)
    opened_names = {Path(p).name for p in opened}
    assert opened_names.isdisjoint(PurePath(name).name for name in COPIES)
    listing, warnings = expand("@folder:.", workspace, fake_home)
    assert warnings == []
    for name in COPIES:
        assert PurePath(name).parts[0] not in listing


def test_git_excludes_copies_in_the_pathspec_and_the_output(tmp_path: Path) -> None:
    """The pathspec keeps git away from the copies the excludes name (``git ls-files``
    proves it without the output filter); the filter drops the rest."""
    repo = make_repo(tmp_path / "repo")
    for number, name in enumerate(COPIES):
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"FIRST_{number}=x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "copies")
    for number, name in enumerate(COPIES):
        (repo / name).write_text(f"SECOND_{number}=x\n")
    git(repo, "add", *COPIES[::2])
    pathspec = git_command("diff")[git_command("diff").index("--") + 1 :]
    listed = git(repo, "ls-files", "-z", "--", *pathspec).split("\0")
    reported = {".env~", ".env-local", ".env_prod", ".envrc.bak", ".netrc.bak", ".pgpass~"}
    assert reported | {"master.key.bak", ".ssh.bak/config"} <= set(COPIES) - set(listed)
    assert "app.py" in listed
    attached, _warnings = expand("@diff @staged @git:1", repo, tmp_path / "home")
    assert "FIRST_" not in attached and "SECOND_" not in attached
    assert "+unstaged line" in attached


def test_a_hard_link_is_refused(workspace: Path, fake_home: Path) -> None:
    (fake_home / ".ssh").mkdir()
    key = fake_home / ".ssh" / "id_rsa"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    os.link(key, workspace / "notes.txt")
    attached, warnings = expand("@file:notes.txt", workspace, fake_home)
    assert "OPENSSH" not in attached
    assert warnings == [
        "@file:notes.txt was not attached: notes.txt is not read: it has other names (hard "
        "links); a hard link can point at a file outside the workspace. If it is yours, copy "
        "it (cp, not ln) and name the copy"
    ]


def test_a_hard_link_inside_the_workspace_is_refused_by_both_names(
    workspace: Path, fake_home: Path
) -> None:
    (workspace / "a.txt").write_text("A\n")
    os.link(workspace / "a.txt", workspace / "b.txt")
    for name in ("a.txt", "b.txt"):
        resolved = resolve_reference_path(workspace, name, user_home=fake_home)
        with pytest.raises(Refused, match="hard links"):
            open_inside(resolved)
    (workspace / "b.txt").unlink()  # one name again: fine
    attached, warnings = expand("@file:a.txt", workspace, fake_home)
    assert warnings == [] and "A" in attached
