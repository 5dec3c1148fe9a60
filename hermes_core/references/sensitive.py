"""The deny list: files and folders whose contents an @-reference never reads (spec 40 §5).

Pure path arithmetic, no file system access, so the verdict comes before anything is opened.
Generous on purpose: a spurious refusal costs the user one copy-paste, a leaked key cannot be
taken back. Every component of a path is checked (a folder named ``.ssh`` anywhere, not only
in the home directory), names are compared case-blind (macOS and Windows file systems are),
and a few rules are anchored to the user's home (``~/.bashrc`` exports tokens) or to the
hermes home (``$HERMES_HOME/.env``).
"""

from __future__ import annotations

import fnmatch
import itertools
from pathlib import PurePath
from typing import Final

__all__ = ["sensitive_reason"]

#: Folders whose whole contents are credentials or keys.
_FOLDERS: Final = frozenset(
    {
        ".ssh",
        ".aws",
        ".gnupg",
        ".gpg",
        ".azure",
        ".kube",
        ".docker",
        ".password-store",
        ".gcloud",
        ".oci",
        ".vault",
        ".terraform.d",
        ".1password",
        "mcp-tokens",
        "keyrings",
        "keychains",
    }
)
#: Folder pairs that hold credentials (``~/.config/gh``): checked as adjacent components.
_FOLDER_PAIRS: Final = frozenset(
    {
        (".config", "gh"),
        (".config", "gcloud"),
        (".config", "hub"),
        (".config", "op"),
        (".config", "rclone"),
        (".local", "share"),  # keyrings, browser and app secrets
        (".mozilla", "firefox"),
    }
)
#: Exact file names (lower case).
_NAMES: Final = frozenset(
    {
        ".netrc",
        "_netrc",
        ".pgpass",
        ".git-credentials",
        ".gitcookies",
        ".npmrc",
        ".pypirc",
        ".yarnrc",
        ".yarnrc.yml",
        ".dockercfg",
        ".boto",
        ".s3cfg",
        ".passwd-s3fs",
        ".vault-token",
        ".terraformrc",
        ".htpasswd",
        ".my.cnf",
        ".pgservice.conf",
        ".cargo-credentials",
        "credentials",
        "auth.json",
        ".anthropic_oauth.json",
        "authorized_keys",
        "known_hosts",
        "shadow",
        "gshadow",
        ".bash_history",
        ".zsh_history",
        ".python_history",
        ".psql_history",
        ".mysql_history",
        ".node_repl_history",
        ".sqlite_history",
        ".lesshst",
        ".viminfo",
        ".secrets",
    }
)
#: Shell patterns on names (lower case).
_PATTERNS: Final = (
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "*.ppk",
    "*.gpg",
    "*.tfvars",
    "*.tfstate",
    "*.tfstate.*",
    "*credential*",
    "token*.json",
    "*_token.json",
    "*-token.json",
    "client_secret*",
    "secret.*",
    "secrets.*",
    "*.secret",
    "*.secrets",
    "service-account*.json",
    "*serviceaccount*.json",
)
#: Files directly in the user's home that often export tokens.
_HOME_NAMES: Final = frozenset(
    {
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".profile",
        ".zshrc",
        ".zprofile",
        ".zshenv",
        ".kshrc",
        ".cshrc",
        ".tcshrc",
        ".config/fish",
    }
)


def _name_reason(name: str, *, folders_only: bool = False) -> str | None:
    lowered = name.lower()
    if lowered in _FOLDERS:
        return f"{name} is a credentials folder"
    if folders_only:
        return None
    if lowered in _NAMES:
        return f"{name} is a credentials or secrets file"
    for pattern in _PATTERNS:
        if fnmatch.fnmatchcase(lowered, pattern):
            if lowered.startswith(".env") or lowered.endswith(".env"):
                return f"{name} is an environment file, where API keys and passwords live"
            return f"{name} looks like a key, token or credentials file"
    return None


def _under(path: PurePath, root: PurePath | None) -> tuple[str, ...] | None:
    """``path``'s components below ``root``, or None when it is not under it."""
    if root is None:
        return None
    try:
        return path.relative_to(root).parts
    except ValueError:
        return None


def _home_reason(in_home: tuple[str, ...]) -> str | None:
    head = in_home[0].lower()
    pair = "/".join(in_home[:2]).lower()
    if head in _HOME_NAMES or pair in _HOME_NAMES:
        shown = "/".join(in_home[:2] if pair in _HOME_NAMES else in_home[:1])
        return f"~/{shown} is a shell start-up file, which often exports tokens"
    return None


def sensitive_reason(
    path: PurePath,
    *,
    workspace: PurePath | None = None,
    user_home: PurePath | None = None,
    hermes_home: PurePath | None = None,
) -> str | None:
    """Why ``path`` (absolute, normalised) must not be read, or None when it may be.

    Name rules apply to the components below ``workspace`` (the folder a user picked may
    well be called ``credential-helper``); credentials folders (``.ssh``, ``.aws``, ...)
    count anywhere, so a workspace inside ``~/.ssh`` attaches nothing. A path outside the
    workspace is judged by all its components. Ask for every form a file is reached by:
    the path as written and its real location.
    """
    in_hermes = _under(path, hermes_home)
    if in_hermes is not None and in_hermes[:1] == (".env",):
        return "$HERMES_HOME/.env holds the API keys of hermes-context"
    below = _under(path, workspace)
    judged = path.parts if below is None else below
    for part in path.parts[: len(path.parts) - len(judged)]:
        reason = _name_reason(part, folders_only=True)
        if reason is not None:
            return reason
    for part in judged:
        reason = _name_reason(part)
        if reason is not None:
            return reason
    lowered = [part.lower() for part in path.parts]
    for first, second in itertools.pairwise(lowered):
        if (first, second) in _FOLDER_PAIRS:
            return f"{first}/{second} holds credentials"
    in_home = _under(path, user_home)
    if in_home:
        reason = _home_reason(in_home)
        if reason is not None:
            return reason
    return None
