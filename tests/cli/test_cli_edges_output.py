"""What the commands print (issue 16 §3): ``--json`` on ``validate`` and every ``sessions``
subcommand, 0-based indexes said out loud, thousands separators, "1 problem", and one
``error:`` prefix, never two."""

from __future__ import annotations

import argparse
import json
import re
import textwrap
from pathlib import Path

import pytest

from hermes_core.cli import build_parser, main
from hermes_core.cli.text import count, plural, without_error_prefix
from hermes_core.sessions.sqlite import SQLiteSessionStore

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "coding-session.json"

pytestmark = pytest.mark.usefixtures("isolated_home")

CALL = {"id": "a", "type": "function", "function": {"name": "t", "arguments": "{}"}}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _transcript(path: Path, messages: list[dict[str, object]]) -> str:
    path.write_text(json.dumps(messages))
    return str(path)


# --- validate ------------------------------------------------------------------------------


def test_validate_json_names_each_problem_by_its_0_based_index(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    broken = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "wizard", "content": "x"},
    ]
    code, out, err = run(capsys, "validate", _transcript(tmp_path / "b.json", broken), "--json")
    document = json.loads(out)
    assert code == 1 and err == ""
    assert document["valid"] is False and document["messages"] == 3
    assert document["indexes"] == "0-based"
    indexes = {p["index"] for p in document["problems"]}
    assert indexes == {1, 2}  # the unanswered call (message 1), the unknown role (message 2)
    assert all(
        p["problem"] and not p["problem"].startswith("message ") for p in document["problems"]
    )

    code, out, _err = run(capsys, "validate", str(EXAMPLE), "--json")
    assert code == 0 and json.loads(out)["valid"] is True and json.loads(out)["problems"] == []


def test_validate_text_says_indexes_are_0_based_and_counts_in_words(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """One problem is "1 problem"; 1,200 messages carry their separator."""
    messages: list[dict[str, object]] = [{"role": "user", "content": f"m{i}"} for i in range(1199)]
    messages.append({"role": "wizard", "content": "x"})
    code, out, err = run(capsys, "validate", _transcript(tmp_path / "long.json", messages))
    assert code == 1 and out.startswith("message 1199: ")
    assert "1 problem in 1,200 messages" in err and "problems" not in err
    assert "0-based" in err
    assert main(["validate", "--help"]) == 0
    assert "0-based" in capsys.readouterr().out


def test_compress_of_an_invalid_transcript_says_1_problem(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "wizard", "content": "x"}]
    code, _out, err = run(capsys, "compress", _transcript(tmp_path / "w.json", messages), "--force")
    assert code == 1 and "(1 problem;" in err and "1 problems" not in err


# --- thousands separators and plurals ------------------------------------------------------

BARE_FIGURE = re.compile(r"(?<![\w.,/-])\d{4,}(?![\w.,])")


def test_counts_carry_thousands_separators(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    many: list[dict[str, object]] = [{"role": "user", "content": "word " * 3} for _ in range(1500)]
    path = _transcript(tmp_path / "many.json", many)
    outputs = []
    for argv in (["tokens", path], ["validate", path], ["config", "check"]):
        code, out, err = run(capsys, *argv)
        assert code == 0, err
        outputs.append((out + err).replace(path, "FILE"))
    text = "\n".join(outputs)
    assert "1,500 messages" in text
    assert BARE_FIGURE.findall(text) == []


def test_plural_helper() -> None:
    assert [count(n, "problem") for n in (0, 1, 2, 12345)] == [
        "0 problems",
        "1 problem",
        "2 problems",
        "12,345 problems",
    ]
    assert plural(1, "entry", "entries") == "entry" and plural(3, "entry", "entries") == "entries"


# --- one error: prefix ---------------------------------------------------------------------

BROKEN_PLUGIN = """
class Broken:
    def __init__(self, context):
        raise RuntimeError("the broken plugin cannot start")
"""


def test_a_failed_plugin_is_reported_with_one_error_prefix(
    capsys: pytest.CaptureFixture[str],
    isolated_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A plugin's status is ``error: ...`` (a label for the ``plugins`` table); ``config check``
    printed it after its own ``error:``."""
    site = tmp_path / "site"
    info = site / "hermes_broken-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes_broken\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[hermes_context.plugins]\nbroken = broken_plugin:Broken\n"
    )
    (site / "broken_plugin.py").write_text(textwrap.dedent(BROKEN_PLUGIN))
    monkeypatch.syspath_prepend(str(site))
    (isolated_home / "config.yaml").write_text("plugins:\n  enabled: [broken]\n")
    code, out, err = run(capsys, "config", "check")
    assert code == 2 and out == ""
    assert "the broken plugin cannot start" in err
    assert err.count("error:") == 1 and "error: error" not in err, err
    assert err.startswith("hermes-context: error: plugin 'broken'")


def test_an_error_message_that_starts_with_error_is_not_prefixed_twice(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The category: whatever raised it, one prefix on every line."""
    from hermes_core.cli import tokens_cmd
    from hermes_core.errors import HermesError

    def failing(_args: object) -> int:
        raise HermesError("error: first line\nError: second line")

    monkeypatch.setattr(tokens_cmd, "run", failing)
    code, _out, err = run(capsys, "tokens", str(EXAMPLE))
    assert code == 1
    assert err == "hermes-context: error: first line\nsecond line\n"
    assert without_error_prefix("error: error: x") == "x"
    assert without_error_prefix("an error: inside stays") == "an error: inside stays"


# --- sessions --json -----------------------------------------------------------------------


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


@pytest.fixture
def seeded(isolated_home: Path) -> Path:
    store = SQLiteSessionStore(isolated_home / "state.db")
    store.open_session("s-1", user_id=None, model="gpt-x", title="backups")
    store.append_messages(
        "s-1",
        [
            {"role": "user", "content": "the backup job fails"},
            {"role": "assistant", "content": "ok"},
        ],
    )
    store.close()
    return isolated_home


def test_every_sessions_subcommand_has_json(
    capsys: pytest.CaptureFixture[str], seeded: Path
) -> None:
    actions = _subcommands(_subcommands(build_parser())["sessions"])
    for name, parser in actions.items():
        assert any("--json" in a.option_strings for a in parser._actions), name
    for argv in (["list"], ["show", "s-1"], ["search", "backup"], ["export", "s-1"]):
        code, out, err = run(capsys, "sessions", *argv, "--json")
        assert code == 0, err
        json.loads(out)


def test_sessions_export_json_conflicting_with_another_format_is_refused(
    capsys: pytest.CaptureFixture[str], seeded: Path
) -> None:
    code, out, err = run(capsys, "sessions", "export", "s-1", "--json", "--format", "md")
    assert code == 2 and out == ""
    assert "--json is --format json" in err
