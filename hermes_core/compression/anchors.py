"""The anchor ledger: paths, commands, URLs, errors, identifiers and asks, carried verbatim.

Why: LLM summaries drop the concrete handles an agent needs to carry on (measured elsewhere:
9.8% of file paths and 0.2% of commands survived). The ledger is extracted mechanically from
the compacted middle, rendered as a fixed section after the prose, parsed back out of the
previous summary and merged, so a bad summary cannot lose them. Every item is redacted, one
line and bounded; every scan is linear (inputs are windowed, regexes have bounded repetition).

Retention: every path and command of a middle, and of every earlier middle, stays in the
rendered section while they fit in ``max_chars`` (after the other categories shrink to their
newest item); past that the least recently seen go first.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from hermes_core.messages import is_real_user_message, message_text, tool_name_for_results
from hermes_core.redact import redact

__all__ = [
    "ANCHOR_HEADER",
    "DEFAULT_LEDGER_CHARS",
    "AnchorLedger",
    "extract_anchors",
    "guard_summary",
    "parse_anchor_section",
    "split_summary",
]

ANCHOR_HEADER: Final = "## Anchors (carried verbatim)"
#: Render bound. 8,000 characters (about 2,000 tokens) holds every path and command of the
#: 200-turn sample session; past it the oldest items go first (see :meth:`AnchorLedger.render`).
DEFAULT_LEDGER_CHARS: Final = 8000

_FIELDS: Final = ("paths", "commands", "urls", "errors", "identifiers", "asks")
_LABELS: Final = ("Files:", "Commands:", "URLs:", "Errors:", "Identifiers:", "User asks:")
_LABEL_FIELD: Final = dict(zip(_LABELS, _FIELDS, strict=True))
_ITEM_CHARS: Final = dict(zip(_FIELDS, (300, 300, 300, 200, 80, 200), strict=True))
_MAX_ITEMS: Final = dict(zip(_FIELDS, (1000, 1000, 300, 300, 300, 200), strict=True))
_EDGE: Final = 20_000  # a huge string is scanned on its first and last 20K characters
_MAX_JSON: Final = 400_000  # larger tool results / arguments are scanned as text, not parsed
_PER_RESULT_ERRORS: Final = 4
_END_MARK: Final = "--- END OF CONTEXT SUMMARY"  # a summary merged into a user turn ends so


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_WS = re.compile(r"\s+")
_NOTE = re.compile(r"\(\d{1,9} older omitted\)")
_URL = re.compile(r"https?://[^\s<>\"'`\\|\[\]{}]{1,2000}", re.IGNORECASE)
_DOTS = re.compile(r"^(?:\.{1,2}/){1,64}")
_TAG = re.compile(r"</?[A-Za-z][\w-]{0,30}/?>")
_SPLIT = re.compile(r"[\s\"'`()\[\]{}<>,;|=*]+")
_SEG = r"(?:\.?[\w@+~%-][\w.@+~%-]{0,127}|\.{1,2})"
_ABS_PATH = re.compile(rf"(?:~|\.{{1,2}})?/{_SEG}(?:/{_SEG}){{0,63}}/?")
_REL_PATH = re.compile(rf"{_SEG}(?:/{_SEG}){{1,63}}")
_BARE = re.compile(_SEG)
_WIN_PATH = re.compile(r"[A-Za-z]:\\[\w.\\@+-]{1,400}")
_EXT = re.compile(r"\.([A-Za-z][A-Za-z0-9_+-]{0,11})$")
_LINE_SUFFIX = re.compile(r"(?::\d{1,7}){1,2}$")
_KNOWN_EXTS: Final = _words(
    "py pyi pyx ipynb js mjs cjs jsx ts tsx vue svelte json jsonl yaml yml toml ini cfg conf "
    "md mdx rst txt csv tsv xml html htm css scss sass less sql sh bash zsh fish ps1 bat rs go "
    "java kt kts scala swift c h cc cpp cxx hpp hh cs rb php pl lua dart ex exs erl hs ml clj "
    "gradle lock log proto graphql tf hcl mk cmake patch diff env"
)
_BARE_NAMES: Final = frozenset({"Dockerfile", "Makefile", "Justfile", "Procfile", "Gemfile"})
_NOT_FILES: Final = _words(
    "node.js vue.js next.js nuxt.js d3.js three.js express.js chart.js react.js ember.js"
)
_ISSUE = re.compile(r"(?<![\w#&/])#\d{1,7}\b")
_HASH = re.compile(r"(?<![\w./-])[0-9a-f]{7,40}(?![\w/-])")
_TICKET = re.compile(r"(?<![\w-])[A-Z][A-Z0-9]{1,9}-\d{1,6}(?![\w-])")
_CVE = re.compile(r"\bCVE-\d{4}-\d{4,7}\b")
_NOT_TICKETS: Final = _words("UTF SHA ISO AES GPT HTTP TLS SSL IPV RFC ECMA WCAG MD")
_ERROR_LINE = re.compile(
    r"(?:E\s{1,8})?(?:[A-Za-z_][\w.]{0,100}\.)?[A-Z]\w{0,60}(?:Error|Exception|Failure|Fault)"
    r"(?::\s.*|:?\s*$)"
    r"|(?:FAILED|ERROR)\b.+"
    r"|(?:[Ee]rror|ERROR|[Ff]atal|FATAL|panic)(?:\[\w{1,12}\])?:\s.+"
    r"|npm ERR!.+"
    r"|\S{1,300}:\d{1,7}:(?:\d{1,7}:)?\s(?:fatal )?error\b.*"
    r"|\S{1,300}:\d{1,7}: \w{0,60}(?:Error|Exception)\b.*"
    r"|\[[\w.-]{1,64}\] .{0,400}(?:FAILED|-> exit [1-9]).*"
)
_TEST_SUMMARY = re.compile(r"=*\s?\d{1,9} (?:failed|errors?)\b")
_TEST_TIME = re.compile(r" in [\d.]{1,13}s$")
_ERROR_ANYWHERE = re.compile(
    r"command not found|No such file or directory|Permission denied|Segmentation fault"
)
_SHELL_TOOL = re.compile(r"term|shell|bash|zsh|exec|run|command|cmd|console|powershell|process")
_QUIET_TOOL = re.compile(r"read|search|web|fetch|brows|grep|glob|list|view|open|memory|find")
_PATCH_TOOL = re.compile(r"patch|apply|diff|edit")
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


def _cut_head(text: str, n: int) -> str:
    """The first ``n`` characters, ending at whitespace when one is near, so no token is split."""
    if len(text) <= n:
        return text
    for i in range(n - 1, max(n - 400, 0), -1):
        if text[i].isspace():
            return text[:i]
    return text[:n]


def _window(text: str) -> str:
    """Head and tail of a huge string (whole tokens only): keeps scans O(1) per message."""
    if len(text) <= 2 * _EDGE:
        return text
    start = len(text) - _EDGE
    cut = next((i + 1 for i in range(start, start + 400) if text[i].isspace()), start)
    return f"{_cut_head(text, _EDGE)}\n…\n{text[cut:]}"


def _clean(text: str, limit: int) -> str:
    """One redacted line of at most ``limit`` characters (redacted before any cut)."""
    text = redact(_WS.sub(" ", _cut_head(text, 8 * limit))).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _unique(items: Sequence[Any], name: str) -> list[str]:
    limit = _ITEM_CHARS.get(name, 200)
    seen: dict[str, None] = {}
    for item in items:
        if isinstance(item, str) and (clean := _clean(item, limit)):
            seen[clean] = None
    return list(seen)


@dataclass
class AnchorLedger:
    """Anchors in order (oldest first); render() bounds them, merge() carries them on."""

    paths: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    asks: list[str] = field(default_factory=list)

    def _lists(self) -> list[list[str]]:
        return [self.paths, self.commands, self.urls, self.errors, self.identifiers, self.asks]

    def is_empty(self) -> bool:
        return not any(self._lists())

    def merge(self, newer: AnchorLedger) -> AnchorLedger:
        """Union, de-duplicated; an item seen again moves to its newer place, so the oldest
        (first dropped by render) are the ones not seen lately. Each category keeps its newest
        items when over its count cap."""
        merged: dict[str, list[str]] = {}
        for name, old, new in zip(_FIELDS, self._lists(), newer._lists(), strict=True):
            fresh = _unique(new, name)
            present = set(fresh)
            items = [x for x in _unique(old, name) if x not in present] + fresh
            merged[name] = items[-_MAX_ITEMS.get(name, 200) :]
        return AnchorLedger(**merged)

    def render(self, max_chars: int = DEFAULT_LEDGER_CHARS) -> str:
        """The section, at most ``max_chars`` characters ("" when empty or nothing fits).

        Over the bound, the oldest items go first, from the largest category first: URLs,
        errors, identifiers and asks down to their newest item, then paths and commands, then
        the rest. A ``(N older omitted)`` line says what went.
        """
        cats = [_unique(items, name) for name, items in zip(_FIELDS, self._lists(), strict=True)]
        start = [0] * len(cats)
        kept = [sum(len(x) + 3 for x in items) for items in cats]

        def cost(i: int) -> int:
            if not cats[i] and not start[i]:
                return 0
            note = len(f"({start[i]} older omitted)") + 1 if start[i] else 0
            return len(_LABELS[i]) + 1 + kept[i] + note

        def total() -> int:
            return len(ANCHOR_HEADER) + sum(cost(i) for i in range(len(cats)))

        for group, floor in (((2, 3, 4, 5), 1), ((0, 1), 0), ((2, 3, 4, 5), 0)):
            while total() > max_chars:
                open_ = [i for i in group if len(cats[i]) - start[i] > floor]
                if not open_:
                    break
                i = max(open_, key=lambda j: (kept[j], -j))
                kept[i] -= len(cats[i][start[i]]) + 3
                start[i] += 1
        shown = [i for i in range(len(cats)) if start[i] < len(cats[i])]
        while shown and total() > max_chars:  # labels and notes alone are too long
            last = shown.pop()
            cats[last], start[last], kept[last] = [], 0, 0
        if not shown:
            return ""
        lines = [ANCHOR_HEADER]
        for i in range(len(cats)):
            if cats[i]:
                lines.append(_LABELS[i])
                if start[i]:
                    lines.append(f"({start[i]} older omitted)")
                lines.extend(f"- {item}" for item in cats[i][start[i] :])
        return "\n".join(lines)


def split_summary(text: str) -> tuple[str, AnchorLedger]:
    """The prose (text outside ledger sections, stripped) and the ledger (every section merged
    in order, so a section the LLM copied into its prose is still recovered)."""
    prose: list[str] = []
    ledger = AnchorLedger()
    lines = text.splitlines() if isinstance(text, str) else []
    i = 0
    while i < len(lines):
        if lines[i].strip() != ANCHOR_HEADER:
            prose.append(lines[i])
            i += 1
            continue
        found: dict[str, list[str]] = {name: [] for name in _FIELDS}
        current: str | None = None
        i += 1
        while i < len(lines):
            line = lines[i].strip()
            if line in _LABEL_FIELD:
                current = _LABEL_FIELD[line]
            elif line.startswith("- ") and current is not None:
                found[current].append(line[2:])
            elif line and not _NOTE.fullmatch(line):
                break
            i += 1
        ledger = ledger.merge(AnchorLedger(**found))
    return "\n".join(prose).strip(), ledger


def parse_anchor_section(summary_text: str) -> AnchorLedger:
    """The ledger of a previous summary (inverse of :meth:`AnchorLedger.render`)."""
    return split_summary(summary_text)[1]


# --- extraction --------------------------------------------------------------------------


class _Collector:
    """Cleaned items per category in first-seen order; past the cap the oldest go."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, None]] = {name: {} for name in _FIELDS}
        self.mentions: set[str] = set()  # paths only named in text, never in a tool call

    def add(self, name: str, value: str, *, mention: bool = False) -> None:
        clean = _clean(value, _ITEM_CHARS[name])
        bucket = self.items[name]
        if name == "paths" and not mention:
            self.mentions.discard(clean)
        elif name == "paths" and clean not in bucket:
            self.mentions.add(clean)
        if clean and clean not in bucket:
            bucket[clean] = None
            if len(bucket) > _MAX_ITEMS[name]:
                del bucket[next(iter(bucket))]

    def ledger(self) -> AnchorLedger:
        """The items; a relative path only mentioned in text ("locks.py", "../tmp/x.py") is
        dropped when another listed path ends with it: that item already says it."""
        items = {name: list(bucket) for name, bucket in self.items.items()}
        tails: Counter[str] = Counter()
        for path in items["paths"]:
            tails.update(set(_tails(path)) | {path})
        items["paths"] = [
            p
            for p in items["paths"]
            if p not in self.mentions
            or p.startswith("/")
            or tails[key := _DOTS.sub("", p)] <= (key == p or key in _tails(p))
        ]
        return AnchorLedger(**items)


