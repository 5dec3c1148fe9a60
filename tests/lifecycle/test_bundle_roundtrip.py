"""Export one user's data and import it into an empty home: everything equal, search works,
nothing of another user travels."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from bundle_homes import BOB_TOKEN, file_parts, seed_files, seed_sessions, snapshot

from hermes_core.cli import main
from hermes_core.lifecycle.bundle_export import export_bundle
from hermes_core.lifecycle.bundle_format import FORMAT_VERSION, MEMBERS
from hermes_core.lifecycle.bundle_import import import_bundle
from hermes_core.sessions.sqlite import SQLiteSessionStore


@pytest.fixture
def source(tmp_path: Path) -> Path:
    home = tmp_path / "source"
    home.mkdir()
    store = SQLiteSessionStore(home / "state.db")
    seed_sessions(store)
    store.close()
    seed_files(home)
    return home


def test_round_trip_sqlite_to_sqlite_is_equal(source: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "alice.zip"
    store = SQLiteSessionStore(source / "state.db")
    parts = file_parts(source, store)
    done = export_bundle(bundle, parts, user_id="alice")
    before = snapshot(parts, "alice")
    store.close()
    assert done["counts"]["sessions"] == 3 and done["counts"]["archived_messages"] >= 3
    assert oct(bundle.stat().st_mode & 0o777) == "0o600"

    target = tmp_path / "target"
    target_store = SQLiteSessionStore(target / "state.db")
    target_parts = file_parts(target, target_store)
    report = import_bundle(bundle, target_parts)
    assert report.sessions == 3 and report.memory_blocks == ["user"]
    after = snapshot(target_parts, "alice")
    assert after == before
    assert before["skill_dates"] and report.skill_dates == 1  # the skills' dates travel
    assert before["skills"]["devops/deploy/scripts/ship.sh"][1]  # the executable bit too
    assert before["sessions"][0]["rows"][0]["api_content"].endswith("[recall: none]")
    assert any(not r["active"] for s in before["sessions"] for r in s["rows"])
    # the index is right: words of active and archived rows, and CJK, are found
    assert [h.session_id for h in target_store.search("pelican", user_id="alice")] == ["a-1"]
    assert target_store.search("wall clock", user_id="alice")[0].session_id == "a-1"
    assert {h.session_id for h in target_store.search("数据库", user_id="alice")} == {"a-2"}
    assert target_store.search("pelican", user_id="bob") == []
    assert target_store.lineage("a-3") == ["a-2", "a-3"]
    target_store.close()


def test_bob_is_not_in_alices_bundle(source: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "alice.zip"
    store = SQLiteSessionStore(source / "state.db")
    export_bundle(bundle, file_parts(source, store), user_id="alice")
    store.close()
    with zipfile.ZipFile(bundle) as archive:
        text = b"".join(archive.read(n) for n in archive.namelist())
        manifest = json.loads(archive.read("manifest.json"))
    assert BOB_TOKEN.encode() not in text and b"b-1" not in text and b"0000bbbb" not in text
    assert b"shared note" not in text  # the shared MEMORY.md is every user's
    assert manifest["version"] == FORMAT_VERSION and set(manifest["members"]) == set(MEMBERS)
    assert manifest["user"] == {"id": "alice", "anonymous": False}
    assert any("shared MEMORY.md" in n for n in manifest["notes"])
    # staged skill writes go by their provenance: alice's only (bob's holds BOB_TOKEN)
    assert b"0000dddd" in text and b"0000eeee" not in text and b"0000cccc" not in text
    assert any("staged skill write(s) of other users" in n for n in manifest["notes"])


def test_anonymous_principal_exports_both_blocks(tmp_path: Path) -> None:
    home = tmp_path / "solo"
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").write_text("solo note")
    (home / "memories" / "USER.md").write_text("solo profile")
    store = SQLiteSessionStore(home / "state.db")
    store.open_session("s", user_id=None)
    store.append_messages("s", [{"role": "user", "content": "anonymous heron"}])
    store.open_session("named", user_id="carol")
    bundle = tmp_path / "solo.zip"
    done = export_bundle(bundle, file_parts(home, store), user_id=None)
    store.close()
    assert done["counts"]["sessions"] == 1 and done["counts"]["memory_blocks"] == 2
    target = tmp_path / "other"
    target_store = SQLiteSessionStore(target / "state.db")
    parts = file_parts(target, target_store)
    import_bundle(bundle, parts)
    assert parts.documents.read("memory", None) == "solo note\n"  # files end in a newline
    assert parts.documents.read("user", None) == "solo profile\n"
    assert target_store.search("heron", user_id=None)[0].session_id == "s"
    assert target_store.list_sessions(user_id="carol") == []
    target_store.close()


def test_cli_export_then_import(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = tmp_path / "cli.zip"
    assert main(["export", "--home", str(source), "--user", "alice", "--out", str(bundle)]) == 0
    assert "3 session(s)" in capsys.readouterr().out
    # never over an existing file
    assert main(["export", "--home", str(source), "--user", "alice", "--out", str(bundle)]) == 1
    assert "exists" in capsys.readouterr().err
    # the anonymous principal has its own spelling; a home that is not one is refused
    anonymous = tmp_path / "anon.zip"
    assert main(["export", "--home", str(source), "--anonymous", "--out", str(anonymous)]) == 0
    assert "0 session(s)" in capsys.readouterr().out
    missing = tmp_path / "typo"
    assert (
        main(["export", "--home", str(missing), "--user", "alice", "--out", str(tmp_path / "y")])
        == 2
    )
    assert not missing.exists() and "holds no hermes-context home" in capsys.readouterr().err
    # --user or --anonymous is required
    assert main(["export", "--home", str(source), "--out", str(tmp_path / "x.zip")]) == 2
    capsys.readouterr()
    target = tmp_path / "target"
    target.mkdir()
    assert main(["import", "--home", str(target), str(bundle), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sessions"] == 3 and report["skills"] == 1 and report["pending_memory"] == 1
    assert (target / "skills" / "devops" / "deploy" / "assets" / "logo.bin").read_bytes() == bytes(
        range(256)
    )
    code = main(["sessions", "search", "pelican", "--home", str(target), "--user", "alice"])
    assert code == 0 and "a-1" in capsys.readouterr().out


def test_entry_dates_travel_with_the_memory_block(tmp_path: Path) -> None:
    """Issue 28 items 1 and 3: each block's entry dates (created, updated, last used) are in
    the bundle and are the imported entries' dates, not the time of the import."""
    from hermes_core.memory.dated import read_block_dates, write_block_dates
    from hermes_core.memory.store import MemoryStore

    home = tmp_path / "dated"
    store = MemoryStore(home / "memories", user_id="alice")
    assert store.add("user", "Alice prefers tabs for indentation")["success"]
    assert store.add("user", "Alice drinks green tea")["success"]
    dates = read_block_dates(store.documents, "user", "alice")
    for record in dates["entries"]:
        record["created"] = record["updated"] = "2025-03-01T09:00:00Z"
    dates["entries"][0]["last_used"] = "2025-04-02T10:00:00Z"
    assert write_block_dates(store.documents, "user", "alice", dates) == 2
    sessions = SQLiteSessionStore(home / "state.db")
    bundle = tmp_path / "alice.zip"
    export_bundle(bundle, file_parts(home, sessions), user_id="alice")
    sessions.close()
    with zipfile.ZipFile(bundle) as archive:
        [block] = json.loads(archive.read("memory.json"))["blocks"]
    assert {r["created"] for r in block["dates"]["entries"]} == {"2025-03-01T09:00:00Z"}

    target = tmp_path / "target"
    target_sessions = SQLiteSessionStore(target / "state.db")
    parts = file_parts(target, target_sessions)
    assert import_bundle(bundle, parts).memory_blocks == ["user"]
    target_sessions.close()
    imported = MemoryStore(target / "memories", user_id="alice")
    got = {entry: d for entry, d in imported.dated("user")}
    original = {entry: d for entry, d in store.dated("user")}
    assert got == original
    assert got["Alice prefers tabs for indentation"].last_used is not None
