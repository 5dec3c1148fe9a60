"""``@diff``, ``@staged`` and ``@git:N``: ``git`` with fixed arguments, no shell, read-only.

The only value a user chooses is N, a checked integer. Everything else is fixed, and chosen
so that a repository's configuration cannot make git run a program of its own: no pager, no
external diff or textconv driver (``--no-ext-diff --no-textconv``; their names come from
``.gitattributes``, so no ``-c`` could list them all), no signature check (``git log``
gets ``--no-show-signature`` and a fixed ``--pretty=medium``, since ``format.pretty=%G?``
would verify too, and every ``gpg.*program`` points at :data:`os.devnull`, which cannot be
executed), no fsmonitor, no hooks, no credential helper or ssh command, no network (every
transport is ``never`` allowed, so a partial clone cannot lazily fetch through a remote of
the repository's choosing), no submodule work trees (``--ignore-submodules=dirty``, which
would otherwise run ``git status`` inside them); no prompts; and ``GIT_OPTIONAL_LOCKS=0``,
so a diff does not even refresh the index. ``-c`` settings override the repository's
(command-line configuration is read last) and reach any git child process. ``GIT_*``
variables of the calling process are dropped (``GIT_DIR`` would point git elsewhere).

Output stays in the workspace and away from secrets: the pathspec ``-- .`` limits it to the
workspace (which may be a subfolder of the repository), the deny list's name patterns (and
their common backup copies) are excluded in the pathspec (git never reads those files), and
the sections of any file the deny list refuses are dropped again from the output (fail
closed: a section whose file names cannot be parsed goes too). Output is bounded
(:data:`MAX_GIT_BYTES`) and so is time (:data:`GIT_TIMEOUT`).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final

from hermes_core.references.refusal import Refused
from hermes_core.references.sensitive import sensitive_reason

__all__ = ["GIT_TIMEOUT", "MAX_GIT_BYTES", "GitOutput", "git_command", "run_git"]

#: Seconds one git command may take.
GIT_TIMEOUT: Final = 20.0
#: Bytes of git output kept at most; the rest is cut (with a warning).
MAX_GIT_BYTES: Final = 2 * 1024 * 1024
#: Configuration that overrides the repository's, so none of it can start a program.
_SAFE_CONFIG: Final = (
    ("core.pager", "cat"),
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.sshCommand", os.devnull),
    ("core.askPass", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("diff.submodule", "short"),
    ("log.showSignature", "false"),
    ("gpg.program", os.devnull),
    ("gpg.openpgp.program", os.devnull),
    ("gpg.x509.program", os.devnull),
    ("gpg.ssh.program", os.devnull),
    ("gpg.ssh.defaultKeyCommand", os.devnull),
    ("protocol.allow", "never"),
    *(
        (f"protocol.{name}.allow", "never")
        for name in ("file", "git", "ssh", "http", "https", "ftp", "ftps", "ext", "fd")
    ),
    ("color.ui", "false"),
    ("core.quotePath", "true"),
)
_HARDENING: Final = (
    "--no-pager",
    *(argument for key, value in _SAFE_CONFIG for argument in ("-c", f"{key}={value}")),
)
_DIFF_FLAGS: Final = (
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--ignore-submodules=dirty",
    "--submodule=short",
)
_LOG_FLAGS: Final = ("--no-decorate", "--no-show-signature", "--pretty=medium")
#: Endings of backup copies excluded in the pathspec too (the output filter knows more).
_EXCLUDED_BACKUPS: Final = ("~", ".bak", ".orig", ".old", ".swp", ".save", ".backup", ".tmp")
_EXCLUDED_NAMES: Final = (
    ".env*",
    "*.env",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*credential*",
    "token*.json",
    "secrets.*",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
)
_EXCLUDED_FOLDERS: Final = (".ssh", ".aws", ".gnupg")


def _excluded() -> tuple[str, ...]:
    """The deny list's name patterns as pathspecs git understands (case-blind, any folder),
    with the backup endings added where a pattern does not end in ``*`` already."""
    globs = [*_EXCLUDED_NAMES, *(f"{folder}/**" for folder in _EXCLUDED_FOLDERS)]
    for name in _EXCLUDED_NAMES:
        if not name.endswith("*"):
            globs.extend(f"{name}{suffix}*" for suffix in _EXCLUDED_BACKUPS)
    for folder in _EXCLUDED_FOLDERS:
        globs.extend(f"{folder}{suffix}*/**" for suffix in _EXCLUDED_BACKUPS)
    return tuple(f":(exclude,glob,icase)**/{glob}" for glob in globs)


_EXCLUDED: Final = _excluded()
_DIFF_HEADER: Final = re.compile(r"^diff --git ", re.MULTILINE)
_FILE_LINES: Final = re.compile(
    r"^(?:--- |\+\+\+ |rename from |rename to |copy from |copy to )(.*)$", re.MULTILINE
)
_GIT_QUOTED: Final = re.compile(r'"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class GitOutput:
    """What git printed (after the filter), ``cut`` when it hit the byte bound, and the
    repository paths whose sections were left out as sensitive."""

    text: str
    cut: bool
    left_out: tuple[str, ...]


def git_command(kind: str, count: int | None = None) -> list[str]:
    """The fixed argument list for ``@diff``, ``@staged`` or ``@git:N`` (``count``)."""
    if kind == "diff":
        tail = ["diff", *_DIFF_FLAGS]
    elif kind == "staged":
        tail = ["diff", "--staged", *_DIFF_FLAGS]
    elif kind == "git" and isinstance(count, int) and 1 <= count <= 50:
        tail = ["log", f"-{count}", "-p", *_LOG_FLAGS, *_DIFF_FLAGS]
    else:
        raise ValueError(f"no git command for {kind!r} (count {count!r})")
    return ["git", *_HARDENING, *tail, "--", ".", *_EXCLUDED]


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_NO_LAZY_FETCH="1",  # git 2.44 and later; the protocol settings cover older ones
        GIT_PROTOCOL_FROM_USER="0",
        GIT_PAGER="cat",
        PAGER="cat",
    )
    return env


def _unquote(path: str) -> str:
    match = _GIT_QUOTED.fullmatch(path.strip())
    if match is None:
        return path.strip()
    raw = match.group(1).encode("latin-1", "backslashreplace")
    return raw.decode("unicode_escape").encode("latin-1", "replace").decode("utf-8", "replace")


def _section_paths(section: str) -> list[str] | None:
    """The file names a diff section's header mentions, or None when it names none."""
    header = section.split("\n@@", 1)[0]
    names = []
    for match in _FILE_LINES.finditer(header):
        name = _unquote(match.group(1))
        if name == "/dev/null":
            continue
        names.append(name[2:] if name[:2] in ("a/", "b/") else name)
    first = header.split("\n", 1)[0]
    if not names:
        # a mode change or a binary file: only the "diff --git a/x b/x" line names it
        quoted = _GIT_QUOTED.findall(first)
        if quoted:
            names = [_unquote(f'"{q}"')[2:] for q in quoted]
        elif first.startswith("a/") and " b/" in first:
            names = [first[2:].split(" b/", 1)[0]]
    return names or None


