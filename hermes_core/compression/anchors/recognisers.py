"""Anchor recognisers: what in a piece of text is a path, URL, identifier or error line, and
the parser of a rendered ledger section.

Why: extraction (:mod:`.message`) walks a transcript and decides which text to look at;
this module decides what in that text is an anchor, and collects the items in first-seen order
under the ledger's per-category caps. Every regex has bounded repetition.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Final

from hermes_core.compression.anchors.items import (
    _FIELDS,
    _GROUP_LINE,
    _GROUPED,
    _ITEM_CHARS,
    _LABEL_FIELD,
    _MAX_ITEMS,
    _NOTE,
    ANCHOR_HEADER,
    _clean,
    _key,
    failure_command,
)
from hermes_core.compression.anchors.ledger import AnchorLedger

_PER_RESULT_ERRORS: Final = 4


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


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
    r"|\S{1,300}:\d{1,7}:\d{1,7}: [A-Z]{1,4}\d{1,5} .+"  # a linter's finding (ruff, flake8)
    r"|\[[\w.-]{1,64}\] .{0,400}(?:FAILED|-> exit [1-9]).*"
)
_TEST_SUMMARY = re.compile(r"=*\s?\d{1,9} (?:failed|errors?)\b")
_TEST_TIME = re.compile(r" in [\d.]{1,13}s$")
_ERROR_ANYWHERE = re.compile(
    r"command not found|No such file or directory|Permission denied|Segmentation fault"
)


class _Collector:
    """Cleaned items per category in first-seen order (keyed as the ledger keys them: a
    failed command once); past the cap the oldest go."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, str]] = {name: {} for name in _FIELDS}
        self.mentions: set[str] = set()  # paths named in text...
        self.called: set[str] = set()  # ...and paths named in a tool call

    def add(self, name: str, value: str, *, mention: bool = False) -> None:
        clean = _clean(value, _ITEM_CHARS[name])
        bucket = self.items[name]
        if name == "paths":
            (self.mentions if mention else self.called).add(clean)
        if clean and (key := _key(name, clean)) not in bucket:
            bucket[key] = clean
            if len(bucket) > _MAX_ITEMS[name]:
                del bucket[next(iter(bucket))]

    def ledger(self) -> AnchorLedger:
        """The items; a relative path only mentioned in text ("locks.py", "../tmp/x.py"),
        never in a tool call, is dropped when another listed path ends with it: that item
        already says it."""
        items = {name: list(bucket.values()) for name, bucket in self.items.items()}
        mentions = self.mentions - self.called
        tails: Counter[str] = Counter()
        for path in items["paths"]:
            tails.update(set(_tails(path)) | {path})
        items["paths"] = [
            p
            for p in items["paths"]
            if p not in mentions
            or p.startswith("/")
            or tails[key := _DOTS.sub("", p)] <= (key == p or key in _tails(p))
        ]
        return AnchorLedger(**items)


class _NewestFirst:
    """Per-block collectors folded in newest block first: an item seen in several blocks takes
    its newest place, and each category keeps its newest items up to its cap. Each block is
    folded once, so the walk stays linear however often :meth:`collector` is asked for."""

    def __init__(self) -> None:
        self.seen: dict[str, set[str]] = {name: set() for name in _FIELDS}  # item keys
        self.chunks: dict[str, list[list[tuple[str, str]]]] = {name: [] for name in _FIELDS}
        self.mentions: set[str] = set()
        self.called: set[str] = set()

    def fold(self, block: _Collector) -> int:
        """Add an older block's items; returns how many paths and commands were new."""
        new = 0
        for name in _FIELDS:
            if not (items := block.items[name]):
                continue
            seen = self.seen[name]
            room = _MAX_ITEMS[name] - len(seen)
            fresh = [(k, x) for k, x in items.items() if k not in seen]
            fresh = fresh[max(0, len(fresh) - room) :] if room > 0 else []
            if fresh:
                seen.update(k for k, _ in fresh)
                self.chunks[name].append(fresh)
                new += len(fresh) if name in ("paths", "commands") else 0
        self.mentions |= block.mentions
        self.called |= block.called
        return new

    def crowds_out_older(self, max_chars: int, *, compact: bool = True) -> bool:
        """Whether older blocks can no longer add a path or command to a render within
        ``max_chars``. Paths only mentioned in text are left out of the test: fewer items can
        only make it say False, so the walk errs on the side of reading more."""
        lists = {name: [x for c in reversed(ch) for _, x in c] for name, ch in self.chunks.items()}
        lists["paths"] = [p for p in lists["paths"] if p in self.called]
        return AnchorLedger(**lists).crowds_out_older(max_chars, compact=compact)

    def collector(self) -> _Collector:
        out = _Collector()
        for name, chunks in self.chunks.items():
            out.items[name] = {k: x for chunk in reversed(chunks) for k, x in chunk}
        out.mentions, out.called = set(self.mentions), set(self.called)
        return out


def _tails(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[k:]) for k in range(1, len(parts))]


