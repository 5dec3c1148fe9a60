"""The bundle file: one zip of JSON and JSON-lines members, a manifest with their checksums.

Why a zip: one file a person can carry, open with any unzip tool and read with a text
editor, members compressed, each with its own CRC. The manifest names every member with its
size and SHA-256, and holds the SHA-256 of the whole manifest (member table, user, counts:
everything but that digest itself), so a truncated, damaged or edited bundle is refused
before anything is written. See ``docs/export.md``.

Reading checks everything first: the zip's directory (a name twice is refused: readers would
disagree on which copy counts), the member list (exactly what the manifest names), the format
name and version (a newer one is refused), the manifest's digest, each member's size before
reading it (a zip bomb is refused unread), its digest, that each member parses, and that the
manifest's counts are the contents' counts.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import secrets
import time
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from hermes_core.errors import HermesError

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MANIFEST",
    "MEMBERS",
    "BundleError",
    "Contents",
    "count_contents",
    "manifest_digest",
    "read_bundle",
    "write_bundle",
]

FORMAT_NAME: Final = "hermes-context-bundle"
#: bumped when a reader of the previous version would misread a bundle (docs/export.md)
FORMAT_VERSION: Final = 1
MANIFEST: Final = "manifest.json"
#: the members of a version-1 bundle and their kind: one JSON document, or JSON lines
MEMBERS: Final = {
    "memory.json": "json",
    "sessions.jsonl": "jsonl",
    "messages.jsonl": "jsonl",
    "skills.jsonl": "jsonl",
    "pending_memory.jsonl": "jsonl",
    "pending_skills.jsonl": "jsonl",
    "skill_dates.json": "json",
}
#: what a reader accepts, uncompressed: a manifest, and one member
MAX_MANIFEST_BYTES: Final = 1024 * 1024
MAX_MEMBER_BYTES: Final = 4 * 1024 * 1024 * 1024


class BundleError(HermesError):
    """A bundle that cannot be written or read; nothing was changed."""


@dataclass(frozen=True)
class Contents:
    """A bundle read and checked: its manifest and each member's parsed value (a JSON
    document, or the list of a JSON-lines member's objects)."""

    manifest: Mapping[str, Any]
    members: Mapping[str, Any] = field(default_factory=dict)

    def lines(self, name: str) -> list[dict[str, Any]]:
        value = self.members.get(name, [])
        return list(value) if isinstance(value, list) else []


def manifest_digest(manifest: Mapping[str, Any]) -> str:
    """The bundle's own digest: SHA-256 of the manifest without its ``sha256`` key, as
    canonical JSON (keys sorted, no spaces, ASCII). The member table is in it, so it covers
    every member too."""
    rest = {key: value for key, value in manifest.items() if key != "sha256"}
    canonical = json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def count_contents(members: Mapping[str, Any]) -> dict[str, int]:
    """What the members hold, as the manifest's ``counts`` say it (written on export,
    compared on import)."""
    messages = [m for m in _items(members.get("messages.jsonl")) if isinstance(m, dict)]
    memory = members.get("memory.json")
    blocks = _items(memory.get("blocks")) if isinstance(memory, dict) else []
    skills = [e for e in _items(members.get("skills.jsonl")) if isinstance(e, dict)]
    dates = members.get("skill_dates.json")
    dated = dates.get("skills") if isinstance(dates, dict) else None
    return {
        "sessions": len(_items(members.get("sessions.jsonl"))),
        "messages": len(messages),
        "archived_messages": sum(1 for m in messages if m.get("active") is not True),
        "memory_blocks": sum(
            1 for b in blocks if isinstance(b, dict) and b.get("text") is not None
        ),
        "skills": len({str(e.get("skill")) for e in skills}),
        "skill_files": len(skills),
        "skill_dates": len(dated) if isinstance(dated, dict) else 0,
        "pending_memory": len(_items(members.get("pending_memory.jsonl"))),
        "pending_skills": len(_items(members.get("pending_skills.jsonl"))),
    }


def _dumps(value: Any) -> str:
    """JSON any reader takes: ASCII (a lone surrogate survives as an escape)."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


def member_bytes(name: str, value: Any) -> bytes:
    """A member's bytes: one JSON document, or one JSON object per line."""
    if MEMBERS[name] == "json":
        return (json.dumps(value, ensure_ascii=True, indent=1) + "\n").encode("ascii")
    return "".join(_dumps(item) + "\n" for item in value).encode("ascii")