def filter_sensitive(output: str) -> tuple[str, list[str]]:
    """``output`` without the diff sections of sensitive files (or of files it cannot
    name), and the names of the files left out."""
    pieces = _DIFF_HEADER.split(output)
    kept = [pieces[0]]
    left_out: list[str] = []
    for section in pieces[1:]:
        names = _section_paths(section)
        if names is None:
            left_out.append("(a file whose name could not be read)")
            continue
        bad = [n for n in names if sensitive_reason(PurePosixPath("/", n)) is not None]
        if bad:
            left_out.extend(bad)
            continue
        kept.append("diff --git " + section)
    return "".join(kept), sorted(set(left_out))


def _read_bounded(process: subprocess.Popen[bytes]) -> tuple[bytes, bool]:
    assert process.stdout is not None
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_GIT_BYTES:
        chunk = process.stdout.read(1 << 16)
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)
        size += len(chunk)
    process.kill()
    return b"".join(chunks)[:MAX_GIT_BYTES], True


def run_git(workspace: Path, kind: str, count: int | None = None) -> GitOutput:
    """Run the fixed command in ``workspace``; raises :class:`Refused` when git is missing,
    the workspace is not in a repository, git fails or takes too long."""
    command = git_command(kind, count)
    with tempfile.TemporaryFile() as errors:
        try:
            process = subprocess.Popen(  # fixed arguments, no shell
                command,
                cwd=workspace,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=errors,
                env=_environment(),
                shell=False,
            )
        except FileNotFoundError as exc:
            raise Refused(
                "git is not installed (or not on PATH), so git references are off"
            ) from exc
        except OSError as exc:
            raise Refused(f"git could not be started: {exc.strerror or exc}") from exc
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            process.kill()

        timer = threading.Timer(GIT_TIMEOUT, expire)
        timer.start()
        try:
            data, cut = _read_bounded(process)
            code = process.wait()
        finally:
            timer.cancel()
            if process.stdout is not None:
                process.stdout.close()
            with contextlib.suppress(OSError):
                process.kill()
        errors.seek(0)
        message = errors.read(4096).decode("utf-8", "replace").strip()
    if expired.is_set():
        raise Refused(f"git took longer than {GIT_TIMEOUT:.0f} s and was stopped")
    if code != 0 and not cut:
        if "not a git repository" in message.lower():
            raise Refused("the workspace is not inside a git repository")
        if "does not have any commits" in message:
            raise Refused("the repository has no commits yet")
        first = message.splitlines()[0] if message else f"exit status {code}"
        raise Refused(f"git failed: {first[:300]}")
    text, left_out = filter_sensitive(data.decode("utf-8", "replace"))
    return GitOutput(text=text, cut=cut, left_out=tuple(left_out))
