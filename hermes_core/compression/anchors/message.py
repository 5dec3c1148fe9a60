"""Anchor extraction: what one message (or one tool call and its results) gives the ledger.

Why: the ledger (see :mod:`hermes_core.compression.anchors`) is only as good as what is pulled
mechanically out of the compacted middle. These scans decide where each category comes from:
tool-call arguments, tool results, the user's own words; the walk over a whole middle
(:func:`hermes_core.compression.anchors.extract_anchors`) decides which scan each message
gets. Every scan is linear (inputs are windowed, JSON past a bound is scanned as text).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from hermes_core.compression.anchors.items import (
    _FIELDS,
    _ITEM_CHARS,
    ANCHOR_HEADER,
    _clean,
    _cut_head,
    failure_command,
)
from hermes_core.compression.anchors.ledger import AnchorLedger
from hermes_core.compression.anchors.recognisers import (
    _TEST_SUMMARY,
    _add_errors,
    _as_path,
    _Collector,
    _error_lines,
    _text_anchors,
    _words,
    split_summary,
)
from hermes_core.compression.assemble import END_MARKER, is_summary_message
from hermes_core.compression.key_sentences import decision_sentences, rule_sentences
from hermes_core.compression.tool_results import loads_shared
from hermes_core.redact import redact
from hermes_core.transcript.appended import own_words
from hermes_core.transcript.messages import is_real_user_message, message_text

__all__ = ["ask_text"]


_FAILURE_ERROR_CHARS: Final = 100  # the error line a failed command is listed with
_EDGE: Final = 20_000  # a huge string is scanned on its first and last 20K characters
_MAX_JSON: Final = 400_000  # larger tool results / arguments are scanned as text, not parsed
_END_MARK: Final = "--- END OF CONTEXT SUMMARY"  # a summary merged into a user turn ends so

_SHELL_TOOL = re.compile(r"term|shell|bash|zsh|exec|run|command|cmd|console|powershell|process")
_QUIET_TOOL = re.compile(r"read|search|web|fetch|brows|grep|glob|list|view|open|memory|find")
_PATCH_TOOL = re.compile(r"patch|apply|diff|edit")
#: A tool that writes the files its path arguments name (unless asked only to look).
_WRITE_TOOL = re.compile(r"write|edit|patch|apply|creat|replac|insert|append|save")
#: An error line that says what went wrong: a test id, a compiler message, an exception with
#: its message (not "file.py:12: AssertionError", which only says where).
_TELLING_ERROR = re.compile(
    r"FAILED |npm ERR!|\S+:\d+(?::\d+)?: (?:fatal )?error|(?:E )?[\w.]+: \S"
)
_LOOK_ONLY: Final = frozenset({"view", "read", "show", "list", "cat", "open", "get"})
#: A JSON result with a non-zero exit code (found without parsing the result).
_EXIT_EDGE: Final = 500  # how far from either end of a result its exit code is looked for
_FAILED_EXIT = re.compile(r'"(?:exit_code|returncode|exit_status)"\s{0,4}:\s{0,4}-?[1-9]')
#: The one-line stand-in pruning leaves of a failed run (compression/tool_summaries.py):
#: ``[terminal] ran `cmd` -> exit 1, 16 lines output, FAILED: 1 failed``; its exit code, and
#: what it kept of the failure.
_STAND_IN_EXIT = re.compile(r"\[[^\]\n]{1,60}\] ran `[^\n]{1,400}?` -> exit (-?[1-9]\d{0,8})")
_STAND_IN_FAILURE = re.compile(r", FAILED: ([^\n]{1,300})")
_DIFF_HEADER = re.compile(
    r"^(?:\*\*\* (?:Update|Add|Delete) File: |\+\+\+ b/|--- a/)([^\n]{1,400})$", re.M
)
_CMD_HEADS: Final = _words(
    "python python3 pip pip3 uv poetry pytest tox nox ruff mypy black npm npx yarn pnpm node "
    "deno bun git make cmake cargo rustc go gcc clang javac java mvn gradle dotnet docker "
    "kubectl helm terraform ls cd cat grep rg find sed awk curl wget bash sh zsh rm cp mv "
    "mkdir chmod chown tar unzip ssh scp rsync sudo apt apt-get brew export echo env "
    "source head tail wc diff patch jq psql sqlite3 redis-cli"
)
_CMD_KEYS: Final = frozenset({"command", "cmd", "shell_command", "commands"})
_PATH_KEYS: Final = _words(
    "path paths file files file_path filepath filename file_name filenames target_file "
    "notebook_path dir directory cwd workdir working_dir old_path new_path"
)
_WEAK_PATH_KEYS: Final = _words("target source src dest destination output input")
_CODE_KEYS: Final = _words(
    "content file_text old_string new_string old_str new_str code patch diff new_content "
    "insert_text data"
)


def _window(text: str) -> str:
    """Head and tail of a huge string (whole tokens only): keeps scans O(1) per message."""
    if len(text) <= 2 * _EDGE:
        return text
    start = len(text) - _EDGE
    cut = next((i + 1 for i in range(start, start + 400) if text[i].isspace()), start)
    return f"{_cut_head(text, _EDGE)}\n…\n{text[cut:]}"


def _parse_json(text: str) -> Any:
    if len(text) > _MAX_JSON or text.lstrip()[:1] not in ("{", "["):
        return None
    try:
        return loads_shared(text)
    except (ValueError, RecursionError):
        return None


def ask_text(text: str) -> str:
    """A user message's own words: after a compaction summary merged into it, if any."""
    if _END_MARK in text:
        text = text.rsplit(_END_MARK, 1)[1].partition("\n")[2]
    return text.strip()


