"""Plant one unique token per place a person's data is kept, for the forget tests.

Each token is ``<user>-<place>-zq`` plus a fixed suffix, so a scan can say which place kept
a byte and the tokens of two users never overlap. Everything is written through the real
APIs (the session store, the memory store and writer, the staged records, the audit log),
plus one ``.bak`` copy of each memory file.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from hermes_core.host import Hermes
from hermes_core.memory.files import backup_copy
from hermes_core.memory.home import open_store
from hermes_core.memory.staged import PendingWrite
from hermes_core.provenance.audit_log import AuditRecorder, FileAuditLog, audit_directory

PLACES = (
    "active",
    "compacted",
    "summary",
    "toolargs",
    "userfile",
    "memoryfile",
    "backup",
    "staged",
    "audit",
)


def token(user: str | None, place: str) -> str:
    return f"{user or 'anon'}x{place}xzq7731"


def plant(hermes: Hermes, user: str | None) -> dict[str, str]:
    """Every token of ``user``, by place (the shared entry is extra: it must stay)."""
    tokens = {place: token(user, place) for place in PLACES}
    if user is None:  # its MEMORY.md is the shared one
        del tokens["memoryfile"]
    _sessions(hermes, user, tokens)
    _memory(hermes, user, tokens)
    return tokens


def _sessions(hermes: Hermes, user: str | None, tokens: dict[str, str]) -> None:
    store = hermes.session_store
    assert store is not None
    sid = f"s-{user or 'anon'}"
    store.open_session(sid, user_id=user)
    call = {"id": "c1", "type": "function"}
    call["function"] = {"name": "search", "arguments": f'{{"q": "{tokens["toolargs"]}"}}'}
    store.append_messages(
        sid,
        [
            {"role": "user", "content": f"remember {tokens['compacted']} please"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "nothing found"},
            {"role": "user", "content": f"and {tokens['active']} too"},
        ],
    )
    store.commit_compaction(
        sid,
        [
            {"role": "user", "content": f"summary: {tokens['summary']}"},
            {"role": "user", "content": f"and {tokens['active']} too"},
        ],
        [None, 4],
        in_place=True,
    )


def _memory(hermes: Hermes, user: str | None, tokens: dict[str, str]) -> None:
    documents = hermes.memory_documents()
    store = open_store(hermes.home, hermes.settings, user_id=user, documents=documents)
    assert store.add("user", f"profile {tokens['userfile']}")["success"]
    if user is not None:  # the anonymous principal's MEMORY.md is the shared one
        assert store.add("memory", f"note {tokens['memoryfile']}")["success"]
    if documents.kind == "files":
        for target in ("user", "memory") if user is not None else ("user",):
            path = store.path(target)
            text = path.read_text(encoding="utf-8")
            path.write_text(text + f"\n§\nold {tokens['backup']}", encoding="utf-8")
            backup_copy(path, always=True)
            path.write_text(text, encoding="utf-8")
    pending = documents.pending
    record = PendingWrite(
        id=pending.new_id(),
        action="add",
        target="user",
        origin="cli",
        created=time.time(),
        content=f"staged {tokens['staged']}",
        user_id=user,
        format=2,
    )
    pending.add(record)
    log: Any = getattr(documents, "audit_log", None) or FileAuditLog(
        audit_directory(hermes.home), "memory"
    )
    recorder = AuditRecorder(log, store="memory", user_id=user)
    recorder.record("landed", actor="model", contents=[f"said {tokens['audit']}"], target="user")


def plant_shared(hermes: Hermes, user: str) -> str:
    """An entry of the shared MEMORY.md that ``user`` wrote (known from its audit line)."""
    entry = f"shared {token(user, 'sharedentry')}"
    documents = hermes.memory_documents()
    store = open_store(hermes.home, hermes.settings, user_id=None, documents=documents)
    assert store.add("memory", entry)["success"]
    log: Any = getattr(documents, "audit_log", None) or FileAuditLog(
        audit_directory(hermes.home), "memory"
    )
    recorder = AuditRecorder(log, store="memory", user_id=user)
    recorder.record("landed", actor="model", contents=[entry], target="memory", shared=True)
    return token(user, "sharedentry")


def home_bytes(home: Path) -> dict[Path, bytes]:
    """Every regular file under the home (the database and its -wal included), as bytes."""
    return {p: p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}


def where(found: dict[Path, bytes], needle: str) -> list[str]:
    data = needle.encode()
    return [str(path) for path, content in found.items() if data in content]
