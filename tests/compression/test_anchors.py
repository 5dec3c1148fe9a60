"""The anchor ledger: extraction per category, redaction, merge, bounded render, round trips,
retention on the sample transcripts, the growth guard, and robustness on hostile input."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scaling import growth

from hermes_core.compression.anchors import (
    ANCHOR_HEADER,
    DEFAULT_LEDGER_CHARS,
    AnchorLedger,
    extract_anchors,
    guard_summary,
    key_chars,
    ledger_bound,
    parse_anchor_section,
    split_summary,
)
from hermes_core.compression.anchors.items import failure_command
from hermes_core.compression.assemble import SUMMARY_KEY, wrap_summary
from hermes_core.transcript.messages import turn_groups

TRANSCRIPTS = Path(__file__).parents[1] / "data" / "transcripts"
KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2


def load(name: str) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((TRANSCRIPTS / f"{name}.json").read_text())
    return data


def call(name: str, cid: str = "c1", **args: Any) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    return {"role": "assistant", "content": "", "tool_calls": [{"id": cid, "function": function}]}


def result(content: str, cid: str = "c1") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "content": content}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def truth(messages: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """Independent ground truth: every `path` and `command` argument of the tool calls."""
    paths: set[str] = set()
    commands: set[str] = set()
    for msg in messages:
        for tool_call in msg.get("tool_calls") or []:
            args = json.loads(tool_call["function"]["arguments"])
            if isinstance(args.get("path"), str):
                paths.add(args["path"])
            if isinstance(args.get("command"), str):
                commands.add(" ".join(args["command"].split()))
    return paths, commands


def items(rendered: str) -> set[str]:
    return {line[2:] for line in rendered.splitlines() if line.startswith("- ")}


# --- paths ---------------------------------------------------------------------------------


def test_paths_from_tool_arguments() -> None:
    ledger = extract_anchors(
        [
            call("read_file", "a", path="/srv/app/main.py", offset=1),
            call("write_file", "b", file_path="src/x/y.ts", content="x = 1"),
            call("edit", "c", paths=["docs/a.md", "docs/b.md"], filename="setup.cfg"),
            call("copy", "d", target="build/out.js", source="not a path at all"),
            call("search_files", "e", pattern="def x", path="zoneinfo", target="content"),
        ]
    )
    assert ledger.paths == [
        "/srv/app/main.py",
        "src/x/y.ts",
        "docs/a.md",
        "docs/b.md",
        "setup.cfg",
        "build/out.js",
        "zoneinfo",
    ]


def test_paths_from_patch_headers() -> None:
    patch = "*** Begin Patch\n*** Update File: lib/core.py\n@@\n-a\n+b\n*** End Patch"
    diff = "--- a/pkg/util.go\n+++ b/pkg/util.go\n@@ -1 +1 @@\n-x\n+y"
    ledger = extract_anchors([call("apply_patch", "a", input=patch), call("patch", "b", diff=diff)])
    assert ledger.paths == ["lib/core.py", "pkg/util.go"]


def test_paths_and_commands_from_broken_or_huge_arguments() -> None:
    broken = '{"path": "/a/b.py", "content": "unterminated'
    huge = json.dumps({"command": "make all", "content": "x" * 500_000, "file_path": "/z.py"})
    messages = [
        {
            "role": "assistant",
            "tool_calls": [{"id": "a", "function": {"name": "write_file", "arguments": broken}}],
        },
        {
            "role": "assistant",
            "tool_calls": [{"id": "b", "function": {"name": "terminal", "arguments": huge}}],
        },
    ]
    ledger = extract_anchors(messages)
    assert ledger.paths == ["/a/b.py", "/z.py"]
    assert ledger.commands == ["make all"]


def test_path_tokens_in_text() -> None:
    text = (
        "Look at /abs/path.py and src/x/y.ts, then ./a.md; the failure is in pkg/mod.py:123. "
        "Also `~/notes.txt` and **README.md** and C:\\work\\app.py"
    )
    ledger = extract_anchors([user(text)])
    assert ledger.paths == [
        "/abs/path.py",
        "src/x/y.ts",
        "./a.md",
        "pkg/mod.py",
        "~/notes.txt",
        "README.md",
        "C:\\work\\app.py",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "see https://example.com/a/b.py for details",
        "python 3.11.7 and v1.2.3",
        "about 1/2 of the runs, 3/4 of the time",
        "released 2024/01/05 or 05/01/2024",
        "and/or TCP/IP input/output km/s",
        "e.g. this, i.e. that, etc.",
        "json.decoder.JSONDecodeError and os.path.join",
        "built with Node.js and Vue.js",
        "a fraction 22/7 and a ratio 16/9",
        "</think> and <br/> tags",
        "/ alone and // and /. and /1/2",
    ],
)
def test_path_false_positives(text: str) -> None:
    assert extract_anchors([user(text)]).paths == []


def test_error_line_paths_and_mention_tails() -> None:
    trace = 'Traceback (most recent call last):\n  File "x"\nValueError: bad\n'
    messages = [
        call("read_file", "a", path="/repo/pkg/locks.py"),
        result('{"content": "1|x"}', "a"),
        user("locks.py is broken, and so is other.py"),
        call("terminal", "b", command="pytest"),
        result(json.dumps({"output": "tests/test_x.py:12: AssertionError\n" + trace}), "b"),
    ]
    ledger = extract_anchors(messages)
    # "locks.py" only repeats the tail of a path already listed; other.py is new
    assert ledger.paths == ["/repo/pkg/locks.py", "other.py", "tests/test_x.py"]


# --- commands ------------------------------------------------------------------------------


def test_commands_from_shell_calls() -> None:
    ledger = extract_anchors(
        [
            call("terminal", "a", command="  pytest -q tests/  "),
            call("bash", "b", cmd="ls"),
            call("run_shell", "c", command=["git", "log", "--oneline"]),
            call("terminal", "d", command="cat > f <<EOF\nline one\n\nline two\nEOF"),
            call("terminal", "e", command="echo " + "x" * 1000),
        ]
    )
    assert ledger.commands[:4] == [
        "pytest -q tests/",
        "ls",
        "git log --oneline",
        "cat > f <<EOF ⏎ line one ⏎ line two ⏎ EOF",
    ]
    assert len(ledger.commands[4]) == 300
    assert ledger.commands[4].endswith("…")


def test_command_key_of_non_shell_tool_needs_a_command_line() -> None:
    ledger = extract_anchors([call("str_replace_based_edit_tool", "a", command="view", path="x")])
    assert ledger.commands == []
    assert ledger.paths == ["x"]


def test_commands_in_user_text() -> None:
    text = (
        "I ran\n$ npm test -- --watch\nand then `git status --short` and `./run.sh`.\n"
        "```bash\n# a comment\nmake build\n```\n"
        "Check `acquire` and `foo bar` and `python`."
    )
    ledger = extract_anchors([user(text)])
    assert ledger.commands == [
        "npm test -- --watch",
        "make build",
        "git status --short",
        "./run.sh",
    ]


# --- URLs ----------------------------------------------------------------------------------


def test_urls() -> None:
    messages = [
        user("Read (https://docs.python.org/3/library/json.html). Also https://x.org/a?b=1,"),
        user("Wiki: https://en.wikipedia.org/wiki/Foo_(bar) and data:image/png;base64,AAAA"),
        call("web_extract", "a", urls=["https://pypi.org/project/idna/"]),
    ]
    assert extract_anchors(messages).urls == [
        "https://docs.python.org/3/library/json.html",
        "https://x.org/a?b=1",
        "https://en.wikipedia.org/wiki/Foo_(bar)",
        "https://pypi.org/project/idna/",
    ]


# --- errors --------------------------------------------------------------------------------


def test_errors_from_tool_results() -> None:
    trace = (
        'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
        "    boom()\nKeyboardInterrupt\n"
    )
    pytest_out = (
        "E   AssertionError: assert 1 == 2\n"
        "FAILED tests/test_a.py::test_x - AssertionError: assert 1 == 2\n"
        "=========== 1 failed, 3 passed in 0.66s ===========\n"
    )
    messages = [
        call("terminal", "a", command="python3 boom.py"),
        result(json.dumps({"output": trace, "exit_code": 130}), "a"),
        call("terminal", "b", command="pytest -q"),
        result(json.dumps({"output": pytest_out, "exit_code": 1}), "b"),
        call("terminal", "c", command="gcc x.c"),
        result("x.c:3:5: error: expected ';'\nerror: linking failed", "c"),
        call("read_file", "d", path="missing.py"),
        result(json.dumps({"content": "", "error": "File not found: missing.py"}), "d"),
    ]
    assert extract_anchors(messages).errors == [
        "KeyboardInterrupt",
        "`python3 boom.py` -> exit 130",
        "E AssertionError: assert 1 == 2",
        "FAILED tests/test_a.py::test_x - AssertionError: assert 1 == 2",
        "1 failed, 3 passed",
        "`pytest -q` -> exit 1",
        "x.c:3:5: error: expected ';'",
        "error: linking failed",
        "read_file: File not found: missing.py",
    ]


def test_error_false_positives() -> None:
    source = (
        "   1|def f(x):\n   2|    try:\n   3|        g()\n   4|    except ValueError:\n"
        '   5|        raise TypeError("no")\nValueError: in a file body\n'
    )
    messages = [
        call("read_file", "a", path="f.py"),
        result(json.dumps({"content": source}), "a"),
        call("terminal", "b", command="grep -rn raise ."),
        result(json.dumps({"output": 'x.py:3:    raise ValueError("x")\n', "exit_code": 0}), "b"),
        call("web_extract", "c", urls=["https://a.io/x"]),
        result("# Docs\nSome text\nError: mentioned in the docs body", "c"),
    ]
    assert extract_anchors(messages).errors == []


def test_errors_are_short_and_pruned_results_count() -> None:
    long_error = "RuntimeError: " + "boom " * 200
    messages = [
        call("terminal", "a", command="x"),
        result(long_error, "a"),
        result("[terminal] ran `make` -> exit 2, 40 lines output", "b"),
        result("[terminal] ran `make` -> exit 0, 40 lines output", "c"),
    ]
    errors = extract_anchors(messages).errors
    assert len(errors) == 2
    assert len(errors[0]) <= 200
    assert errors[0].endswith("boom…")
    assert errors[1] == "[terminal] ran `make` -> exit 2, 40 lines output"


def test_a_failed_run_pruned_to_its_stand_in_stays_a_failed_command() -> None:
    """Tail pressure may prune a failed run before any summary reads it: the next middle holds
    only the one-line stand-in, whose exit code still says it failed (issue 24 §5)."""
    stand_in = "[terminal] ran `pytest t.py -q` -> exit 1, 16 lines output, FAILED: 1 failed"
    messages = [call("terminal", "a", command="pytest t.py -q"), result(stand_in, "a")]
    for max_chars in (None, 200):  # the full walk, and the light one past the bound
        ledger = extract_anchors(messages, max_chars=max_chars)
        assert ledger.failures == ["`pytest t.py -q` -> exit 1: 1 failed"]
    passed = stand_in.replace("exit 1", "exit 0")
    messages = [call("terminal", "a", command="pytest t.py -q"), result(passed, "a")]
    assert extract_anchors(messages).failures == []


def test_a_summary_hands_on_its_ledger_not_paths_clipped_in_its_prose() -> None:
    """The fallback's prose abridges (an earlier summary quoted, lines clipped, paths cut to
    their directory); mined, its fragments took ledger room from real paths at every
    compaction. Words of a user message merged under it still count."""
    clipped = "## Critical Context\n> - read_file ×3 (/home/dev/acme/services/reports/src …"
    body = clipped + "\n\n" + AnchorLedger(paths=["/a/b.py"]).render()
    plain = {"role": "user", "content": wrap_summary(body), SUMMARY_KEY: True}
    assert extract_anchors([plain]).paths == ["/a/b.py"]
    merged = {**plain, "content": plain["content"] + "\nNow fix /a/c.py"}
    assert extract_anchors([merged]).paths == ["/a/b.py", "/a/c.py"]


# --- identifiers and asks ------------------------------------------------------------------


def test_identifiers() -> None:
    text = (
        "Fixes #123 (see PR #45); commit 3f2a9c1 and deadbeef12; ticket ABC-123 and "
        "CVE-2024-12345. Not: UTF-8, ISO-8601, 1234567, abcdefg, call_356a192b7913b04c, "
        "550e8400-e29b-41d4, C#7, page#42, 0x7fef291552."
    )
    assert extract_anchors([user(text)]).identifiers == [
        "#123",
        "#45",
        "3f2a9c1",
        "deadbeef12",
        "ABC-123",
        "CVE-2024-12345",
    ]


def test_identifiers_in_commands() -> None:
    ledger = extract_anchors([call("terminal", "a", command="git show a1b2c3d4e5 --stat")])
    assert ledger.identifiers == ["a1b2c3d4e5"]


def test_asks_are_real_user_messages_one_line() -> None:
    long_ask = "Please fix\nthe   build " + "word " * 100
    messages = [
        user(long_ask),
        {"role": "user", "content": "earlier summary", "_compressed_summary": True},
        {"role": "user", "content": [{"type": "text", "text": "part ask"}, {"type": "image_url"}]},
        user("Please fix\nthe   build " + "word " * 100),
    ]
    asks = extract_anchors(messages).asks
    assert len(asks) == 2
    assert asks[0] == "part ask"  # the repeated ask sits where it was last seen
    assert asks[1].startswith("Please fix the build word")
    assert len(asks[1]) == 200


def test_ask_of_a_user_turn_with_a_merged_summary() -> None:
    merged = (
        "[CONTEXT SUMMARY]\n\nold prose\n\n--- END OF CONTEXT SUMMARY — respond below ---\nNew ask"
    )
    ledger = extract_anchors([{"role": "user", "content": merged}])
    assert ledger.asks == ["New ask"]


def test_commands_list_holds_separate_commands() -> None:
    ledger = extract_anchors([call("run_all", "a", commands=["npm test", "npm run build"])])
    assert ledger.commands == ["npm test", "npm run build"]


def test_summary_in_middle_hands_on_its_ledger() -> None:
    old = AnchorLedger(paths=["/old/a.py"], commands=["make old"])
    summary = {"role": "user", "content": "prose\n\n" + old.render(), "_compressed_summary": True}
    ledger = extract_anchors([summary, call("terminal", "a", command="make new")])
    assert ledger.paths == ["/old/a.py"]
    assert ledger.commands == ["make old", "make new"]


# --- redaction -----------------------------------------------------------------------------


def test_secrets_are_redacted_everywhere() -> None:
    messages = [
        user(f"use key {KEY} with `curl -H 'Authorization: Bearer {KEY}' https://a.io`"),
        call("terminal", "a", command=f"OPENAI_API_KEY={KEY} python run.py"),
        result(json.dumps({"output": f"ValueError: bad key {KEY}", "exit_code": 1}), "a"),
        call("web_extract", "b", urls=[f"https://user:hunter2pass@example.com/x?k={KEY}"]),
        call("read_file", "c", path=f"/tmp/{KEY}.txt"),
    ]
    ledger = extract_anchors(messages)
    rendered = ledger.render()
    assert KEY not in rendered
    assert "hunter2pass" not in rendered
    assert "OPENAI_API_KEY=[REDACTED:openai_key] python run.py" in ledger.commands
    assert "[REDACTED:openai_key]" in rendered
    direct = AnchorLedger(commands=[f"export K={KEY}"]).render()
    assert KEY not in direct


def test_secret_cut_by_length_is_redacted_first() -> None:
    command = "echo " + "y" * 280 + " " + KEY
    rendered = extract_anchors([call("terminal", "a", command=command)]).render()
    assert KEY[:12] not in rendered


# --- merge, render, parse ------------------------------------------------------------------


def test_merge_is_order_stable_and_deduplicated() -> None:
    old = AnchorLedger(paths=["a", "b", "c"], commands=["x"])
    new = AnchorLedger(paths=["d", "b", "d"], commands=["x", "y"], urls=["https://u.io"])
    merged = old.merge(new)
    assert merged.paths == ["a", "c", "d", "b"]  # "b" seen again: moves to its newer place
    assert merged.commands == ["x", "y"]
    assert merged.urls == ["https://u.io"]
    assert old.paths == ["a", "b", "c"]  # inputs untouched
    assert merged.merge(AnchorLedger()) == merged
    assert AnchorLedger().merge(merged) == merged


def test_merge_bounded_keeps_newest() -> None:
    old = AnchorLedger(asks=[f"old {i}" for i in range(150)])
    merged = old.merge(AnchorLedger(asks=[f"new {i}" for i in range(150)]))
    assert len(merged.asks) == 200
    assert merged.asks[-1] == "new 149"
    assert merged.asks[0] == "old 100"


def test_render_format_and_empty() -> None:
    assert AnchorLedger().render() == ""
    assert AnchorLedger().is_empty()
    ledger = AnchorLedger(paths=["a.py"], commands=["make"], asks=["fix it"])
    assert not ledger.is_empty()
    assert ledger.render() == (
        f"{ANCHOR_HEADER}\nFiles:\n- a.py\nCommands:\n- make\nUser asks:\n- fix it"
    )


def big_ledger() -> AnchorLedger:
    return AnchorLedger(
        paths=[f"/src/module_{i:03d}/file.py" for i in range(60)],
        commands=[f"pytest tests/test_{i:03d}.py -q" for i in range(60)],
        urls=[f"https://example.com/page/{i}" for i in range(60)],
        errors=[f"ValueError: failure number {i} " + "x" * 60 for i in range(60)],
        identifiers=[f"#{i}" for i in range(60)],
        asks=[f"please do task {i} " + "y" * 80 for i in range(60)],
    )


@pytest.mark.parametrize("max_chars", [0, 10, 40, 100, 500, 1000, 2500, 4000, 8000, 100_000])
def test_render_is_bounded(max_chars: int) -> None:
    rendered = big_ledger().render(max_chars)
    assert len(rendered) <= max_chars
    if rendered:
        assert rendered.startswith(ANCHOR_HEADER)


def test_render_drops_other_categories_before_paths_and_commands() -> None:
    ledger = big_ledger()
    rendered = ledger.render(4000)
    parsed = parse_anchor_section(rendered)
    assert parsed.paths == ledger.paths
    assert parsed.commands == ledger.commands
    # the other categories keep their newest items, and say how many older ones went
    for name in ("urls", "errors", "identifiers", "asks"):
        kept, full = getattr(parsed, name), getattr(ledger, name)
        assert 1 <= len(kept) < len(full)
        assert kept == full[-len(kept) :]
        assert f"({len(full) - len(kept)} older omitted)" in rendered
    assert len(parse_anchor_section(ledger.render(3500)).asks) == 1


def test_render_drops_oldest_of_largest_first() -> None:
    ledger = big_ledger()
    parsed = parse_anchor_section(ledger.render(2500))
    assert parsed.paths == ledger.paths[-len(parsed.paths) :]
    assert parsed.commands == ledger.commands[-len(parsed.commands) :]
    assert 20 < len(parsed.paths) < 60
    path_chars = sum(len(p) for p in parsed.paths)
    command_chars = sum(len(c) for c in parsed.commands)
    assert abs(path_chars - command_chars) <= 30  # the largest category always lost next
    assert len(parsed.asks) == len(parsed.urls) == 1


def test_round_trip() -> None:
    ledger = big_ledger()
    assert parse_anchor_section(ledger.render(100_000)) == ledger
    prose = "## Goal\nShip it.\n\n## Relevant Files\n- a.py"
    text = f"{prose}\n\n{ledger.render(100_000)}"
    assert split_summary(text) == (prose, ledger)
    assert split_summary(prose) == (prose, AnchorLedger())


def test_split_summary_merges_a_copied_section() -> None:
    first = AnchorLedger(paths=["a.py"], commands=["make"])
    second = AnchorLedger(paths=["b.py"])
    text = f"## Goal\nx\n{first.render()}\n## Critical Context\ny\n\n{second.render()}"
    prose, ledger = split_summary(text)
    assert prose == "## Goal\nx\n## Critical Context\ny"
    assert ledger == AnchorLedger(paths=["a.py", "b.py"], commands=["make"])


line_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x0b\x0c"),
    min_size=1,
    max_size=80,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(line_text, max_size=6), min_size=6, max_size=6))
def test_round_trip_property(lists: list[list[str]]) -> None:
    ledger = AnchorLedger(*lists)
    cleaned = AnchorLedger().merge(ledger)  # what render shows: one line, redacted, unique
    assert parse_anchor_section(ledger.render(1_000_000)) == cleaned
    assert len(ledger.render(300)) <= 300


# --- retention on the sample transcripts ---------------------------------------------------


@pytest.mark.parametrize("name", ["coding-50turns", "coding-200turns"])
def test_single_middle_keeps_95_percent(name: str) -> None:
    middle = load(name)[3:-20]
    paths, commands = truth(middle)
    rendered = extract_anchors(middle).render()
    assert len(rendered) <= ledger_bound(DEFAULT_LEDGER_CHARS)
    kept = items(rendered)
    path_share = len(paths & kept) / len(paths)
    command_share = len(commands & kept) / len(commands)
    print(
        f"\n{name}: paths {len(paths & kept)}/{len(paths)} ({path_share:.1%}), "
        f"commands {len(commands & kept)}/{len(commands)} ({command_share:.1%}), "
        f"{len(rendered)} chars"
    )
    assert path_share >= 0.95
    assert command_share >= 0.95


def chunks(messages: list[dict[str, Any]], parts: int) -> list[list[dict[str, Any]]]:
    """Consecutive slices cut between turn groups, as the compressor cuts."""
    groups = turn_groups(messages)
    size = len(messages) / parts
    cuts = [0]
    for group in groups:
        if group.start >= size * len(cuts) and len(cuts) < parts:
            cuts.append(group.start)
    cuts.append(len(messages))
    return [messages[a:b] for a, b in itertools.pairwise(cuts)]


def test_five_successive_compactions_keep_95_percent() -> None:
    """Each compaction: LLM prose + the middle's ledger, then guard_summary against the
    previous summary (as the engine does). The guarantee: at least 95% of every path and
    command seen so far stays in the summary while they fit in ``DEFAULT_LEDGER_CHARS``
    (8,000: the whole 200-turn session fits); past that the newest are kept
    (test_retention_past_the_bound_keeps_the_newest)."""
    middle = load("coding-200turns")[3:-20]
    summary: str | None = None
    seen_paths: set[str] = set()
    seen_commands: set[str] = set()
    for n, chunk in enumerate(chunks(middle, 5), 1):
        paths, commands = truth(chunk)
        seen_paths |= paths
        seen_commands |= commands
        llm_text = f"## Goal\nCompaction {n}: the model forgot every path."
        with_ledger = f"{llm_text}\n\n{extract_anchors(chunk).render()}"
        summary = guard_summary(with_ledger, summary, 2000, lambda s: len(s) // 4)
        kept = items(summary)
        path_share = len(seen_paths & kept) / len(seen_paths)
        command_share = len(seen_commands & kept) / len(seen_commands)
        print(
            f"\ncompaction {n}: paths {len(seen_paths & kept)}/{len(seen_paths)} "
            f"({path_share:.1%}), commands {len(seen_commands & kept)}/{len(seen_commands)} "
            f"({command_share:.1%}), summary {len(summary)} chars"
        )
        assert path_share >= 0.95
        assert command_share >= 0.95
        assert summary.startswith(f"## Goal\nCompaction {n}:")


def test_retention_past_the_bound_keeps_the_newest() -> None:
    middle = load("coding-200turns")[3:-20]
    ledger = AnchorLedger()
    for chunk in chunks(middle, 5):
        ledger = parse_anchor_section(ledger.merge(extract_anchors(chunk)).render(3000))
    everything = AnchorLedger()
    for chunk in chunks(middle, 5):
        everything = everything.merge(extract_anchors(chunk))
    written = set(everything.edited)
    assert written and written <= set(ledger.paths)  # every written file is kept
    failed = {failure_command(f) for f in everything.failures}
    assert failed == {failure_command(f) for f in ledger.failures}  # and every failure
    # of the rest, what is kept is the newest (as a set: grouped lines read back by group)
    others = [p for p in everything.paths if p not in written]
    kept = set(ledger.paths) - written
    assert 0 < len(kept) < len(others)
    assert kept == set(others[-len(kept) :])
    commands = [c for c in everything.commands if c not in failed]
    shown = set(ledger.commands) - failed
    assert 0 < len(shown) < len(commands)
    assert shown == set(commands[-len(shown) :])


# --- growth guard --------------------------------------------------------------------------


def count(text: str) -> int:
    return len(text) // 4


def test_guard_keeps_a_summary_under_budget() -> None:
    new = "## Goal\nShip it.\n\n" + AnchorLedger(paths=["a.py"]).render()
    assert guard_summary(new, None, 1000, count) == new


def test_guard_shrinks_over_budget_prose_keeping_headers() -> None:
    sections = [
        f"## Section {i}\n" + "\n".join(f"line {i}.{j} " * 5 for j in range(20)) for i in range(5)
    ]
    prose = "\n\n".join(sections)
    ledger = AnchorLedger(paths=["keep/me.py"], commands=["make all"])
    accepted = guard_summary(f"{prose}\n\n{ledger.render()}", None, 300, count)
    new_prose, new_ledger = split_summary(accepted)
    assert count(new_prose) <= 300
    assert new_prose.startswith("## Section 0\nline 0.0")
    assert all(f"## Section {i}" in new_prose for i in range(5))
    assert "line 4.19" not in new_prose
    assert new_ledger == ledger
    assert guard_summary(f"{prose}\n\n{ledger.render()}", None, 300, count) == accepted


def test_guard_shrinks_headers_and_long_lines_when_needed() -> None:
    headers = "\n".join(f"## Heading number {i}" for i in range(100))
    accepted = guard_summary(headers, None, 50, count)
    assert 0 < count(accepted) <= 50
    one_line = "word " * 2000
    accepted = guard_summary(one_line, None, 10, count)
    assert 0 < count(accepted) <= 10
    assert guard_summary(one_line, None, 0, count) == ""


def test_guard_re_adds_vanished_anchors() -> None:
    previous = (
        "## Goal\nold\n\n"
        + AnchorLedger(
            paths=["/old/a.py", "/both.py"], commands=["make old"], errors=["KeyError: 'x'"]
        ).render()
    )
    new = "## Goal\nnew\n\n" + AnchorLedger(paths=["/both.py", "/new/b.py"]).render()
    accepted = guard_summary(new, previous, 1000, count)
    prose, ledger = split_summary(accepted)
    assert prose == "## Goal\nnew"
    assert ledger.paths == ["/old/a.py", "/both.py", "/new/b.py"]
    assert ledger.commands == ["make old"]
    assert ledger.errors == ["KeyError: 'x'"]
    # an LLM answer without any ledger gets the previous one back
    accepted = guard_summary("## Goal\nnew", previous, 1000, count)
    assert split_summary(accepted)[1] == parse_anchor_section(previous)


# --- robustness ----------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=60),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)
roles = st.sampled_from(["system", "user", "assistant", "tool", "developer", "x", None, 3])
tool_call = st.fixed_dictionaries(
    {},
    optional={
        "id": st.one_of(st.text(max_size=8), st.integers()),
        "function": st.one_of(
            json_values,
            st.fixed_dictionaries(
                {},
                optional={
                    "name": st.one_of(
                        st.sampled_from(["terminal", "read_file", "patch"]), json_values
                    ),
                    "arguments": st.one_of(
                        json_values, json_values.map(json.dumps), st.text(max_size=80)
                    ),
                },
            ),
        ),
    },
)
message = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {},
        optional={
            "role": roles,
            "content": st.one_of(
                json_values,
                st.lists(
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "type": st.sampled_from(["text", "image_url"]),
                            "text": json_values,
                        },
                    ),
                    max_size=3,
                ),
            ),
            "tool_calls": st.one_of(json_values, st.lists(tool_call, max_size=3)),
            "tool_call_id": st.one_of(st.text(max_size=8), json_values),
            "name": json_values,
        },
    ),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(message, max_size=8))
def test_never_raises_on_message_like_json(messages: list[Any]) -> None:
    ledger = extract_anchors(messages)
    rendered = ledger.render()
    # nothing to show renders as nothing; otherwise a section within its bound (or nothing,
    # when not even one item fits)
    if ledger.is_empty():
        assert rendered == ""
    if rendered:
        assert rendered.startswith(ANCHOR_HEADER)
        assert len(rendered) <= DEFAULT_LEDGER_CHARS + key_chars(DEFAULT_LEDGER_CHARS)
        shown = parse_anchor_section(rendered)
        assert not shown.is_empty()
        assert parse_anchor_section(shown.render()) == shown  # what is shown reads back the same
    else:
        assert parse_anchor_section(rendered).is_empty()
    split_summary(rendered + "\n" + json.dumps(messages, default=str))
    guard_summary(rendered, rendered, 10, count)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_parse_never_raises(text: str) -> None:
    parse_anchor_section(text)
    parse_anchor_section(f"{ANCHOR_HEADER}\n{text}")


HOSTILE = [
    "/" * 200_000,
    "." * 200_000,
    "a" * 200_000,
    "1" * 200_000,
    "a/" * 100_000,
    "./" * 100_000,
    "a." * 100_000,
    "#1" * 100_000,
    "http://" * 30_000,
    "https://a" + "/" * 200_000,
    "E " + " " * 200_000 + "x",
    "Error" * 40_000,
    "1 failed" + " =" * 100_000,
    ("a" * 999 + "\n") * 200,
    ("FAILED " + "x" * 990 + "\n") * 200,
    ("[t] " + "x" * 995 + "\n") * 200,
    "`" * 200_000,
    "```bash\n" * 25_000,
    ("deadbeef1" + "-") * 20_000,
    "ABC-1" * 40_000,
]


def _read_anchors(text: str) -> None:
    messages = [
        user(text),
        {
            "role": "assistant",
            "content": text,
            "tool_calls": [
                {
                    "id": "a",
                    "function": {
                        "name": "terminal",
                        "arguments": json.dumps(
                            {"command": text, "path": text, "query": text[:2000]}
                        ),
                    },
                }
            ],
        },
        result(text, "a"),
        result(json.dumps({"output": text, "exit_code": 1}), "a"),
    ]
    ledger = extract_anchors(messages)
    rendered = ledger.render()
    parse_anchor_section(rendered + text[:50_000])
    guard_summary(text[:50_000], rendered, 100, count)


@pytest.mark.parametrize("text", HOSTILE, ids=[f"hostile{i}" for i in range(len(HOSTILE))])
def test_hostile_strings_cost_linear_work(text: str) -> None:
    ratio = growth(_read_anchors, text)
    assert ratio < 9, f"4x the text made {ratio:.1f}x the calls (linear: at most 4; quadratic: 16)"


# --- the newest-first walk and its stop ------------------------------------------------------


def _session(steps: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """A user ask, then one call per step: ("p", path) reads a file, ("c", cmd) runs a command."""
    messages = [user("start")]
    for i, (kind, value) in enumerate(steps):
        cid = f"c{i}"
        args = {"path": value} if kind == "p" else {"command": value}
        messages.append(call("read_file" if kind == "p" else "terminal", cid, **args))
        messages.append(result("ok", cid))
    return messages


_NAME = st.text("abcdefghij_", min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("p"), _NAME.map(lambda n: f"src/{n}.py")),
            st.tuples(st.just("c"), _NAME.map(lambda n: f"make {n}")),
        ),
        max_size=160,
    ),
    bound=st.sampled_from([300, 1000, 2500]),
)
def test_stopping_early_never_changes_the_paths_and_commands_shown(
    steps: list[tuple[str, str]], bound: int
) -> None:
    """The walk stops once the newest items crowd out every older path and command; what the
    render shows of those two categories is then exactly what the full walk would show."""
    messages = _session(steps)
    full = parse_anchor_section(extract_anchors(messages).render(bound))
    early = parse_anchor_section(extract_anchors(messages, max_chars=bound).render(bound))
    assert early.paths == full.paths
    assert early.commands == full.commands


def test_the_walk_stops_before_the_oldest_turns_of_a_long_middle() -> None:
    old = [user("see https://old.example.com/first-page for the spec")]
    steps = [
        step
        for i in range(600)
        for step in (("p", f"src/pkg_{i:04d}/module.py"), ("c", f"pytest tests/test_{i:04d}.py"))
    ]
    messages = old + _session(steps)
    assert "https://old.example.com/first-page" in extract_anchors(messages).urls
    early = extract_anchors(messages, max_chars=DEFAULT_LEDGER_CHARS)
    assert early.urls == []  # never reached: the newest turns already fill the ledger
    assert 0 < len(early.paths) < 300 and 0 < len(early.commands) < 300


def test_an_item_seen_again_takes_its_newest_place() -> None:
    messages = _session([("p", "a.py"), ("p", "b.py"), ("p", "a.py")])
    assert extract_anchors(messages).paths == ["b.py", "a.py"]