def _one_line(command: str) -> str:
    lines = [line.strip() for line in _cut_head(command, 4000).splitlines() if line.strip()]
    return " ⏎ ".join(lines)


def _user_commands(acc: _Collector, text: str) -> None:
    """``$ cmd`` lines, lines of shell code fences and backticked command lines."""
    fence: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            fence = None if fence is not None else line[3:].strip().lower()
        elif line.startswith("$ "):
            acc.add("commands", line[2:])
        elif fence in ("sh", "bash", "shell", "zsh") and line and not line.startswith("#"):
            acc.add("commands", line)
    for match in re.finditer(r"`([^`\n]{2,300})`", text):
        span = match.group(1).strip()
        words = span.split()
        if (len(words) >= 2 and words[0] in _CMD_HEADS) or span.startswith("./"):
            acc.add("commands", span)


def _first_error(errors: list[str]) -> str | None:
    """The line that says most about a failure: a ``FAILED``, compiler or exception line with a
    message before any other, a test summary ("2 failed, 3 passed") last."""

    def rank(line: str) -> int:
        if _TEST_SUMMARY.match(line):
            return 2
        return 0 if _TELLING_ERROR.match(line) else 1

    return min(errors, key=rank) if errors else None


def _result_anchors(acc: _Collector, tool: str, text: str, command: str | None) -> None:
    quiet = _QUIET_TOOL.search(tool.lower()) is not None
    parsed = _parse_json(text)
    errors: list[str] = []
    body, exit_code, pruned = text, None, list[str]()
    if isinstance(parsed, Mapping):
        parts = [parsed.get(k) for k in ("output", "stdout", "stderr", "result", "message")]
        texts = [p for p in parts if isinstance(p, str)]
        body = "\n".join(texts) if texts else ("" if quiet else text)
        error = parsed.get("error")
        if isinstance(error, Mapping):
            error = error.get("message")
        if isinstance(error, str) and error.strip():
            errors.append(f"{tool}: {error.strip().splitlines()[0]}")
        for key in ("exit_code", "returncode", "exit_status"):
            value = parsed.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                exit_code = value
                break
    elif (stand_in := _STAND_IN_EXIT.match(text)) is not None:
        # a result pruned before this compaction: its error lines are gone, not its failure
        # (the stand-in itself is the error line; its FAILED part, what failed)
        exit_code = int(stand_in.group(1))
        failure = _STAND_IN_FAILURE.search(text, stand_in.end())
        pruned = [failure.group(1)] if failure else [""]
    if quiet:
        errors = _error_lines(body.lstrip().split("\n", 1)[0]) + errors
    else:
        errors = _error_lines(body) + errors
    if exit_code and command:
        first = _first_error([_clean(e, _FAILURE_ERROR_CHARS) for e in pruned or errors])
        acc.add("failures", f"`{command}` -> exit {exit_code}" + (f": {first}" if first else ""))
    if exit_code and not pruned:
        errors.append(
            f"`{command}` -> exit {exit_code}" if command else f"{tool} -> exit {exit_code}"
        )
    _add_errors(acc, errors)