def _tails(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[k:]) for k in range(1, len(parts))]


def _parse_json(text: str) -> Any:
    if len(text) > _MAX_JSON or text.lstrip()[:1] not in ("{", "["):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _as_path(token: str) -> str | None:
    """``token`` as a file path, or None: URLs, versions, fractions, dates and dotted names
    are refused; ``pkg/mod.py:12`` and pytest node ids lose their suffix."""
    if not 2 <= len(token) <= 500 or "://" in token:
        return None
    token = _LINE_SUFFIX.sub("", token.lstrip(":").split("::", 1)[0].rstrip(".,:;!?"))
    token = token.rstrip(".,:;!?")
    if not any(c.isalpha() for c in token):
        return None
    if _WIN_PATH.fullmatch(token):
        return token
    ext = _EXT.search(token)
    if token[0] in "/~." and _ABS_PATH.fullmatch(token):
        parts = token.rstrip("/").split("/")
        if token[0] == "/" and len(parts) == 2 and len(parts[1]) < 3 and not ext:
            return None  # "/s", "/x": too short to be a path we would miss
        return token
    if "/" in token:
        rel = _REL_PATH.fullmatch(token) and ext and not token.split("/", 1)[0].isdigit()
        return token if rel else None
    if token in _BARE_NAMES:
        return token
    stem = token[: ext.start()] if ext else ""
    known = ext is not None and ext.group(1) in _KNOWN_EXTS
    if known and any(c.isalpha() for c in stem) and token.lower() not in _NOT_FILES:
        return token if _BARE.fullmatch(token) else None
    return None


