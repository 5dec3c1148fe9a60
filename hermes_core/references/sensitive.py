"""The deny list: files and folders whose contents an @-reference never reads (spec 40 §5).

Pure path arithmetic, no file system access, so the verdict comes before anything is opened.
Generous on purpose: a spurious refusal costs the user one copy-paste, a leaked key cannot be
taken back. Every component of a path is checked (a folder named ``.ssh`` anywhere, not only
in the home directory), names are compared case-blind (macOS and Windows file systems are),
and a few rules are anchored to the user's home (``~/.bashrc`` exports tokens) or to the
hermes home (``$HERMES_HOME/.env``). A backup or editor copy holds the same secrets, so a
name is also judged without its backup suffixes (``.netrc.bak``, ``master.key.orig~``,
``.id_rsa.swp``, ``#.env#``), and every name that starts with ``.env`` is an environment file.
"""

from __future__ import annotations

import fnmatch
import itertools
import re
from pathlib import PurePath
from typing import Final

__all__ = ["BACKUP_SUFFIXES", "backup_forms", "sensitive_reason"]

#: Endings that editors and people give copies of a file (checked case-blind, repeatedly).
BACKUP_SUFFIXES: Final = (
    "~",
    ".bak",
    ".bk",
    ".bkp",
    ".orig",
    ".old",
    ".swp",
    ".swo",
    ".swx",
    ".save",
    ".sav",
    ".backup",
    ".tmp",
    ".temp",
    ".copy",
    ".prev",
)
_BACKUP_END: Final = re.compile(
    r"(?:\.~\d+~|~|[._-](?:"
    + "|".join(re.escape(s[1:]) for s in BACKUP_SUFFIXES if s.startswith("."))
    + r"))$",
    re.IGNORECASE,
)

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
    ".env*",
    "*.env",
    "*id_rsa*",
    "*id_dsa*",
    "*id_ecdsa*",
    "*id_ed25519*",
    "*kubeconfig*",
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


def backup_forms(name: str) -> list[str]:
    """``name`` and the names it is a copy of: backup suffixes stripped one at a time
    (``a.key.bak~`` -> ``a.key.bak``, ``a.key``), an emacs auto-save's ``#`` taken off, and a
    vim swap file's leading dot (``.id_rsa.swp`` -> ``id_rsa``)."""
    forms = [name]
    stem = name
    if len(stem) > 2 and stem.startswith("#") and stem.endswith("#"):
        stem = stem[1:-1]
        forms.append(stem)
    while (match := _BACKUP_END.search(stem)) is not None and match.start() > 0:
        stem = stem[: match.start()]
        forms.append(stem)
        if stem.startswith(".") and len(stem) > 1:
            forms.append(stem[1:])  # vim: "x" -> ".x.swp"; also ".x.bak" copies of "x"
    return list(dict.fromkeys(forms))


def _form_reason(lowered: str, *, folders_only: bool) -> str | None:
    """Why one (lower-case) name is sensitive, as the end of a sentence."""
    if lowered in _FOLDERS:
        return "is a credentials folder"
    if folders_only:
        return None
    if lowered in _NAMES:
        return "is a credentials or secrets file"
    for pattern in _PATTERNS:
        if fnmatch.fnmatchcase(lowered, pattern):
            if lowered.startswith(".env") or lowered.endswith(".env"):
                return "is an environment file, where API keys and passwords live"
            return "looks like a key, token or credentials file"
    return None


def _name_reason(name: str, *, folders_only: bool = False) -> str | None:
    for form in backup_forms(name):
        reason = _form_reason(form.lower(), folders_only=folders_only)
        if reason is None:
            continue
        return f"{name} {reason}" if form == name else f"{name} is a copy of {form}, which {reason}"
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
    for head in backup_forms(in_home[0]):
        pair = "/".join((head, *in_home[1:2])).lower()
        if head.lower() in _HOME_NAMES or pair in _HOME_NAMES:
            shown = "/".join(in_home[:2] if pair in _HOME_NAMES else in_home[:1])
            copy = "" if head == in_home[0] else f" (a copy of ~/{head})"
            return f"~/{shown} is a shell start-up file{copy}, which often exports tokens"
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
    if in_hermes and in_hermes[0].lower().startswith(".env"):
        return "$HERMES_HOME/.env (and any copy of it) holds the API keys of hermes-context"
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
    for first, second in itertools.pairwise(path.parts):
        for one, two in itertools.product(backup_forms(first), backup_forms(second)):
            if (one.lower(), two.lower()) in _FOLDER_PAIRS:
                return f"{first}/{second} holds credentials"
    in_home = _under(path, user_home)
    if in_home:
        reason = _home_reason(in_home)
        if reason is not None:
            return reason
    return None
