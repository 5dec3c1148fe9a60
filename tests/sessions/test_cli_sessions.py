"""``hermes-context sessions ...`` end to end, on the home's real state.db."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sessions_support import assistant, call, tool_result, user

from hermes_core.cli import main
from hermes_core.sessions.sqlite import SQLiteSessionStore
from hermes_core.transcript.files import read_transcript

pytestmark = pytest.mark.usefixtures("isolated_home")

ORIGINAL = [
    {"role": "system", "content": "be brief"},
    user("the cron job for backups fails at 3am"),
    assistant(None, tool_calls=[call("c1", "terminal", '{"command": "crontab -l"}')]),
    tool_result("c1", "terminal", "0 3 * * * /usr/local/bin/backup.sh"),
    assistant("the script is not executable"),
]
SUMMARY = user("[summary] the backup cron job failed: the script was not executable")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["sessions", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def seeded(isolated_home: Path) -> Path:
    store = SQLiteSessionStore(isolated_home / "state.db")
    store.open_session("anon-1", user_id=None, model="gpt-x", title="backups")
    store.append_messages("anon-1", ORIGINAL)
    store.commit_compaction("anon-1", [ORIGINAL[0], SUMMARY], [1, None], in_place=True)
    store.open_session("alice-1", user_id="alice", title="alice's backups")
    store.append_messages("alice-1", [user("my backup cron job is private")])
    store.close()
    return isolated_home


def test_list_as_each_user(capsys: pytest.CaptureFixture[str], seeded: Path) -> None:
    code, out, _ = run(capsys, "list")
    assert code == 0
    assert out.splitlines()[0].split() == ["id", "started", "ended", "model", "parent", "title"]
    assert "anon-1" in out and "gpt-x" in out and "alice-1" not in out
    code, out, _ = run(capsys, "list", "--user", "alice", "--json")
    assert code == 0
    (record,) = json.loads(out)
    assert (record["id"], record["user_id"], record["title"]) == (
        "alice-1",
        "alice",
        "alice's backups",
    )
    code, out, err = run(capsys, "list", "--user", "nobody")
    assert (code, out) == (0, "") and "no sessions" in err


def test_show_prints_the_active_view_and_with_all_the_archived_rows(
    capsys: pytest.CaptureFixture[str], seeded: Path
) -> None:
    code, out, _ = run(capsys, "show", "anon-1")
    assert code == 0
    assert "session anon-1: backups" in out and "2 active messages" in out
    assert "[summary] the backup cron job failed" in out
    assert "crontab" not in out and "[archived]" not in out
    code, out, _ = run(capsys, "show", "anon-1", "--all")
    assert code == 0
    assert out.count("[archived]") == 4
    assert "#2 user [archived]" in out and "the cron job for backups fails at 3am" in out
    assert '-> terminal({"command": "crontab -l"})' in out
    assert "#6 user\n[summary]" in out  # the summary row is active, unmarked


def test_show_json(capsys: pytest.CaptureFixture[str], seeded: Path) -> None:
    code, out, _ = run(capsys, "show", "anon-1", "--all", "--json")
    assert code == 0
    document = json.loads(out)
    assert document["session"]["id"] == "anon-1"
    rows = document["messages"]
    assert [r["seq"] for r in rows] == [1, 2, 3, 4, 5, 6]
    assert [r["message"] for r in rows[:5]] == ORIGINAL
    assert [(r["active"], r["compacted"]) for r in rows] == [
        (True, False),
        *[(False, True)] * 4,
        (True, False),
    ]


@pytest.mark.parametrize("action", ["show", "export"])
def test_another_users_session_is_no_such_session(
    capsys: pytest.CaptureFixture[str], seeded: Path, action: str
) -> None:
    for argv in (
        [action, "alice-1"],
        [action, "alice-1", "--user", "bob"],
        [action, "anon-1", "--user", "alice"],
        [action, "missing"],
    ):
        code, out, err = run(capsys, *argv)
        assert code == 1, argv
        assert out == ""
        assert err.startswith(f"hermes-context: error: no such session: {argv[1]}")
        assert "Traceback" not in err and "private" not in err


def test_search_as_one_user(capsys: pytest.CaptureFixture[str], seeded: Path) -> None:
    code, out, _ = run(capsys, "search", "backup cron")
    assert code == 0
    assert out.startswith("anon-1: backups")
    assert ">>" in out and "<<" in out
    assert "alice" not in out and "private" not in out
    code, out, _ = run(capsys, "search", "backup cron", "--user", "alice", "--json")
    assert code == 0
    (hit,) = json.loads(out)
    assert hit["session_id"] == "alice-1" and ">>backup<<" in hit["snippet"]
    assert [c["seq"] for c in hit["context"]] == [1]
    code, out, err = run(capsys, "search", "backup", "--user", "mallory")
    assert (code, out) == (0, "") and "no matching sessions" in err


def test_search_finds_archived_rows(capsys: pytest.CaptureFixture[str], seeded: Path) -> None:
    code, out, _ = run(capsys, "search", "crontab", "--json")
    assert code == 0
    (hit,) = json.loads(out)
    assert hit["seq"] == 3 and hit["matches"] == 1


@pytest.mark.parametrize(
    "query", ['pytest -k "foo"', "src/app.py:12", "NOT", '"', "content:", "*", "🎉", "\x01"]
)
def test_hostile_queries_exit_0(
    capsys: pytest.CaptureFixture[str], seeded: Path, query: str
) -> None:
    code, _, err = run(capsys, "search", query)
    assert code == 0 and "Traceback" not in err and "error" not in err


def test_export_json_is_a_transcript_the_other_commands_read(
    capsys: pytest.CaptureFixture[str], seeded: Path, tmp_path: Path
) -> None:
    out_file = tmp_path / "export.json"
    code, out, err = run(capsys, "export", "anon-1", "--out", str(out_file))
    assert code == 0 and out == "" and "wrote 2 messages" in err
    document = json.loads(out_file.read_text(encoding="utf-8"))
    assert document["session"]["id"] == "anon-1"
    assert read_transcript(str(out_file)) == [ORIGINAL[0], SUMMARY]


def test_export_jsonl_and_markdown(capsys: pytest.CaptureFixture[str], seeded: Path) -> None:
    code, out, _ = run(capsys, "export", "anon-1", "--format", "jsonl")
    assert code == 0
    assert [json.loads(line) for line in out.splitlines()] == [ORIGINAL[0], SUMMARY]
    code, out, _ = run(capsys, "export", "anon-1", "--format", "md")
    assert code == 0
    assert out.startswith("# Session anon-1\n\n**backups**\n")
    assert "- model: gpt-x" in out
    assert "## system\n\nbe brief" in out and "## user\n\n[summary] the backup" in out


def test_export_of_a_child_names_its_parent(
    capsys: pytest.CaptureFixture[str], seeded: Path
) -> None:
    store = SQLiteSessionStore(seeded / "state.db")
    store.commit_compaction("anon-1", [SUMMARY], [6], in_place=False, child_session_id="anon-2")
    store.close()
    code, out, _ = run(capsys, "export", "anon-2", "--format", "md")
    assert code == 0 and "- continues: anon-1" in out
    code, out, _ = run(capsys, "list")
    assert "compression" in out and "anon-2" in out


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], seeded: Path) -> None:
    assert run(capsys, "list", "--limit", "0")[0] == 2
    assert run(capsys, "search", "x", "--limit", "many")[0] == 2
    assert run(capsys, "export", "anon-1", "--format", "xml")[0] == 2


def test_a_disabled_store_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    (isolated_home / "config.yaml").write_text("sessions:\n  enabled: false\n")
    code, out, err = run(capsys, "list")
    assert (code, out) == (2, "")
    assert "sessions.enabled: false" in err
    assert not (isolated_home / "state.db").exists()


def test_the_configured_db_path_is_used(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    (isolated_home / "config.yaml").write_text("sessions:\n  db_path: data/other.db\n")
    store = SQLiteSessionStore(isolated_home / "data" / "other.db")
    store.open_session("elsewhere", user_id=None)
    store.close()
    code, out, _ = run(capsys, "list")
    assert code == 0 and "elsewhere" in out
    assert not (isolated_home / "state.db").exists()


def test_a_corrupt_store_is_one_line_and_exit_1(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    (isolated_home / "state.db").write_bytes(b"garbage " * 512)
    code, out, err = run(capsys, "list")
    assert (code, out) == (1, "")
    assert err.count("\n") == 1 and "move it aside" in err and "Traceback" not in err