def _add_url(acc: _Collector, url: str) -> None:
    while url and url[-1] in ".,;:!?'\")]}>":
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break
        url = url[:-1]
    if len(url.split("://", 1)[1]) >= 3:
        acc.add("urls", url)


def _mixed(text: str) -> bool:
    return any(c.isdigit() for c in text) and any(c.isalpha() for c in text)


def _text_anchors(acc: _Collector, text: str, *, paths: bool = True) -> None:
    """URLs, identifiers and (unless ``paths`` is False) path-looking tokens of windowed,
    redacted text."""
    for match in _URL.finditer(text):
        _add_url(acc, match.group())
    rest = _URL.sub(" ", text)
    for token in _SPLIT.split(_TAG.sub(" ", rest)) if paths else ():
        if path := _as_path(token):
            acc.add("paths", path, mention=True)
    found: list[tuple[int, str]] = [(m.start(), m.group()) for m in _ISSUE.finditer(rest)]
    found += [(m.start(), m.group()) for m in _CVE.finditer(rest)]
    found += [
        (m.start(), m.group())
        for m in _TICKET.finditer(rest)
        if m.group().split("-", 1)[0] not in _NOT_TICKETS
    ]
    found += [(m.start(), h) for m in _HASH.finditer(rest) if _mixed(h := m.group())]
    for _, ident in sorted(found):
        acc.add("identifiers", ident)


