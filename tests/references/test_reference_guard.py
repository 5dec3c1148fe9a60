"""The workspace boundary and the deny list: what a path reference may read, and proof that
a refused file is never opened."""

from __future__ import annotations

import os
from pathlib import Path, PurePath

import pytest
from reference_support import names_opened, recorded_opens, tokens_by_length

from hermes_core.config.settings import ReferencesSettings
from hermes_core.references import expand_references
from hermes_core.references import paths as paths_module
from hermes_core.references.paths import open_inside, resolve_reference_path
from hermes_core.references.refusal import Refused
from hermes_core.references.sensitive import sensitive_reason


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


@pytest.mark.parametrize(
    "name",
    [
        ".env",
        ".ENV",
        ".env.local",
        "prod.env",
        ".envrc",
        "id_rsa",
        "id_ed25519.pub",
        "server.pem",
        "tls.key",
        "store.p12",
        ".ssh/config",
        ".aws/credentials",
        ".gnupg/pubring.kbx",
        ".netrc",
        ".pgpass",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".docker/config.json",
        ".kube/config",
        "credentials.json",
        "gcp-credentials.yaml",
        "token.json",
        "token_cache.json",
        "client_secret_123.json",
        "secrets.yaml",
        ".config/gh/hosts.yml",
        "terraform.tfvars",
        "auth.json",
        ".bash_history",
    ],
)
def test_the_deny_list(name: str) -> None:
    path = PurePath("/w", name)
    assert sensitive_reason(path, workspace=PurePath("/w")) is not None


@pytest.mark.parametrize(
    "name",
    ["src/main.py", "README.md", "environment.py", "tokens.py", "keys/README", "docs/env.md"],
)
def test_ordinary_files_are_allowed(name: str) -> None:
    assert sensitive_reason(PurePath("/w", name), workspace=PurePath("/w")) is None


def test_name_rules_apply_below_the_workspace_and_folder_rules_everywhere() -> None:
    workspace = PurePath("/src/credential-helper")
    assert sensitive_reason(workspace / "main.py", workspace=workspace) is None
    assert sensitive_reason(workspace / "credentials.py", workspace=workspace) is not None
    inside_ssh = PurePath("/home/u/.ssh/project")
    assert sensitive_reason(inside_ssh / "notes.txt", workspace=inside_ssh) is not None


def test_home_and_hermes_home_rules() -> None:
    home = PurePath("/home/u")
    assert sensitive_reason(home / ".bashrc", workspace=home, user_home=home) is not None
    assert sensitive_reason(home / "project/.bashrc", workspace=home, user_home=home) is None
    hermes = PurePath("/srv/hermes")
    assert "HERMES_HOME" in (sensitive_reason(hermes / ".env", hermes_home=hermes) or "")


def check(workspace: Path, target: str, home: Path) -> str:
    with pytest.raises(Refused) as refused:
        resolve_reference_path(workspace, target, user_home=home)
    return refused.value.reason


def test_dot_dot_and_paths_outside_are_refused(
    workspace: Path, tmp_path: Path, fake_home: Path
) -> None:
    (tmp_path / "outside.txt").write_text("outside")
    (workspace / "sub").mkdir()
    assert "'..'" in check(workspace, "../outside.txt", fake_home)
    assert "'..'" in check(workspace, "sub/../../outside.txt", fake_home)
    assert "'..'" in check(workspace, "sub/../x", fake_home)  # even one that stays inside
    assert "outside the workspace" in check(workspace, str(tmp_path / "outside.txt"), fake_home)
    assert "outside the workspace" in check(workspace, "~/notes.txt", fake_home)
    assert "another user's home" in check(workspace, "~root/x", fake_home)
    assert "NUL" in check(workspace, "a\x00b", fake_home)


def test_an_absolute_path_inside_the_workspace_is_fine(workspace: Path, fake_home: Path) -> None:
    (workspace / "a.txt").write_text("A")
    resolved = resolve_reference_path(workspace, str(workspace / "a.txt"), user_home=fake_home)
    assert resolved.real == workspace / "a.txt"


def test_tilde_expands_to_the_given_home(fake_home: Path) -> None:
    (fake_home / "notes.txt").write_text("N")
    resolved = resolve_reference_path(fake_home, "~/notes.txt", user_home=fake_home)
    assert resolved.real == fake_home / "notes.txt"


def test_symbolic_links_that_leave_the_workspace_are_refused(
    workspace: Path, tmp_path: Path, fake_home: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "data.txt").write_text("outside")
    (workspace / "file-link").symlink_to(outside / "data.txt")
    (workspace / "dir-link").symlink_to(outside)
    assert "symbolic link" in check(workspace, "file-link", fake_home)
    assert "symbolic link" in check(workspace, "dir-link/data.txt", fake_home)
    # out and back in again: the real file is inside, the way there is not
    (outside / "back").symlink_to(workspace)
    (workspace / "real.txt").write_text("R")
    assert "symbolic link" in check(workspace, "dir-link/back/real.txt", fake_home)


