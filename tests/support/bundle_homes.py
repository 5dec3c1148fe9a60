"""Homes for the export/import tests: two users' sessions (archived rows, a compaction child,
counters, state, api_content, token counts, odd strings), memory blocks, staged records and a
skills library, and a snapshot of everything a bundle should carry, read back through each
store's own API (so two snapshots from different backends compare equal)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_core.lifecycle.bundle_export import BundleParts, owns_skill_write
from hermes_core.lifecycle.bundle_format import MEMBERS, count_contents, manifest_digest
from hermes_core.memory.file_documents import FileMemoryDocuments
from hermes_core.memory.staged import PendingWrite
from hermes_core.provenance import Provenance
from hermes_core.sessions.store import SessionStore
from hermes_core.skills.dates import SkillDates
from hermes_core.skills.home import pending_directory, skills_directory
from hermes_core.skills.library import SkillLibrary
from hermes_core.skills.pending import PendingSkillWrite, PendingSkillWrites

#: a word only bob's data holds: never in alice's bundle
BOB_TOKEN = "zebraquokka"
SKILL_MD = "---\nname: deploy\ndescription: ship the app to staging\n---\n\nRun `make ship`.\n"


def file_parts(home: Path, store: SessionStore, *, per_user_memory: bool = False) -> BundleParts:
    """The parts of a home whose memory is files (the default)."""
    return BundleParts(
        store=store,
        documents=FileMemoryDocuments.for_home(home),
        skills_root=skills_directory(home),
        skill_pending=PendingSkillWrites(pending_directory(home)),
        per_user_memory=per_user_memory,
    )


def seed_sessions(store: SessionStore) -> None:
    """alice: a session compacted in place (archived rows), a parent compacted into a child;
    bob: one session holding :data:`BOB_TOKEN`."""
    store.open_session("a-1", user_id="alice", model="gpt-4o", title="flaky CI")
    seqs = store.append_messages(
        "a-1",
        [
            {"role": "user", "content": "why does the pelican test fail on CI?"},
            {"role": "assistant", "content": None, "tool_calls": [_call("read", '{"p": 1}')]},
            {"role": "tool", "tool_call_id": "c1", "content": "clock.py: time.time()"},
            {"role": "assistant", "content": "It reads the wall clock \x00 \ud800 ✓"},
        ],
        api_contents=["why does the pelican test fail on CI? [recall: none]", None, None, None],
        token_counts=[12, 30, None, 9],
        state={"guard": {"last": 3}},
    )
    store.commit_compaction(
        "a-1",
        [
            {"role": "user", "content": "why does the pelican test fail on CI?"},
            {"role": "user", "content": "[summary] the test read the wall clock"},
        ],
        [seqs[0], None],
        in_place=True,
    )
    store.append_messages("a-1", [{"role": "assistant", "content": "inject a fake clock"}])
    store.add_counters("a-1", {"messages": 7, "compactions": 1})
    store.open_session("a-2", user_id="alice", title="数据库迁移 plan")
    store.append_messages(
        "a-2",
        [
            {"role": "user", "content": "数据库迁移 needs a lighthouse window"},
            {"role": "assistant", "content": [{"type": "text", "text": "parts content"}]},
        ],
    )
    store.commit_compaction(
        "a-2",
        [{"role": "user", "content": "[summary] migration window"}],
        [None],
        in_place=False,
        child_session_id="a-3",
    )
    store.end_session("a-3", "closed")
    store.open_session("b-1", user_id="bob", title=f"bob {BOB_TOKEN}")
    store.append_messages("b-1", [{"role": "user", "content": f"my {BOB_TOKEN} plan"}])


def _call(name: str, arguments: str) -> dict[str, Any]:
    return {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}


def seed_files(home: Path) -> None:
    """Memory files, staged records and skills of ``home`` (alice's, bob's and shared)."""
    memories = home / "memories"
    (memories / "users" / "alice").mkdir(parents=True)
    (memories / "users" / "bob").mkdir(parents=True)
    (memories / "users" / "alice" / "USER.md").write_text("Alice prefers tabs.\n§\nLikes tea.")
    (memories / "users" / "bob" / "USER.md").write_text(f"Bob's {BOB_TOKEN}.")
    (memories / "MEMORY.md").write_text("The shared note of the home.")
    documents = FileMemoryDocuments.for_home(home)
    for pending_id, user in (("0000aaaa", "alice"), ("0000bbbb", "bob")):
        documents.pending.add(
            PendingWrite(
                id=pending_id,
                action="add",
                target="user",
                origin="cli",
                created=100.0,
                content=f"staged for {user}" + (f" {BOB_TOKEN}" if user == "bob" else ""),
                user_id=user,
                format=2,
            )
        )
    skill = skills_directory(home) / "devops" / "deploy"
    (skill / "references").mkdir(parents=True)
    (skill / "assets").mkdir()
    (skill / "SKILL.md").write_text(SKILL_MD)
    (skill / "references" / "notes.md").write_text("staging is at 10.0.0.2\n")
    (skill / "assets" / "logo.bin").write_bytes(bytes(range(256)))
    (skill / "scripts").mkdir()
    (skill / "scripts" / "ship.sh").write_text("#!/bin/sh\nmake ship\n")
    (skill / "scripts" / "ship.sh").chmod(0o755)
    assert SkillLibrary(skills_directory(home)).view("devops/deploy")["success"]  # dated
    pending = PendingSkillWrites(pending_directory(home))
    pending.directory.mkdir(parents=True)
    for pending_id, user in (("0000cccc", None), ("0000dddd", "alice"), ("0000eeee", "bob")):
        provenance = Provenance(source="user", user_id=user) if user is not None else None
        pending.add(
            PendingSkillWrite(
                id=pending_id,
                action="create",
                name="lint",
                origin="cli",
                created=5.0,
                content=SKILL_MD.replace("deploy", f"lint {user} {BOB_TOKEN * (user == 'bob')}"),
                provenance=None if provenance is None else provenance.to_json(),
                format=2,
            )
        )


def snapshot(parts: BundleParts, user_id: str | None) -> dict[str, Any]:
    """Everything of ``user_id`` a bundle carries, through the stores' read APIs."""
    store = parts.store
    sessions = []
    for record in sorted(store.list_sessions(user_id=user_id, limit=1000), key=lambda r: r.id):
        view = [row.seq for row in store.messages(record.id)]
        rows = [dataclasses.asdict(r) for r in store.messages(record.id, include_archived=True)]
        sessions.append({"record": dataclasses.asdict(record), "view": view, "rows": rows})
    memory = {
        # files end the text with a newline, rows do not: the same text either way
        t: (parts.documents.read(t, user_id if user_id is not None else None) or "").rstrip("\n")
        for t in ("user",) + (("memory",) if user_id is None or parts.per_user_memory else ())
    }
    skills = {
        str(p.relative_to(parts.skills_root)): (p.read_bytes(), p.stat().st_mode & 0o111 != 0)
        for p in sorted(parts.skills_root.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }
    staged = [dataclasses.asdict(r) for r in parts.documents.pending.all()[0]]
    return {
        "sessions": sessions,
        "memory": memory,
        "skills": skills,
        "skill_dates": SkillDates(parts.skills_root).read(),
        "pending_memory": [r for r in staged if r["user_id"] == user_id],
        "pending_skills": [
            dataclasses.asdict(r)
            for r in parts.skill_pending.all()[0]
            if owns_skill_write(r, user_id)
        ],
    }


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes (to prove nothing changed)."""
    found: dict[str, bytes] = {}
    for current, _, names in os.walk(root):
        for name in names:
            path = Path(current) / name
            found[str(path.relative_to(root))] = path.read_bytes()
    return found


def reseal_manifest(manifest: dict[str, Any], members: dict[str, bytes]) -> None:
    """Make ``manifest`` fit ``members`` (table, counts, digest): a consistent forgery, so a
    test reaches the checks behind the checksums."""
    parsed: dict[str, Any] = {}
    for name, data in members.items():
        try:
            if MEMBERS.get(name) == "json":
                parsed[name] = json.loads(data)
            elif name in MEMBERS:
                parsed[name] = [json.loads(line) for line in data.splitlines() if line.strip()]
        except ValueError:
            continue  # a member the test broke on purpose: the reader refuses it first
    manifest["members"] = {
        n: {"bytes": len(d), "sha256": hashlib.sha256(d).hexdigest()} for n, d in members.items()
    }
    manifest["counts"] = count_contents(parsed)
    manifest["sha256"] = manifest_digest(manifest)


def rewrite_bundle(
    bundle: Path,
    out: Path,
    change: Callable[[dict[str, bytes]], None],
    *,
    reseal: bool = True,
) -> Path:
    """A copy of ``bundle`` with members changed by ``change``; ``reseal``: with the
    manifest's checksums recomputed (a consistent forgery), else left stale."""
    with zipfile.ZipFile(bundle) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    manifest = json.loads(members.pop("manifest.json"))
    change(members)
    if "manifest.json" in members:  # the change replaced the manifest itself
        manifest = json.loads(members.pop("manifest.json"))
    elif reseal:
        reseal_manifest(manifest, members)
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("manifest.json", json.dumps(manifest))
        for name, data in members.items():
            archive.writestr(name, data)
    return out


def edit_lines(
    name: str, edit: Callable[[dict[str, Any]], None]
) -> Callable[[dict[str, bytes]], None]:
    """A change of ``name``'s first line by ``edit``."""

    def change(members: dict[str, bytes]) -> None:
        lines = [json.loads(line) for line in members[name].splitlines() if line]
        for item in lines[:1]:
            edit(item)
        members[name] = b"".join(json.dumps(i).encode() + b"\n" for i in lines)

    return change


def alice_bundle(root: Path) -> Path:
    """A bundle of alice's data from a seeded home under ``root`` (the refusal tests' input)."""
    from hermes_core.lifecycle.bundle_export import export_bundle
    from hermes_core.sessions.sqlite import SQLiteSessionStore

    home = root / "source"
    home.mkdir()
    store = SQLiteSessionStore(home / "state.db")
    seed_sessions(store)
    seed_files(home)
    export_bundle(root / "alice.zip", file_parts(home, store), user_id="alice")
    store.close()
    return root / "alice.zip"


def home_state(parts: BundleParts) -> tuple[Any, dict[str, bytes]]:
    """alice's data as the target holds it, and every file of the home but the database."""
    files = tree_bytes(parts.skills_root.parent)
    return snapshot(parts, "alice"), {k: v for k, v in files.items() if "state.db" not in k}