def _ask_text(text: str) -> str:
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


def _error_lines(text: str) -> list[str]:
    """Error lines of tool output: exception lines (a traceback's last line), ``FAILED``,
    ``error:``, compiler and test-summary lines."""
    out: list[str] = []
    in_traceback = False
    for raw in text.splitlines():
        line = raw.strip()[:1000]
        if not line:
            continue
        if line.startswith("Traceback (most recent call last)"):
            in_traceback = True
        elif in_traceback and (raw[:1].isspace() or line.startswith("File ")):
            continue
        elif in_traceback:
            in_traceback = False
            out.append(line)
        elif _TEST_SUMMARY.match(line):  # "3 failed, 2 passed" without its timing
            line = line.strip("= ")
            out.append(line[: m.start()] if (m := _TEST_TIME.search(line)) else line)
        elif _ERROR_LINE.match(line) or _ERROR_ANYWHERE.search(line):
            out.append(line)
    return out


def _add_errors(acc: _Collector, errors: list[str]) -> None:
    """The newest few distinct errors of one message, and the paths they name."""
    distinct = list(dict.fromkeys(_clean(e, _ITEM_CHARS["errors"]) for e in errors))
    for error in distinct[-_PER_RESULT_ERRORS:]:
        acc.add("errors", error)
        for token in _SPLIT.split(error):
            if path := _as_path(token):
                acc.add("paths", path, mention=True)


