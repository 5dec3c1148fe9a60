"""Bad bundles and collisions are refused with a clear message, and the target is unchanged."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from bundle_homes import (
    alice_bundle,
    edit_lines,
    file_parts,
    home_state,
    reseal_manifest,
    rewrite_bundle,
)

from hermes_core.cli import main
from hermes_core.errors import SessionError
from hermes_core.lifecycle.bundle_export import BundleParts
from hermes_core.lifecycle.bundle_format import BundleError, read_bundle
from hermes_core.lifecycle.bundle_import import import_bundle
from hermes_core.lifecycle.bundle_parse import parse_contents
from hermes_core.sessions.sqlite import SQLiteSessionStore


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return alice_bundle(tmp_path_factory.mktemp("bundle"))


@pytest.fixture
def target(tmp_path: Path) -> Iterator[BundleParts]:
    """A home with one session and a USER.md of its own."""
    home = tmp_path / "target"
    store = SQLiteSessionStore(home / "state.db")
    store.open_session("t-1", user_id="alice", title="already here")
    store.append_messages("t-1", [{"role": "user", "content": "kept as it was"}])
    yield file_parts(home, store)
    store.close()


def _state(parts: BundleParts) -> tuple[Any, dict[str, bytes]]:
    return home_state(parts)


def _newer(members: dict[str, bytes]) -> None:
    manifest: dict[str, Any] = {
        "format": "hermes-context-bundle",
        "version": 2,
        "user": {"id": "alice"},
    }
    reseal_manifest(manifest, members)
    members["manifest.json"] = json.dumps(manifest).encode()


def _garble(members: dict[str, bytes]) -> None:
    members["messages.jsonl"] = members["messages.jsonl"].replace(b"pelican", b"PELICAN")


BAD: dict[str, tuple[Callable[[dict[str, bytes]], None], bool, str]] = {
    "tampered": (_garble, False, "does not match its checksum"),
    "newer": (_newer, True, "newer than this hermes-context reads"),
    "malformed": (lambda m: m.__setitem__("sessions.jsonl", b"{not json\n"), True, "not JSON"),
    "another user": (
        edit_lines("sessions.jsonl", lambda s: s.__setitem__("user_id", "bob")),
        True,
        "belongs to another user",
    ),
    "stray row": (
        edit_lines("messages.jsonl", lambda m: m.__setitem__("session_id", "nowhere")),
        True,
        "names a session the bundle does not hold",
    ),
    "missing member": (lambda m: m.pop("skills.jsonl"), False, "members"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_bundle_is_refused_and_nothing_changes(
    case: str, bundle: Path, target: BundleParts, tmp_path: Path
) -> None:
    change, reseal, message = BAD[case]
    bad = rewrite_bundle(bundle, tmp_path / "bad.zip", change, reseal=reseal)
    before = _state(target)
    with pytest.raises(BundleError, match=message):
        import_bundle(bad, target)
    assert _state(target) == before


def test_missing_checksum_and_truncation_are_refused(
    bundle: Path, target: BundleParts, tmp_path: Path
) -> None:
    def unsealed(members: dict[str, bytes]) -> None:
        with zipfile.ZipFile(bundle) as archive:
            manifest = json.loads(archive.read("manifest.json"))
        del manifest["sha256"]
        members["manifest.json"] = json.dumps(manifest).encode()

    before = _state(target)
    with pytest.raises(BundleError, match="checksum does not match"):
        import_bundle(rewrite_bundle(bundle, tmp_path / "u.zip", unsealed), target)
    data = bundle.read_bytes()
    for cut in (len(data) // 2, len(data) - 30):
        short = tmp_path / f"short{cut}.zip"
        short.write_bytes(data[:cut])
        with pytest.raises(BundleError, match="truncated"):
            import_bundle(short, target)
    assert _state(target) == before


def test_cli_refuses_a_truncated_bundle_before_opening_the_home(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    short = tmp_path / "short.zip"
    short.write_bytes(bundle.read_bytes()[:200])
    home = tmp_path / "untouched"
    home.mkdir()
    assert main(["import", "--home", str(home), str(short)]) == 1
    assert "truncated" in capsys.readouterr().err
    assert list(home.iterdir()) == []


def test_collisions_are_named_and_skip_existing_imports_the_rest(
    bundle: Path, target: BundleParts
) -> None:
    import_bundle(bundle, target)
    first = _state(target)
    with pytest.raises(BundleError) as refused:
        import_bundle(bundle, target)
    text = str(refused.value)
    assert "sessions: a-1, a-2, a-3" in text and "--skip-existing" in text
    assert "pending_memory: 0000aaaa" in text and "skills: devops/deploy" in text
    assert _state(target) == first
    report = import_bundle(bundle, target, skip_existing=True)
    assert report.sessions == 0 and report.skipped["sessions"] == ["a-1", "a-2", "a-3"]
    assert _state(target) == first


def test_memory_text_in_the_way_is_a_collision(bundle: Path, target: BundleParts) -> None:
    path = target.skills_root.parent / "memories" / "users" / "alice" / "USER.md"
    path.parent.mkdir(parents=True)
    path.write_text("Alice, as this home knows her.")
    with pytest.raises(BundleError, match="memory: user"):
        import_bundle(bundle, target)
    assert target.store.list_sessions(user_id="alice")[0].id == "t-1"
    report = import_bundle(bundle, target, skip_existing=True)
    assert report.skipped["memory"] == ["user"] and report.sessions == 3
    assert path.read_text() == "Alice, as this home knows her."


def test_session_rows_are_all_or_nothing(bundle: Path, target: BundleParts) -> None:
    """A collision found inside the transaction (a session made meanwhile) writes none."""
    sessions = parse_contents(read_bundle(bundle)).sessions
    target.store.open_session("a-3", user_id="alice")
    store = target.store
    assert isinstance(store, SQLiteSessionStore)
    with pytest.raises(SessionError, match="a-3"):
        store.import_sessions(sessions)
    assert store.existing_sessions(["a-1", "a-2", "a-3"]) == {"a-3"}
    assert store.search("pelican", user_id="alice") == []