def _salvage_args(raw: str) -> dict[str, Any]:
    """Path and command fields of arguments too large or too broken to parse as JSON."""
    found: dict[str, Any] = {}
    pattern = (
        r'"(path|file_path|filename|command|cmd)"\s{0,10}:\s{0,10}"((?:[^"\\\n]|\\.){1,2000})"'
    )
    for match in re.finditer(pattern, _window(raw)):
        try:
            found.setdefault(match.group(1), json.loads(f'"{match.group(2)}"'))
        except ValueError:
            continue
    return found


@dataclass
class _Call:
    """One tool call being scanned: its tool name (lowercase), id, and the id -> command map
    that labels a failing result with the command that failed."""

    acc: _Collector
    tool: str
    call_id: Any
    commands: dict[str, str]
    edits: bool = False  # the tool writes the files it names
    light: bool = False  # paths, commands and written files only (no URLs, identifiers)


def _arg_string(call: _Call, key: str, value: str) -> None:
    acc, stripped = call.acc, value.strip()
    if key in _CMD_KEYS:
        if stripped and (_SHELL_TOOL.search(call.tool) or " " in stripped):
            command = _one_line(stripped)
            acc.add("commands", command)
            if not call.light:  # a command's paths stay in it
                _text_anchors(acc, redact(command), paths=False)
            if isinstance(call.call_id, str):
                call.commands.setdefault(call.call_id, _clean(command, _ITEM_CHARS["commands"]))
    elif key in _PATH_KEYS or key.endswith(("_path", "_file", "_dir", "_paths", "_files")):
        if "\n" not in stripped and "://" not in stripped and stripped.strip("./"):
            acc.add("paths", stripped)
            if call.edits:
                acc.add("edited", stripped)
    elif _PATCH_TOOL.search(call.tool) and "\n" in value:
        for match in _DIFF_HEADER.finditer(_window(value)):
            acc.add("paths", match.group(1).strip())
            if call.edits:
                acc.add("edited", match.group(1).strip())
    elif key in _WEAK_PATH_KEYS:
        if path := _as_path(stripped):
            acc.add("paths", path)
    elif key not in _CODE_KEYS and len(value) <= 2000 and not call.light:
        _text_anchors(acc, redact(value))


def _arg_anchors(call: _Call, key: str, value: Any, depth: int = 0) -> None:
    if depth > 8:
        return
    if isinstance(value, Mapping):
        for k, v in list(value.items())[:200]:
            name = str(k).lower()
            argv = name in ("command", "cmd") and isinstance(v, list)
            argv = argv and all(isinstance(x, str) for x in v)
            _arg_anchors(call, name, " ".join(v) if argv else v, depth + 1)
    elif isinstance(value, list):
        for item in value[:200]:
            _arg_anchors(call, key, item, depth + 1)
    elif isinstance(value, str):
        _arg_string(call, key, value)


def _call_anchors(
    acc: _Collector, call: Any, commands: dict[str, str], *, light: bool = False
) -> None:
    function = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping):
        return
    name = function.get("name")
    raw = function.get("arguments")
    args = _parse_json(raw) if isinstance(raw, str) else raw
    if not isinstance(args, Mapping) and isinstance(raw, str):
        args = _salvage_args(raw)
    tool = name.lower() if isinstance(name, str) else ""
    look = args.get("command") if isinstance(args, Mapping) else None
    edits = _WRITE_TOOL.search(tool) is not None and not (
        isinstance(look, str) and look.strip().lower() in _LOOK_ONLY
    )
    _arg_anchors(_Call(acc, tool, call.get("id"), commands, edits, light), "", args)


def _blocks(messages: Sequence[Mapping[str, Any]]) -> list[range]:
    """Spans of one message and the tool results after it: a call and its results together,
    so a failing result can be labelled with its command whichever way the walk runs."""
    starts = [i for i, m in enumerate(messages) if i == 0 or m.get("role") != "tool"]
    ends = [*starts[1:], len(messages)] if starts else []
    return [range(a, b) for a, b in zip(starts, ends, strict=True)]