# A path token holds one of these (a bare name such as ``Makefile`` ends in "file"): tokens
# without any are skipped in C by :data:`_PATH_TOKEN` instead of being tried one by one.
_SEP = r"\s\"'`()\[\]{}<>,;|=*"
_PATH_TOKEN = re.compile(rf"(?<![^{_SEP}])[^{_SEP}]*(?:[./\\]|file)[^{_SEP}]*")


def _as_path(token: str) -> str | None:
    """``token`` as a file path, or None: URLs, versions, fractions, dates and dotted names
    are refused; ``pkg/mod.py:12`` and pytest node ids lose their suffix."""
    if not 2 <= len(token) <= 500 or "://" in token:
        return None
    return _short_as_path(token)


@lru_cache(maxsize=8192)  # tokens repeat across a transcript; keys are at most 500 characters
def _short_as_path(token: str) -> str | None:
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
    for token in _PATH_TOKEN.findall(_TAG.sub(" ", rest)) if paths else ():
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


# Every error-line pattern above needs one of these fragments: lines without any are skipped
# in C (one regex scan) instead of being looped over in Python.
_ERROR_HINTS: Final = (
    r"rror|ERR|xception|ailure|ault|FAILED|atal|FATAL|panic|exit [1-9]|failed"
    r"|command not found|No such file|Permission denied|:\d:? [A-Z]{1,4}\d"
)
#: A whole line holding a hint (no hint spans a newline), found in one C scan.
_HINTED_LINE = re.compile(rf"^[^\n]*(?:{_ERROR_HINTS})[^\n]*", re.M)


def _hinted_lines(text: str) -> list[str]:
    """The lines of ``text`` that contain an error hint, in order, each once."""
    return _HINTED_LINE.findall(text)


def _error_lines(text: str) -> list[str]:
    """Error lines of tool output: exception lines (a traceback's last line), ``FAILED``,
    ``error:``, compiler and test-summary lines."""
    out: list[str] = []
    in_traceback = False
    if "Traceback (most recent call last)" in text:
        candidates = text.splitlines()  # the line after a traceback needs its context
    else:
        candidates = _hinted_lines(text)
    for raw in candidates:
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


# --- the rendered section, read back -------------------------------------------------------

_REMOVED: Final = "[line removed"  # what the directive filter puts in a line's place


def split_summary(text: str) -> tuple[str, AnchorLedger]:
    """The prose (text outside ledger sections, stripped) and the ledger (every section merged
    in order, so a section the LLM copied into its prose is still recovered). Grouped lines
    are read back into their items (``- dir/{a, b}``; ``- prog`` then ``· args`` lines; a
    failed command's ``↳ exit N: error`` line); written files rejoin the paths, failed
    commands the commands."""
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
        i = _read_section(lines, i + 1, found)
        found["paths"][:0] = found["edited"]
        failed = (failure_command(f) for f in found["failures"])
        found["commands"][:0] = [c for c in failed if c]
        ledger = ledger.merge(AnchorLedger(**found))
    return "\n".join(prose).strip(), ledger


def _read_section(lines: list[str], i: int, found: dict[str, list[str]]) -> int:
    """Read one section's lines from ``i`` into ``found``; the index of the first line after.
    A line the directive filter replaced is passed over with the lines that continue it."""
    current: str | None = None
    grouped = False
    head: str | None = None  # a program line of a grouped section that members may follow
    fresh = False  # True until its first member is read
    skipping = False  # inside what a removed line began
    while i < len(lines):
        line = lines[i].strip()
        if line in _LABEL_FIELD:
            current, grouped, head, skipping = (
                _LABEL_FIELD[line],
                line in _GROUPED.values(),
                None,
                False,
            )
        elif line.startswith("- ") and current is not None:
            item = line[2:]
            files = current in ("paths", "edited")
            match = _GROUP_LINE.fullmatch(item) if grouped and files else None
            if match:
                found[current].extend(match.group(1) + m for m in match.group(2).split(", "))
            else:
                found[current].append(item)
            head, fresh = (item, True) if grouped and not files else (None, False)
            skipping = False
        elif line.startswith(_REMOVED) or (skipping and line.startswith(("·", "↳"))):
            head, fresh, skipping = None, False, True
        elif line.startswith("·") and head is not None and current is not None:
            if fresh:  # the line above named a program, not a command of its own
                found[current].pop()
                fresh = False
            if rest := line[1:].strip():
                found[current].append(f"{head} {rest}")
        elif line.startswith("↳") and current == "failures" and found["failures"]:
            if failure_command(command := found["failures"][-1]) is None:
                found["failures"][-1] = f"`{command}` -> {line[1:].strip()}"
            fresh = False
        elif line and not _NOTE.fullmatch(line):
            break
        i += 1
    return i


def parse_anchor_section(summary_text: str) -> AnchorLedger:
    """The ledger of a previous summary (inverse of :meth:`AnchorLedger.render`)."""
    return split_summary(summary_text)[1]