def test_a_link_inside_the_workspace_is_followed(workspace: Path, fake_home: Path) -> None:
    (workspace / "real.txt").write_text("R")
    (workspace / "alias.txt").symlink_to("real.txt")
    resolved = resolve_reference_path(workspace, "alias.txt", user_home=fake_home)
    assert resolved.real == workspace / "real.txt"


def test_a_workspace_reached_by_a_link_still_works(tmp_path: Path, fake_home: Path) -> None:
    real = tmp_path / "real-ws"
    real.mkdir()
    (real / "a.txt").write_text("A")
    (tmp_path / "ws-link").symlink_to(real)
    resolved = resolve_reference_path(tmp_path / "ws-link", "a.txt", user_home=fake_home)
    assert resolved.real == real.resolve() / "a.txt"


def test_a_link_to_a_sensitive_file_is_refused(workspace: Path, fake_home: Path) -> None:
    (workspace / ".env").write_text("API_KEY=1")
    (workspace / "notes.txt").symlink_to(".env")
    assert "environment file" in check(workspace, "notes.txt", fake_home)


def test_refused_files_are_never_opened(workspace: Path, tmp_path: Path, fake_home: Path) -> None:
    """The proof does not rely on permissions (root reads everything): every open of the
    process is recorded, and none names a refused file."""
    (workspace / ".env").write_text("OPENAI_API_KEY=sk-test")
    (workspace / "innocent.txt").symlink_to(".env")
    (workspace / ".ssh").mkdir()
    (workspace / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----")
    (tmp_path / "elsewhere.txt").write_text("outside")
    (workspace / "out").symlink_to(tmp_path / "elsewhere.txt")
    (workspace / "ok.txt").write_text("fine")
    text = (
        "@file:.env @file:innocent.txt @file:.ssh/id_rsa @folder:.ssh @file:out "
        "@file:../elsewhere.txt @file:ok.txt"
    )
    with recorded_opens() as opened:
        attached, warnings = expand(text, workspace, workspace)
    assert "fine" in attached
    assert len(warnings) == 6
    assert names_opened(opened).isdisjoint({".env", "innocent.txt", "id_rsa", ".ssh", "out"})
    assert "ok.txt" in names_opened(opened)  # the recorder does see the reads that happen
    assert "sk-test" not in attached and "OPENSSH" not in attached


def test_home_credentials_are_refused_when_the_workspace_is_the_home(fake_home: Path) -> None:
    (fake_home / ".ssh").mkdir()
    (fake_home / ".ssh" / "id_rsa").write_text("KEY")
    (fake_home / ".aws").mkdir()
    (fake_home / ".aws" / "credentials").write_text("KEY")
    (fake_home / ".bashrc").write_text("export TOKEN=1")
    with recorded_opens() as opened:
        attached, warnings = expand(
            "@file:.ssh/id_rsa @file:~/.aws/credentials @file:.bashrc @folder:~/.ssh",
            fake_home,
            fake_home,
        )
    assert "KEY" not in attached
    assert len(warnings) == 4 and all("never read" in w for w in warnings)
    assert names_opened(opened).isdisjoint({"id_rsa", "credentials", ".bashrc", ".ssh"})


def test_the_default_home_is_the_users(fake_home: Path, workspace: Path) -> None:
    """Without ``user_home`` the code asks ``Path.home()``: the fake HOME is honoured."""
    (fake_home / "notes.txt").write_text("N")
    result = expand_references(
        "@file:~/notes.txt",
        workspace=workspace,
        context_length=10_000,
        count_tokens=tokens_by_length,
        settings=ReferencesSettings(),
    )
    assert "outside the workspace" in result.warnings[0]


def test_the_guard_fails_closed(
    workspace: Path, fake_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "a.txt").write_text("A")

    def broken(*args: object, **kwargs: object) -> str | None:
        raise RuntimeError("deny list unavailable")

    monkeypatch.setattr(paths_module, "sensitive_reason", broken)
    assert "could not be checked" in check(workspace, "a.txt", fake_home)


def test_a_fifo_is_refused_without_hanging(workspace: Path, fake_home: Path) -> None:
    os.mkfifo(workspace / "pipe")
    resolved = resolve_reference_path(workspace, "pipe", user_home=fake_home)
    with pytest.raises(Refused, match="not a regular file"):
        open_inside(resolved)


def test_a_link_swapped_in_after_the_check_is_not_followed(
    workspace: Path, tmp_path: Path, fake_home: Path
) -> None:
    (workspace / "a.txt").write_text("A")
    resolved = resolve_reference_path(workspace, "a.txt", user_home=fake_home)
    (tmp_path / "other.txt").write_text("other")
    (workspace / "a.txt").unlink()
    (workspace / "a.txt").symlink_to(tmp_path / "other.txt")
    with pytest.raises(Refused, match="could not be opened"):
        open_inside(resolved)