def _result_anchors(acc: _Collector, tool: str, text: str, command: str | None) -> None:
    quiet = _QUIET_TOOL.search(tool.lower()) is not None
    parsed = _parse_json(text)
    errors: list[str] = []
    body, exit_code = text, None
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
    if quiet:
        errors = _error_lines(body.lstrip().split("\n", 1)[0]) + errors
    else:
        errors = _error_lines(body) + errors
    if exit_code:
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


def _arg_string(call: _Call, key: str, value: str) -> None:
    acc, stripped = call.acc, value.strip()
    if key in _CMD_KEYS:
        if stripped and (_SHELL_TOOL.search(call.tool) or " " in stripped):
            command = _one_line(stripped)
            acc.add("commands", command)
            _text_anchors(acc, redact(command), paths=False)  # a command's paths stay in it
            if isinstance(call.call_id, str):
                call.commands.setdefault(call.call_id, _clean(command, _ITEM_CHARS["commands"]))
    elif key in _PATH_KEYS or key.endswith(("_path", "_file", "_dir", "_paths", "_files")):
        if "\n" not in stripped and "://" not in stripped and stripped.strip("./"):
            acc.add("paths", stripped)
    elif _PATCH_TOOL.search(call.tool) and "\n" in value:
        for match in _DIFF_HEADER.finditer(_window(value)):
            acc.add("paths", match.group(1).strip())
    elif key in _WEAK_PATH_KEYS:
        if path := _as_path(stripped):
            acc.add("paths", path)
    elif key not in _CODE_KEYS and len(value) <= 2000:
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


def _call_anchors(acc: _Collector, call: Any, commands: dict[str, str]) -> None:
    function = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping):
        return
    name = function.get("name")
    raw = function.get("arguments")
    args = _parse_json(raw) if isinstance(raw, str) else raw
    if not isinstance(args, Mapping) and isinstance(raw, str):
        args = _salvage_args(raw)
    tool = name.lower() if isinstance(name, str) else ""
    _arg_anchors(_Call(acc, tool, call.get("id"), commands), "", args)


