"""Tests for the built-in one-line tool result summaries (hermes_core.compression.tool_summaries).

Real results come from the sample transcripts, so the summaries are checked against the shapes
the tools actually produce.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.compression.tool_summaries import summarize_tool_result, tool_family

DATA = Path(__file__).parent.parent / "data" / "transcripts"


@cache
def _sample_results() -> list[tuple[str, dict[str, Any], str]]:
    """(tool name, parsed arguments, result) of every tool result in the 200-turn sample."""
    messages = json.loads((DATA / "coding-200turns.json").read_text())
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    found = []
    for msg in messages:
        for call in msg.get("tool_calls") or []:
            fn = call["function"]
            calls[call["id"]] = (fn["name"], json.loads(fn["arguments"]))
        if msg["role"] == "tool":
            name, args = calls[msg["tool_call_id"]]
            found.append((name, args, msg["content"]))
    return found


def sample(name: str, pick: Callable[[dict[str, Any], str], bool] = lambda a, r: True) -> Any:
    for tool, args, result in _sample_results():
        if tool == name and pick(args, result):
            return args, result
    raise LookupError(name)


def check_line(line: str, name: str, max_chars: int = 300) -> None:
    assert line.startswith(f"[{name}]"), line
    assert len(line) <= max_chars, (len(line), line)
    assert len(line.splitlines()) == 1, line


# --- families, on real results ------------------------------------------------------------------


def test_terminal_success() -> None:
    args, result = sample("terminal", lambda a, r: a["command"] == "wc -l json/*.py")
    line = summarize_tool_result("terminal", args, result)
    check_line(line, "terminal")
    assert line == "[terminal] ran `wc -l json/*.py` -> exit 0, 6 lines output"


def test_terminal_pytest_failure_names_the_tally_and_the_first_error_line() -> None:
    args, result = sample(
        "terminal", lambda a, r: "pytest" in a["command"] and '"exit_code": 1' in r
    )
    line = summarize_tool_result("terminal", args, result)
    check_line(line, "terminal")
    assert "-> exit 1," in line
    assert line.endswith(
        "FAILED: 3 failed, 3 passed; E AssertionError: assert {'k': 'é'} == {'k': 'e'}"
    )
    assert "`python3 -m pytest /tmp/hermes_gen_audit_tests/test_audit_json.py" in line


def test_terminal_traceback_names_the_exception() -> None:
    args, result = sample("terminal", lambda a, r: "Traceback" in r)
    line = summarize_tool_result("terminal", args, result)
    check_line(line, "terminal")
    assert line.endswith("FAILED: OSError: could not get source code")


def test_terminal_passing_tests_show_their_tally() -> None:
    args, result = sample("terminal", lambda a, r: "13 passed" in r)
    line = summarize_tool_result("terminal", args, result)
    assert "exit 0" in line
    assert line.endswith(": 13 passed")
    assert "FAILED" not in line


def test_terminal_raw_text_and_aliases() -> None:
    raw = "npm ERR! code ELIFECYCLE\nnpm ERR! errno 1\n" + "log line\n" * 40
    line = summarize_tool_result("Bash", {"cmd": "npm test"}, raw)
    check_line(line, "Bash")
    assert line.startswith("[Bash] ran `npm test` -> 42 lines output, FAILED: npm ERR! code")
    ok = summarize_tool_result("run_command", {"command": "ls"}, "a\nb\nc\n" * 100)
    assert ok == "[run_command] ran `ls` -> 300 lines output"


def test_terminal_json_stderr_and_nonzero_exit() -> None:
    result = json.dumps(
        {"stdout": "", "stderr": "fatal: not a git repository\n", "returncode": 128}
    )
    line = summarize_tool_result("shell", {"command": "git status"}, result)
    assert line == (
        "[shell] ran `git status` -> exit 128, 1 line output, FAILED: fatal: not a git repository"
    )


def test_terminal_error_field_wins_even_with_exit_zero() -> None:
    result = json.dumps({"output": "", "exit_code": 0, "error": "Command timed out after 60s"})
    line = summarize_tool_result("terminal", {"command": "sleep 99"}, result)
    assert line.endswith("FAILED: Command timed out after 60s")


def test_read_file_real_result() -> None:
    args, result = sample("read_file", lambda a, r: a.get("offset") == 384)
    line = summarize_tool_result("read_file", args, result)
    check_line(line, "read_file")
    assert "zoneinfo/_zoneinfo.py lines 384-463 of 772 (80 lines, 2,902 chars)" in line
    assert line.startswith("[read_file] read /root/")


def test_read_file_raw_text_and_long_path_keeps_file_name() -> None:
    text = "".join(f"line {n}\n" for n in range(500))
    line = summarize_tool_result("view", {"path": "src/app.py"}, text)
    assert line == "[view] read src/app.py lines 1-500 (500 lines, 4,390 chars)"
    deep = "/very/" + "deep/" * 100 + "module.py"
    clipped = summarize_tool_result("read_file", {"path": deep}, text, max_chars=120)
    check_line(clipped, "read_file", 120)
    assert "module.py lines 1-500" in clipped


def test_read_file_error_field() -> None:
    result = json.dumps({"error": "File not found: src/nope.py", "content": ""})
    line = summarize_tool_result("read_file", {"path": "src/nope.py"}, result)
    assert line == "[read_file] read src/nope.py, FAILED: File not found: src/nope.py"


def test_read_file_content_mentioning_errors_is_not_a_failure() -> None:
    body = 'raise ValueError("Error: bad")\nTraceback (most recent call last)\n' * 20
    line = summarize_tool_result("read_file", {"path": "x.py"}, json.dumps({"content": body}))
    assert "FAILED" not in line


def test_write_file_real_result() -> None:
    args, result = sample("write_file")
    line = summarize_tool_result("write_file", args, result)
    assert line == "[write_file] wrote /tmp/work/heapq_refactored.py (302 lines, 11,371 bytes)"


def test_search_files_real_result() -> None:
    args, result = sample("search_files", lambda a, r: a["pattern"] == "def __init__")
    line = summarize_tool_result("search_files", args, result)
    assert line == (
        "[search_files] 'def __init__' in zoneinfo -> 5 matches in 2 files: "
        "zoneinfo/_zoneinfo.py, zoneinfo/_common.py"
    )


def test_grep_raw_text() -> None:
    raw = "a.py:1:import os\na.py:9:import os\nb/c.py:3:import os\n"
    line = summarize_tool_result("grep", {"pattern": "import os", "path": "."}, raw)
    assert line == "[grep] 'import os' in . -> 3 matches in 2 files: a.py, b/c.py"
    none = summarize_tool_result("ripgrep", {"pattern": "zzz"}, "")
    assert none == "[ripgrep] 'zzz' -> no matches"


def test_find_lists_files() -> None:
    line = summarize_tool_result("find", {"pattern": "*.py"}, json.dumps(["a.py", "b.py"]))
    assert line == "[find] '*.py' -> 2 files: a.py, b.py"


def test_patch_real_result() -> None:
    args, result = sample("patch")
    line = summarize_tool_result("patch", args, result)
    assert line == (
        "[patch] patched /root/.pyenv/versions/3.11.7/lib/python3.11/multiprocessing/queues.py"
        " -> +1 -0 lines"
    )


def test_apply_patch_paths_from_the_patch_text_and_failure() -> None:
    patch = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-old\n+new\n+more\n*** End Patch"
    line = summarize_tool_result("apply_patch", {"input": patch}, "Done!")
    assert line == "[apply_patch] patched src/a.py -> +2 -1 lines"
    failed = summarize_tool_result(
        "str_replace",
        {"path": "a.py", "old_string": "x", "new_string": "y"},
        json.dumps({"success": False, "error": "old_string not found in a.py"}),
    )
    assert (
        failed == "[str_replace] patched a.py -> +1 -1 lines, FAILED: old_string not found in a.py"
    )


def test_web_search_real_result() -> None:
    args, result = sample("web_search")
    line = summarize_tool_result("web_search", args, result)
    check_line(line, "web_search")
    assert line.startswith(
        "[web_search] 'python acquire edge cases' -> 6 results: pypi.org/project/pathable/"
    )


def test_web_extract_real_result() -> None:
    args, result = sample("web_extract")
    line = summarize_tool_result("web_extract", args, result)
    assert (
        line == "[web_extract] https://pypi.org/project/pathable/ -> 6,000 chars: 'pathable · PyPI'"
    )


def test_fetch_raw_and_failed_page() -> None:
    line = summarize_tool_result("fetch", {"url": "https://example.com/a"}, "x" * 5210)
    assert line == "[fetch] https://example.com/a -> 5,210 chars"
    failed = json.dumps(
        {"results": [{"url": "https://x.test", "content": "", "error": "HTTP 404"}]}
    )
    assert summarize_tool_result("web_extract", {"urls": ["https://x.test"]}, failed).endswith(
        "-> 0 chars, FAILED: HTTP 404"
    )


def test_browser_tools() -> None:
    result = json.dumps({"title": "Login · App", "snapshot": "- button 'Sign in' [ref=e3]\n" * 50})
    line = summarize_tool_result("browser_navigate", {"url": "https://app.test/login"}, result)
    assert line.startswith("[browser_navigate] navigate https://app.test/login -> ")
    assert line.endswith("chars: 'Login · App'")
    click = summarize_tool_result(
        "browser_click", {"ref": "e3"}, json.dumps({"success": False, "error": "ref not found"})
    )
    assert click == "[browser_click] click e3 -> 44 chars, FAILED: ref not found"


def test_execute_code() -> None:
    code = "import statistics\nprint(statistics.mean([1, 2, 3]))\n"
    ok = summarize_tool_result("execute_code", {"code": code}, json.dumps({"output": "2\n"}))
    assert ok == "[execute_code] ran `import statistics` (2 lines of code) -> 1 line output"
    tb = "Traceback (most recent call last):\n  File 'x', line 1\n"
    tb += "ZeroDivisionError: division by zero\n"
    bad = summarize_tool_result("python", {"code": "1/0"}, tb)
    assert (
        bad == "[python] ran `1/0` -> 3 lines output, FAILED: ZeroDivisionError: division by zero"
    )


def test_memory() -> None:
    line = summarize_tool_result(
        "memory",
        {"action": "add", "target": "user", "content": "Prefers pytest over unittest"},
        json.dumps({"success": True, "message": "Entry added."}),
    )
    assert line == "[memory] add user: 'Prefers pytest over unittest' -> ok"


def test_generic_tool() -> None:
    result = "row\n" * 47
    line = summarize_tool_result("sql_query", {"database": "prod", "limit": 5}, result)
    assert line == "[sql_query] database=prod -> 47 lines, 188 chars"
    err = summarize_tool_result(
        "jira_get", {"id": "PROJ-12"}, json.dumps({"error": {"message": "401 Unauthorized"}})
    )
    assert err == "[jira_get] id=PROJ-12 -> 42 chars, FAILED: 401 Unauthorized"
    assert summarize_tool_result("", {}, "abc") == "[tool] -> 3 chars"


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("terminal", "terminal"),
        ("execute_command", "terminal"),
        ("mcp__fs__read_file", "read_file"),
        ("readFile", "read_file"),
        ("functions.bash", "terminal"),
        ("Search-Files", "search"),
        ("browser_snapshot", "browser"),
        ("web_fetch", "web_extract"),
        ("code_interpreter", "execute_code"),
        ("create_file", "write_file"),
        ("edit", "patch"),
        ("WebSearch", "web_search"),
        ("memory", "memory"),
        ("something_else", "generic"),
        ("", "generic"),
    ],
)
def test_tool_family(name: str, family: str) -> None:
    assert tool_family(name) == family


# --- shape guarantees ----------------------------------------------------------------------------


def test_every_sample_result_gives_one_short_line() -> None:
    for name, args, result in _sample_results():
        for limit in (300, 80):
            check_line(summarize_tool_result(name, args, result, limit), name, limit)


def test_failure_survives_a_tight_budget() -> None:
    args, result = sample(
        "terminal", lambda a, r: "pytest" in a["command"] and '"exit_code": 1' in r
    )
    line = summarize_tool_result("terminal", args, result, max_chars=100)
    assert len(line) <= 100
    assert "FAILED: 3 failed" in line


def test_line_breaks_of_every_kind_are_flattened() -> None:
    nasty = "a\u2028b\x85c\x1cd\re\nf"
    line = summarize_tool_result(f"tool{nasty}", {"command": nasty}, nasty)
    assert len(line.splitlines()) == 1


def test_tiny_and_odd_budgets() -> None:
    assert summarize_tool_result("terminal", {"command": "ls"}, "x", max_chars=0) == ""
    assert len(summarize_tool_result("terminal", {"command": "ls"}, "x", max_chars=5)) <= 5


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)
known_keys = st.sampled_from(
    ["output", "exit_code", "error", "content", "matches", "results", "path", "success",
     "stderr", "total_count", "data", "web", "url", "title", "files_modified", "diff"]
)  # fmt: skip
shaped = st.dictionaries(known_keys, json_values, max_size=6)
results = st.one_of(
    st.text(max_size=300),
    json_values.map(json.dumps),
    shaped.map(json.dumps),
)
names = st.one_of(
    st.sampled_from(
        ["terminal", "read_file", "write_file", "search_files", "patch", "web_search",
         "web_extract", "browser_click", "execute_code", "memory", "other", ""]
    ),
    st.text(max_size=30),
)  # fmt: skip
arguments = st.dictionaries(st.one_of(known_keys, st.text(max_size=10)), json_values, max_size=5)


@settings(max_examples=150, deadline=None)
@given(name=names, args=arguments, result=results, limit=st.integers(-5, 400))
def test_never_raises_and_always_one_bounded_line(
    name: str, args: dict[str, Any], result: str, limit: int
) -> None:
    line = summarize_tool_result(name, args, result, limit)
    assert isinstance(line, str)
    assert len(line) <= max(limit, 0)
    assert len(line.splitlines()) <= 1


@settings(max_examples=100, deadline=None)
@given(
    args=st.one_of(st.none(), st.integers(), st.text()), result=st.one_of(st.none(), st.integers())
)
def test_wrong_types_do_not_raise(args: Any, result: Any) -> None:
    line = summarize_tool_result("terminal", args, result)
    assert line.startswith("[terminal]")


@settings(max_examples=100, deadline=None)
@given(name=names, args=arguments, result=results)
def test_the_safety_net_is_not_what_keeps_it_total(
    name: str, args: dict[str, Any], result: str
) -> None:
    """Every family summariser handles arbitrary JSON itself; the catch-all is only a backstop."""
    from hermes_core.compression import tool_summaries as ts

    clean = ts._flat(name, 48) or "tool"
    summary = ts._BY_FAMILY[tool_family(clean)](args, result, ts._parse(result), clean)
    assert summary.lead is not None


def test_make_failure_without_an_exit_code_is_flagged() -> None:
    out = summarize_tool_result(
        "terminal", {"command": "make all"}, "cc -c x.c\nmake: *** [all] Error 2"
    )
    assert "FAILED: make: *** [all] Error 2" in out
    clean = summarize_tool_result("terminal", {"command": "make all"}, "cc -c x.c\nbuilt x")
    assert "FAILED" not in clean