def write_bundle(out: Path, manifest: Mapping[str, Any], members: Mapping[str, Any]) -> None:
    """Write the bundle to ``out`` (mode 0600), never over an existing file: a temp file
    beside it, linked to ``out`` only when it is complete."""
    data = {name: member_bytes(name, members.get(name, [])) for name in MEMBERS}
    table = {
        name: {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}
        for name, raw in data.items()
    }
    full = {**manifest, "members": table}
    full["sha256"] = manifest_digest(full)
    stamp = time.gmtime(float(manifest.get("created", 0.0)))[:6]
    stamp = stamp if stamp[0] >= 1980 else (1980, 1, 1, 0, 0, 0)
    out = Path(out)
    if os.path.lexists(out):
        raise BundleError(f"{out} exists; nothing was written. Choose another --out")
    tmp = out.with_name(f".{out.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            with zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as archive:
                for name, raw in (
                    (MANIFEST, (json.dumps(full, ensure_ascii=True, indent=1) + "\n").encode()),
                    *data.items(),
                ):
                    info = zipfile.ZipInfo(name, date_time=stamp)
                    info.compress_type = zipfile.ZIP_DEFLATED
                    info.external_attr = 0o600 << 16
                    archive.writestr(info, raw)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, out)  # fails when out appeared meanwhile: never overwritten
        except FileExistsError:
            raise BundleError(f"{out} exists; nothing was written. Choose another --out") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def read_bundle(path: Path) -> Contents:
    """The bundle at ``path``, checked whole; :class:`BundleError` saying what is wrong."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise BundleError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except (zipfile.BadZipFile, ValueError) as exc:
        raise BundleError(
            f"{path} is not a hermes-context bundle or is truncated ({exc}); nothing was imported"
        ) from None
    with archive:
        try:
            return _checked(path, archive)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
            raise BundleError(
                f"{path} is damaged or truncated ({exc}); nothing was imported"
            ) from None


def _checked(path: Path, archive: zipfile.ZipFile) -> Contents:
    names = [info.filename for info in archive.infolist()]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise BundleError(
            f"{path} holds {', '.join(repeated)} more than once (a zip edited or forged: "
            "which copy counts is unclear); nothing was imported"
        )
    infos = {info.filename: info for info in archive.infolist()}
    if MANIFEST not in infos:
        raise BundleError(f"{path} has no {MANIFEST}: not a hermes-context bundle")
    manifest = _json(path, MANIFEST, _read(archive, infos[MANIFEST], MAX_MANIFEST_BYTES))
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise BundleError(f"{path}: {MANIFEST} is not a hermes-context bundle manifest")
    version = manifest.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise BundleError(f"{path}: the manifest's version {version!r} is not a version")
    if version > FORMAT_VERSION:
        raise BundleError(
            f"{path} is a version-{version} bundle, newer than this hermes-context reads "
            f"(version {FORMAT_VERSION}); upgrade hermes-context to import it (nothing was "
            "imported)"
        )
    table = manifest.get("members")
    if not isinstance(table, dict) or set(table) != set(MEMBERS):
        raise BundleError(f"{path}: the manifest does not list the bundle's members")
    if manifest.get("sha256") != manifest_digest(manifest):
        raise BundleError(
            f"{path}: the manifest's checksum does not match the manifest (the bundle "
            "was changed or damaged); nothing was imported"
        )
    extra = sorted(set(infos) - set(MEMBERS) - {MANIFEST})
    missing = sorted(set(MEMBERS) - set(infos))
    if extra or missing:
        raise BundleError(f"{path}: members missing {missing} or unexpected {extra}")
    members: dict[str, Any] = {}
    for name, kind in MEMBERS.items():
        entry = table[name]
        size, digest = (
            (entry.get("bytes"), entry.get("sha256")) if isinstance(entry, dict) else (None, None)
        )
        if not isinstance(size, int) or infos[name].file_size != size:
            raise BundleError(
                f"{path}: {name} has {infos[name].file_size} bytes, the manifest says {size!r} "
                "(truncated or changed); nothing was imported"
            )
        data = _read(archive, infos[name], MAX_MEMBER_BYTES)
        if hashlib.sha256(data).hexdigest() != digest:
            raise BundleError(
                f"{path}: {name} does not match its checksum (changed or damaged); nothing "
                "was imported"
            )
        members[name] = _json(path, name, data) if kind == "json" else _lines(path, name, data)
    _check_counts(path, manifest.get("counts"), count_contents(members))
    return Contents(manifest, members)


def _check_counts(path: Path, stated: object, found: Mapping[str, int]) -> None:
    """The manifest's counts are what a person reads before importing: they must be true."""
    if not isinstance(stated, dict):
        raise BundleError(f"{path}: the manifest has no counts; nothing was imported")
    wrong = [
        f"{k}: {stated.get(k)!r} stated, {n} held"
        for k, n in found.items()
        if type(stated.get(k)) is not int or stated.get(k) != n
    ]
    if wrong:
        raise BundleError(
            f"{path}: the manifest's counts do not match the contents ({'; '.join(wrong)}); "
            "nothing was imported"
        )


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
    if info.file_size > limit:
        raise BundleError(f"{info.filename} is {info.file_size:,} bytes, over {limit:,}")
    with archive.open(info) as member:
        data = member.read(limit + 1)
    if len(data) > limit:
        raise BundleError(f"{info.filename} is over {limit:,} bytes")
    return data


def _json(path: Path, name: str, data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BundleError(f"{path}: {name} is not JSON ({exc})") from None


def _lines(path: Path, name: str, data: bytes) -> Sequence[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for number, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        item = _json(path, f"{name} line {number}", line)
        if not isinstance(item, dict):
            raise BundleError(f"{path}: {name} line {number} is not a JSON object")
        items.append(item)
    return items