def extract_anchors(messages: Sequence[Mapping[str, Any]]) -> AnchorLedger:
    """The ledger of a transcript slice (the compacted middle), items in first-seen order.

    Paths and commands come from tool-call arguments and the user's text; errors from tool
    results (and errors users paste); URLs and identifiers from text and short arguments;
    asks are the real user messages. A summary found in the slice hands on its own ledger.
    """
    acc = _Collector()
    msgs = [m for m in messages if isinstance(m, Mapping)]
    names = tool_name_for_results(msgs)
    commands: dict[str, str] = {}
    for msg in msgs:
        role, text = msg.get("role"), _window(message_text(msg))
        if role != "tool":  # tool output is redacted item by item: it is most of the bytes
            text = redact(text)
        if ANCHOR_HEADER in text:
            text, carried = split_summary(text)
            for name, items in zip(_FIELDS, carried._lists(), strict=True):
                for item in items:
                    acc.add(name, item)
        if role == "user":
            if is_real_user_message(msg) and (ask := _ask_text(text)):
                acc.add("asks", ask)
            _user_commands(acc, text)
            _add_errors(acc, _error_lines(text))
            _text_anchors(acc, text)
        elif role == "assistant":
            _text_anchors(acc, text)
            calls = msg.get("tool_calls")
            for call in calls[:500] if isinstance(calls, list) else ():
                _call_anchors(acc, call, commands)
        elif role == "tool":
            cid = msg.get("tool_call_id")
            tool = (names.get(cid) if isinstance(cid, str) else None) or msg.get("name")
            command = commands.get(cid) if isinstance(cid, str) else None
            _result_anchors(acc, tool if isinstance(tool, str) else "tool", text, command)
    return acc.ledger()


# --- growth guard ------------------------------------------------------------------------

_HEADING = re.compile(r"#{1,6}\s.{0,200}|\*\*[^*\n]{1,120}\*\*:?|[A-Z][\w &/,()-]{0,60}:")


def _largest(n: int, fits: Callable[[int], bool]) -> int:
    """The largest k in [0, n] with fits(k), by binary search (fits(0) is assumed)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _shrink(prose: str, budget: int, count: Callable[[str], int]) -> str:
    """Drop trailing body lines (headings kept; the last kept line may be cut at a word with
    "…"), else trailing lines, else characters, until ``count(prose) <= budget``. Binary
    searches: O(log n) calls to ``count``."""
    if budget <= 0 or count(prose) <= budget:
        return prose if budget > 0 else ""
    lines = prose.split("\n")
    heading = [bool(_HEADING.fullmatch(line.strip())) for line in lines]
    body = [i for i, h in enumerate(heading) if not h]

    def keep(k: int, cut: int = 0) -> str:
        """Headings, the first ``k`` body lines, and ``cut`` characters of the next one."""
        chosen = set(body[:k])
        partial = body[k] if cut and k < len(body) else -1
        out = [
            (x[:cut].rsplit(" ", 1)[0] + " …" if i == partial else x)
            for i, x in enumerate(lines)
            if heading[i] or i in chosen or i == partial
        ]
        return "\n".join(out).strip()

    def fits(text: str) -> bool:
        return count(text) <= budget

    if fits(keep(0)):
        k = _largest(len(body), lambda k: fits(keep(k)))
        cut = _largest(len(lines[body[k]]) - 1, lambda c: fits(keep(k, c))) if k < len(body) else 0
        return keep(k, cut if cut >= 20 else 0)
    k = _largest(len(lines), lambda k: fits("\n".join(lines[:k]).strip()))
    first = lines[0]
    text = "\n".join(lines[:k]) if k else first[: _largest(len(first), lambda c: fits(first[:c]))]
    return text.strip()


def guard_summary(
    new_summary: str,
    previous_summary: str | None,
    budget_tokens: int,
    count: Callable[[str], int],
    *,
    max_ledger_chars: int = DEFAULT_LEDGER_CHARS,
) -> str:
    """The accepted summary: prose shrunk to ``budget_tokens`` (the budget is the prose's; the
    ledger has its own character bound), then the ledger with every anchor of the previous
    summary's ledger merged back in (older), so nothing vanishes between compactions."""
    prose, ledger = split_summary(new_summary)
    if previous_summary:
        ledger = parse_anchor_section(previous_summary).merge(ledger)
    prose = _shrink(prose, budget_tokens, count)
    return "\n\n".join(part for part in (prose, ledger.render(max_ledger_chars)) if part)
