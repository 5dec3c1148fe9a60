"""The built-in one-line summary of an old tool result (the default ``prune_tool_result``).

Why: an agent reading ``[terminal] ran `pytest` -> exit 1, FAILED: 3 failed`` can still act on
an old turn at a tenth of the tokens. It keeps what drives the next step (the command or path,
exit status, counts, size, the failure reason) and drops the bulk. Total: any input gives one
line of at most ``max_chars`` characters, and nothing raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final, NamedTuple

from hermes_core.compression.reloads import pointer
from hermes_core.compression.tool_results import (
    _as_int,
    _clip,
    _error_text,
    _first_int,
    _first_list,
    _first_str,
    _flat,
    _last_line,
    _lines,
    _parse,
    _plural,
    _process,
    _run_outcome,
    _scalar,
    _text_error,
)

__all__ = ["summarize_tool_result", "tool_family"]

_ALIASES: Final[dict[str, tuple[str, ...]]] = {
    "terminal": ("terminal", "shell", "bash", "sh", "zsh", "powershell", "run_command",
                 "execute_command", "run_shell_command", "run_terminal_cmd", "exec_command"),
    "read_file": ("read_file", "view", "cat", "open_file", "read", "view_file", "read_text_file"),
    "write_file": ("write_file", "create_file", "write", "write_to_file"),
    "search": ("search", "grep", "search_files", "ripgrep", "rg", "find", "glob", "find_files",
               "grep_search", "file_search", "search_code", "codebase_search"),
    "patch": ("patch", "edit", "apply_patch", "str_replace", "edit_file", "multi_edit",
              "replace", "apply_diff", "replace_in_file"),
    "web_search": ("web_search", "search_web", "websearch", "google_search", "bing_search",
                   "brave_search"),
    "web_extract": ("web_extract", "fetch", "web_fetch", "browse", "url", "fetch_url", "read_url",
                    "scrape", "open_url"),
    "execute_code": ("execute_code", "python", "run_code", "code_interpreter", "run_python",
                     "ipython", "exec_python"),
    "memory": ("memory", "save_memory", "remember", "memory_tool", "update_memory"),
}  # fmt: skip
# Lookup keys drop case, "_", "-" and spaces, so readFile, read-file and READ_FILE all match.
_FAMILY_OF: Final = {
    alias.replace("_", ""): family for family, names in _ALIASES.items() for alias in names
}
_PATH_KEYS: Final = ("path", "file_path", "filepath", "file", "filename", "target_file",
                     "absolute_path", "uri")  # fmt: skip
_TELLING: Final = ("path", "file_path", "file", "filename", "url", "urls", "command", "cmd",
                   "query", "q", "pattern", "name", "id", "title", "target", "key")  # fmt: skip

_NUMBERED_LINE = re.compile(r"^\s*(\d+)(?:\||\t|→)")
_DIFF_PATH = re.compile(r"(?m)^(?:\*\*\* (?:Update|Add|Delete) File: |\+\+\+ (?:b/)?)(\S.*)$")
_GREP_PREFIX = re.compile(r"^([^:\n]+):\d+[:\-]")
# Whitespace other than a plain space: this covers every line break str.splitlines() knows.
_BREAKS = re.compile(r"[^\S ]")


class _Summary(NamedTuple):
    """``[name] {lead}{subject}{after}: {extra}, FAILED: {failure}``; the last three shrink."""

    lead: str
    subject: str = ""
    after: str = ""
    extra: str = ""
    failure: str | None = None
    keep_tail: bool = False  # paths and URLs keep their end when clipped


# --- one summariser per tool family --------------------------------------------------------------


def _terminal(args: Mapping[str, Any], text: str, parsed: Any, name: str) -> _Summary:
    command = _first_str(args, "command", "cmd", "script", "commands", "input", "code")
    output, stderr, code, failure = _process(text, parsed)
    outcome, tally = _run_outcome(output, stderr, code, failure is not None)
    if not command:
        return _Summary("ran a command", "", outcome, tally, failure)
    return _Summary("ran `", _flat(command), "`" + outcome, tally, failure)


def _execute_code(args: Mapping[str, Any], text: str, parsed: Any, name: str) -> _Summary:
    code_text = _first_str(args, "code", "source", "script", "cell", "program", "input")
    output, stderr, code, failure = _process(text, parsed)
    outcome, tally = _run_outcome(output, stderr, code, failure is not None)
    first = next((line for line in code_text.splitlines() if line.strip()), "")
    size = _lines(code_text)
    more = f" ({_plural(size, 'line')} of code)" if size > 1 else ""
    if not first:
        return _Summary("ran code", "", outcome, tally, failure)
    return _Summary("ran `", _flat(first), "`" + more + outcome, tally, failure)


def _read_file(args: Mapping[str, Any], text: str, parsed: Any, name: str) -> _Summary:
    path = _first_str(args, *_PATH_KEYS) or _first_str(parsed, *_PATH_KEYS)
    if isinstance(parsed, Mapping):
        content = _first_str(parsed, "content", "text", "data", "output")
    else:
        content = text if parsed is None else ""
    failure = _text_error(text, parsed)
    after = ""
    count = _lines(content)
    if count:
        first = _NUMBERED_LINE.match(content[:200])
        last = _NUMBERED_LINE.match(_last_line(content))
        if first and last:
            start, end = int(first.group(1)), int(last.group(1))
        else:
            start = max(_as_int(args.get("offset") or args.get("start_line")) or 1, 1)
            end = start + count - 1
        total = _first_int(parsed, "total_lines")
        of = f" of {total:,}" if total is not None and (total > end or start > 1) else ""
        size = f"{_plural(count, 'line')}, {_plural(len(content), 'char')}"
        after = f" lines {start:,}-{end:,}{of} ({size})"
    elif not failure:
        after = " (empty)"
    return _Summary("read ", path or "a file", after, failure=failure, keep_tail=True)


def _write_file(args: Mapping[str, Any], text: str, parsed: Any, name: str) -> _Summary:
    path = _first_str(args, *_PATH_KEYS) or _first_str(parsed, *_PATH_KEYS)
    content = _first_str(args, "content", "text", "file_text", "contents", "data")
    written = _first_int(parsed, "bytes_written", "bytes", "size")
    sizes = [_plural(_lines(content), "line")] if content else []
    if written is not None:
        sizes.append(_plural(written, "byte"))
    after = f" ({', '.join(sizes)})" if sizes else ""
    failure = _text_error(text, parsed)
    return _Summary("wrote ", path or "a file", after, failure=failure, keep_tail=True)


def _match_path(item: Any) -> str:
    if isinstance(item, Mapping):
        return _first_str(item, "path", "file", "filename", "file_path", "uri")
    if isinstance(item, str):
        prefix = _GREP_PREFIX.match(item)
        return prefix.group(1) if prefix else item
    return ""


def _search(args: Mapping[str, Any], text: str, parsed: Any, name: str) -> _Summary:
    pattern = _first_str(args, "pattern", "query", "regex", "q", "search", "text", "name", "glob")
    where = _flat(_first_str(args, "path", "directory", "dir", "cwd", "root", "include"), 60)
    items = _first_list(parsed, "matches", "results", "files", "items", "hits", "data")
    if items is None:
        lines = [line for line in text.splitlines() if line.strip()] if parsed is None else []
        grep_like = [m.group(1) for line in lines if (m := _GREP_PREFIX.match(line))]
        items, files = lines, list(dict.fromkeys(grep_like or lines))
        kind = "match" if grep_like else "line"
    else:
        files = list(dict.fromkeys(p for p in map(_match_path, items) if p))
        kind = "file" if items and all(isinstance(i, str) for i in items) else "match"
    total = _first_int(parsed, "total_count", "total", "count")
    count = total if total is not None else len(items)
    outcome = _plural(count, kind, "es" if kind == "match" else "s") if count else "no matches"
    if count and kind == "match" and files:
        outcome += f" in {_plural(len(files), 'file')}"
    if isinstance(parsed, Mapping) and parsed.get("truncated") is True:
        outcome += " (truncated)"
    extra = ", ".join(_flat(f, 80) for f in files[:3]) if count else ""
    lead = "'" if pattern else "search"
    after = ("'" if pattern else "") + (f" in {where}" if where else "") + " -> " + outcome
    return _Summary(lead, _flat(pattern), after, extra, _text_error(text, parsed))


def _diff_counts(diff: str) -> tuple[int, int]:
    plus = minus = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            plus += 1
        elif line.startswith("-") and not line.startswith("---"):
            minus += 1
    return plus, minus


def _patch(args: Mapping[str, Any], text: str, parsed: Any, name: str) -> _Summary:
    patch_text = _first_str(args, "patch", "input", "diff")
    paths = [_first_str(args, *_PATH_KEYS)] if _first_str(args, *_PATH_KEYS) else []
    modified = _first_list(parsed, "files_modified", "files", "paths")
    if not paths and modified:
        paths = [p for p in modified if isinstance(p, str)]
    if not paths and patch_text:
        paths = list(dict.fromkeys(_DIFF_PATH.findall(patch_text)))
    diff = _first_str(parsed, "diff", "patch") or patch_text
    counts: tuple[int, int] | None = _diff_counts(diff) if diff else None
    if counts is None and ("old_string" in args or "new_string" in args):
        old, new = args.get("old_string"), args.get("new_string")
        counts = (
            _lines(new) if isinstance(new, str) else 0,
            _lines(old) if isinstance(old, str) else 0,
        )
    subject = paths[0] if paths else "a file"
    after = f" (+{len(paths) - 1} more files)" if len(paths) > 1 else ""
    if counts is not None:
        after += f" -> +{counts[0]:,} -{counts[1]:,} lines"
    return _Summary("patched ", subject, after, failure=_text_error(text, parsed), keep_tail=True)


def _web_search(args: Mapping[str, Any], text: str, parsed: Any, name: str) -> _Summary:
    query = _first_str(args, "query", "q", "search", "term", "keywords")
    items = _first_list(parsed, "web", "results", "items", "organic", "hits", "data")
    if items is not None:
        urls = [_first_str(i, "url", "link", "href") for i in items]
        outcome = _plural(len(items), "result") if items else "no results"
    else:
        urls = list(dict.fromkeys(re.findall(r"https?://[^\s\"'<>)\]]+", text[:100_000])))
        outcome = _plural(len(urls), "result") if urls else _plural(len(text), "char")
    extra = ", ".join(_flat(re.sub(r"^https?://(?:www\.)?", "", u), 60) for u in urls[:3] if u)
    lead, after = ("'", "' -> " + outcome) if query else ("searched", " -> " + outcome)
    return _Summary(lead, _flat(query), after, extra, _text_error(text, parsed))


def _web_extract(args: Mapping[str, Any], text: str, parsed: Any, name: str) -> _Summary:
    urls = args.get("urls")
    # a list of strings, or of objects ({"url": ...}) as some tool schemas have it
    url_list = (
        [u if isinstance(u, str) else _first_str(u, "url", "href", "link") for u in urls]
        if isinstance(urls, list)
        else []
    )
    url_list = [u for u in url_list if u]
    url_list = url_list or [u for u in [_first_str(args, "url", "urls", "href", "link")] if u]
    items = _first_list(parsed, "results", "pages", "data")
    title, errors = "", []
    if items is not None:
        pages = [i for i in items if isinstance(i, Mapping)]
        chars = sum(len(_first_str(p, "content", "text", "markdown", "raw_content")) for p in pages)
        errors = [_error_text(p["error"]) for p in pages if p.get("error")]
        title = next((t for t in (_first_str(p, "title") for p in pages) if t), "")
        url_list = url_list or [u for u in (_first_str(p, "url") for p in pages) if u]
    elif isinstance(parsed, Mapping):
        chars = len(_first_str(parsed, "content", "text", "markdown", "output"))
        title = _first_str(parsed, "title")
    else:
        chars = len(text)
    failure = _text_error(text, parsed) if items is None else None
    if errors:
        failure = errors[0] if len(errors) == 1 else f"{len(errors)} pages failed: {errors[0]}"
    more = f" (+{len(url_list) - 1} more)" if len(url_list) > 1 else ""
    subject = url_list[0] if url_list else "a page"
    extra = f"'{_flat(title, 100)}'" if title else ""
    after = f"{more} -> {_plural(chars, 'char')}"
    return _Summary("", subject, after, extra, failure, keep_tail=True)


def _browser(args: Mapping[str, Any], text: str, parsed: Any, name: str) -> _Summary:
    action = re.sub(r"^browser[_\-\s]*", "", name.lower()) or _first_str(args, "action")
    target = _first_str(args, "url", "ref", "element", "selector", "text", "key", "query", "value")
    title = _first_str(parsed, "title", "page_title")
    after = f" -> {_plural(len(text), 'char')}"
    extra = f"'{_flat(title, 100)}'" if title else ""
    lead = (_flat(action, 40) + " ") if action else ""
    return _Summary(lead, _flat(target), after, extra, _text_error(text, parsed), keep_tail=True)


def _memory(args: Mapping[str, Any], text: str, parsed: Any, name: str) -> _Summary:
    action = _first_str(args, "action", "operation", "command", "mode", "op") or "memory"
    target = _first_str(args, "target", "key", "name", "category", "section", "file")
    content = _first_str(args, "content", "text", "value", "memory", "fact", "old_text", "query")
    status = "ok" if isinstance(parsed, Mapping) and parsed.get("success") is True else ""
    status = status or _flat(_first_str(parsed, "message", "msg", "status"), 80)
    status = status or _plural(len(text), "char")
    lead = _flat(action, 40) + (f" {_flat(target, 60)}" if target else "")
    lead += ": '" if content else ""
    after = ("'" if content else "") + f" -> {status}"
    return _Summary(lead, _flat(content), after, failure=_text_error(text, parsed))


def _telling_argument(args: Mapping[str, Any]) -> str:
    for key in _TELLING:
        if args.get(key) not in (None, "", [], {}):
            return f"{key}={_scalar(args[key])}"
    for key, value in args.items():
        if isinstance(value, str) and value.strip():
            return f"{key}={value}"
    for key, value in args.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return f"{key}={value}"
    return ""


def _generic(args: Mapping[str, Any], text: str, parsed: Any, name: str) -> _Summary:
    count = _lines(text)
    size = _plural(len(text), "char")
    outcome = f"{_plural(count, 'line')}, {size}" if count > 1 else size
    subject = _flat(_telling_argument(args))
    return _Summary("", subject, f" -> {outcome}", failure=_text_error(text, parsed))


_Summariser = Callable[[Mapping[str, Any], str, Any, str], _Summary]
_BY_FAMILY: Final[dict[str, _Summariser]] = {
    "terminal": _terminal,
    "read_file": _read_file,
    "write_file": _write_file,
    "search": _search,
    "patch": _patch,
    "web_search": _web_search,
    "web_extract": _web_extract,
    "browser": _browser,
    "execute_code": _execute_code,
    "memory": _memory,
    "generic": _generic,
}


def tool_family(tool_name: str) -> str:
    """The tool kind a name belongs to (``"terminal"``, ``"read_file"``, ... or ``"generic"``).

    Namespaces are dropped (``mcp__fs__read_file``, ``functions.bash``); case, ``_`` and ``-``
    do not matter; any ``browser*`` tool is ``"browser"``.
    """
    name = tool_name.strip().lower() if isinstance(tool_name, str) else ""
    for separator in ("__", ".", ":", "/"):
        name = name.rsplit(separator, 1)[-1]
    key = re.sub(r"[\s_\-]", "", name)
    if key.startswith("browser"):
        return "browser"
    return _FAMILY_OF.get(key, "generic")


def _render(name: str, summary: _Summary, max_chars: int) -> str:
    """Assemble the line, shrinking extra, then failure, then subject, before a hard cut."""
    subject, extra, failure = summary.subject, summary.extra, summary.failure

    def build() -> str:
        line = f"[{name}] " + f"{summary.lead}{subject}{summary.after}".lstrip()
        line += f": {extra}" if extra else ""
        line += f", FAILED: {failure}" if failure else ""
        return _BREAKS.sub(" ", line).rstrip()

    line = build()
    # the failure says what went wrong: the subject (a command, a path) yields first, as the
    # call's own arguments still carry it whole
    for field, floor in (("extra", 0), ("subject", 24), ("failure", 40)):
        over = len(line) - max_chars
        if over <= 0:
            break
        if field == "extra":
            extra = _clip(extra, max(len(extra) - over, 0)) if len(extra) - over > 8 else ""
        elif field == "failure" and failure and len(failure) > floor:
            failure = _clip(failure, max(len(failure) - over, floor))
        elif field == "subject" and len(subject) > floor:
            subject = _clip(subject, max(len(subject) - over, floor), summary.keep_tail)
        line = build()
    return _clip(line, max_chars)


def summarize_tool_result(
    tool_name: str, arguments: Mapping[str, Any], result: str, max_chars: int = 300
) -> str:
    """One line (at most ``max_chars``, starting ``[tool_name]``) an agent can still act on.

    Examples: ``[terminal] ran `npm test` -> exit 0, 47 lines output``;
    ``[read_file] read src/app.py lines 1-500 (500 lines, 18,230 chars)``. Results that are JSON
    are read by field, anything else as text. Never raises; ``max_chars < 1`` gives ``""``.
    """
    limit = max_chars if isinstance(max_chars, int) and not isinstance(max_chars, bool) else 300
    if limit < 1:
        return ""
    name = _flat(tool_name if isinstance(tool_name, str) else str(tool_name), 48) or "tool"
    text = result if isinstance(result, str) else str(result)
    args = arguments if isinstance(arguments, Mapping) else {}
    try:
        reload = pointer(name, args)
        if reload is not None:  # a skill or todo list the agent must fetch again
            return _clip(f"[{name}] {reload.removeprefix('- ')}", limit)
        family = tool_family(name)
        summary = _BY_FAMILY[family](args, text, _parse(text), name)
        summary = summary._replace(
            subject=_flat(summary.subject, limit, summary.keep_tail),
            extra=_flat(summary.extra, limit),
            failure=_flat(summary.failure, limit) if summary.failure else None,
        )
        return _render(name, summary, limit)
    except Exception:  # noqa: BLE001 - a summary must never break compression; fall back to size
        return _clip(f"[{name}] {_plural(len(text), 'char')}", limit)