def _scan(
    acc: _Collector, msg: Mapping[str, Any], names: Mapping[str, str], commands: dict[str, str]
) -> None:
    role, text = msg.get("role"), _window(message_text(msg))
    if role != "tool" and text:  # tool output is redacted item by item: most of the bytes
        text = redact(text)
    # only a summary the compressor wrote hands on its ledger: the same header pasted into a
    # tool result, the assistant's text or an attachment is text, not the user's rules
    summary = ANCHOR_HEADER in text and is_summary_message(msg)
    if summary:
        text, carried = split_summary(text)
        for name, items in zip(_FIELDS, carried._lists(), strict=True):
            for item in items:
                acc.add(name, item)
    # a summary's prose is ours, clipped ("/home/dev/ac…"): its ledger hands on its items;
    # only what follows its end marker (a user message it was merged into) is read
    prose = text
    if summary:
        prose = text.rsplit(END_MARKER, 1)[1] if END_MARKER in text else ""
    if role == "user":
        if is_real_user_message(msg) and (ask := ask_text(text)):
            acc.add("asks", ask)
        _key_sentences(acc, msg, text, summary)
        _user_commands(acc, prose)
        _add_errors(acc, _error_lines(prose))
        _text_anchors(acc, prose)
    elif role == "assistant":
        _key_sentences(acc, msg, text, summary)
        _text_anchors(acc, prose)
        calls = msg.get("tool_calls")
        for call in calls[:500] if isinstance(calls, list) else ():
            _call_anchors(acc, call, commands)
    elif role == "tool":
        cid = msg.get("tool_call_id")
        tool = (names.get(cid) if isinstance(cid, str) else None) or msg.get("name")
        command = commands.get(cid) if isinstance(cid, str) else None
        _result_anchors(acc, tool if isinstance(tool, str) else "tool", text, command)


def _scan_light(
    acc: _Collector, msg: Mapping[str, Any], names: Mapping[str, str], commands: dict[str, str]
) -> None:
    """What a compact render can still show of an older message: the paths and commands of
    its tool calls, written files and failed commands (a result is read only when a cheap
    search finds a non-zero exit code), and a summary's ledger."""
    role = msg.get("role")
    if role == "tool":
        cid = msg.get("tool_call_id")
        command = commands.get(cid) if isinstance(cid, str) else None
        text = message_text(msg) if command else ""
        if isinstance(cid, str) and text and _exit_code_shows(text):
            scratch = _Collector()
            tool = names.get(cid) or msg.get("name") or "tool"
            _result_anchors(scratch, str(tool), _window(text), command)
            _carry(acc, scratch.ledger())
        return
    text = message_text(msg)
    if ANCHOR_HEADER in text and is_summary_message(msg):
        carried = split_summary(redact(_window(text)))[1]
        for name in ("paths", "commands"):
            for item in getattr(carried, name):
                acc.add(name, item)
        _carry(acc, carried)
    else:
        _key_sentences(acc, msg, text, summary=False)
    calls = msg.get("tool_calls") if role == "assistant" else None
    for call in calls[:500] if isinstance(calls, list) else ():
        _call_anchors(acc, call, commands, light=True)


def _key_sentences(acc: _Collector, msg: Mapping[str, Any], text: str, summary: bool) -> None:
    """The user's rules (what the user typed in a real user message, not the recalled memory
    or attachment the session appended) and the assistant's decisions and figures; a
    summary's prose is passed over (its ledger already carries its own)."""
    role = msg.get("role")
    if summary or not text:
        return
    if role == "user" and is_real_user_message(msg):
        # only what the user typed: not recalled memory or an attachment the session added
        for rule in rule_sentences(ask_text(_window(own_words(msg)))):
            acc.add("rules", rule)  # each item is redacted as it is added
    elif role == "assistant":
        for decision in decision_sentences(_window(text)):
            acc.add("decisions", decision)


def _exit_code_shows(text: str) -> bool:
    """Whether a JSON result's exit code is non-zero (the key sits at one end or the other of
    a result object, so only those are searched), or the result is a failed run's stand-in."""
    head, tail = text[:_EXIT_EDGE], text[-_EXIT_EDGE:]
    return bool(
        _FAILED_EXIT.search(head) or _FAILED_EXIT.search(tail) or _STAND_IN_EXIT.match(head)
    )


def _carry(acc: _Collector, ledger: AnchorLedger) -> None:
    """Add the written files and failed commands of ``ledger`` (with their paths and
    commands), its rules and decisions to ``acc``."""
    for path in ledger.edited:
        acc.add("paths", path)
        acc.add("edited", path)
    for failure in ledger.failures:
        if command := failure_command(failure):
            acc.add("commands", command)
        acc.add("failures", failure)
    for name in ("rules", "decisions"):
        for item in getattr(ledger, name):
            acc.add(name, item)
