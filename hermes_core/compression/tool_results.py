"""Readers and failure detection shared by the one-line tool result summaries.

Why: every family summariser in :mod:`tool_summaries` reads JSON fields the same total way (any
input, nothing raises) and asks the same question of a result: did it fail, and why (a test
tally, an exception or error line, an exit code)? Those answers live here, apart from the
per-family wording.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from typing import Any, Final

_OUTPUT_KEYS: Final = ("output", "stdout", "result", "content", "text")
_EXIT_KEYS: Final = ("exit_code", "exitCode", "returncode", "return_code", "exit_status")

_TEST_TALLY = re.compile(
    r"\b\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|deselected)"
    r"(?:, \d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|deselected))*"
)
_EXCEPTION_LINE = re.compile(
    r"^\s*((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Fault)\b.*)$"
)
_EXCEPTION_HINT = re.compile(r"Error|Exception|Exit|Fault")  # cheap test before the match
#: pytest's assertion lines: ``E   AssertionError: assert 1 == 2``
_PYTEST_ERROR = re.compile(r"^E\s{1,8}(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Failure)\b")
_ERROR_LINE = re.compile(
    r"(?i)^\s*(?:(?:error|fatal|panic)\b|npm err!)|\b(?:error|fatal)(?:\[\w+\])?: "
    r"|^\S{1,40}: \*\*\* \[[^\]\n]{1,200}\] Error \d{1,5}"  # make: *** [all] Error 2
)
_LEADING_ERROR = re.compile(r"(?i)^\s*(?:error|failed|failure|exception|traceback|fatal)\b")
_EXIT_IN_TEXT = re.compile(r"(?i)\bexit(?:ed)?(?: with)? (?:code|status)[:=]?\s*(-?\d+)")

# --- small readers (every one total over arbitrary JSON) ----------------------------------------


def _flat(value: str, limit: int = 400, keep_tail: bool = False) -> str:
    """One line, whitespace runs collapsed (this removes every character splitlines() splits on)."""
    if len(value) > limit * 4:  # bound the work on megabyte arguments
        value = value[: limit * 2] + " " + value[-limit * 2 :] if keep_tail else value[: limit * 4]
    return _clip(" ".join(value.split()), limit, keep_tail)


def _clip(text: str, limit: int, keep_tail: bool = False) -> str:
    if len(text) <= limit:
        return text
    if limit <= 1:
        return "…"[:limit]
    if not keep_tail:
        return text[: limit - 1] + "…"
    left = (limit - 1) // 3
    return text[:left] + "…" + text[len(text) - (limit - 1 - left) :]


def _plural(count: int, word: str, suffix: str = "s") -> str:
    return f"{count:,} {word}{'' if count == 1 else suffix}"


def _lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _as_int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,12}", value.strip()):
        return int(value)
    return None


def _first_int(data: Any, *keys: str) -> int | None:
    if not isinstance(data, Mapping):
        return None
    return next((_as_int(data.get(key)) for key in keys if key in data), None)


def _first_str(data: Any, *keys: str) -> str:
    """The first non-blank string among ``keys`` (a list of strings yields its first item)."""
    if not isinstance(data, Mapping):
        return ""
    for key in keys:
        value = data.get(key)
        if isinstance(value, list) and value and isinstance(value[0], str):
            value = value[0]
        if isinstance(value, str) and value.strip():
            return value
    return ""


def _first_list(data: Any, *keys: str) -> list[Any] | None:
    if isinstance(data, list):
        return data
    if not isinstance(data, Mapping):
        return None
    for key in keys:
        value = data.get(key)
        if isinstance(value, list):
            return value
        if isinstance(value, Mapping):  # {"data": {"web": [...]}}
            inner = _first_list(value, *keys)
            if inner is not None:
                return inner
    return None


#: Parsed JSON of recent tool results and call arguments, keyed by the exact string: pruning's
#: one-line summaries, the fallback digest and the anchor scan all read the same strings.
#: Bounded by entries and by the characters of the keys; the oldest go first.
_PARSED: dict[str, Any] = {}
_PARSED_MAX_ENTRIES: Final = 4096
_PARSED_MAX_CHARS: Final = 8_000_000  # parsed objects weigh several times their text
_parsed_chars = [0]  # characters of the keys held
_PARSED_LOCK: Final = threading.Lock()
_INVALID: Final = object()
_MISSING: Final = object()


def loads_shared(text: str) -> Any:
    """``json.loads(text)``, memoised; raises ValueError (or RecursionError) as it does.

    The value is shared between callers: it must be read, never mutated. The cache is keyed
    by the whole string, so a lookup can only return what its caller already holds.
    """
    with _PARSED_LOCK:
        value = _PARSED.get(text, _MISSING)
    if value is _INVALID:
        raise ValueError("not JSON")
    if value is not _MISSING:
        return value
    try:
        value = json.loads(text)
    except ValueError:  # RecursionError depends on the stack: never remembered
        value = _INVALID
    with _PARSED_LOCK:
        if text not in _PARSED:
            _PARSED[text] = value
            _parsed_chars[0] += len(text)
        while len(_PARSED) > _PARSED_MAX_ENTRIES or _parsed_chars[0] > _PARSED_MAX_CHARS:
            oldest = next(iter(_PARSED))
            _parsed_chars[0] -= len(oldest)
            del _PARSED[oldest]
    if value is _INVALID:
        raise ValueError("not JSON")
    return value


def clear_parse_cache() -> None:
    """Forget every parsed result (benchmarks measure cold runs with it)."""
    with _PARSED_LOCK:
        _PARSED.clear()
        _parsed_chars[0] = 0


def _parse(text: str) -> Any:
    """The result as JSON when it is a JSON object or array, else None (raw text)."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return None
    try:
        return loads_shared(stripped)
    except (ValueError, RecursionError):
        return None


def _short_json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)[:200]
    except (TypeError, ValueError, RecursionError):
        return type(value).__name__


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value:
        more = f" (+{len(value) - 1})" if len(value) > 1 else ""
        return _scalar(value[0]) + more
    if isinstance(value, (int, float)):
        return str(value)
    return _short_json(value)


# --- failure detection ---------------------------------------------------------------------------


def _reason(text: str) -> str | None:
    """Why a run failed, verbatim: pytest's first ``E   AssertionError: ...`` line, else the
    last exception line (the one raised), else the first error line; after the test tally
    when there is one (``1 failed, 3 passed; E   AssertionError: assert 1 == 2``): the
    agent reading the stand-in, and the summary's anchor ledger reading it later, keep the
    actual error, not only the count."""
    tally = pytest = exception = error = None
    for line in text.splitlines():
        if "failed" in line or "error" in line:
            match = _TEST_TALLY.search(line)
            if match and ("failed" in match.group() or "error" in match.group()):
                tally = match.group()
        if pytest is None and _PYTEST_ERROR.match(line):
            pytest = line.strip()
        elif _EXCEPTION_HINT.search(line) and _EXCEPTION_LINE.match(line):
            exception = line.strip()
        if error is None and _ERROR_LINE.search(line):
            error = line.strip()
    first = pytest or exception or error
    return f"{tally}; {first}" if tally and first else tally or first


def _last_line(text: str) -> str:
    for line in reversed(text[-4000:].splitlines()):
        if line.strip():
            return line.strip()
    return ""


def _error_text(value: Any) -> str:
    if isinstance(value, str):
        return _reason(value) or _last_line(value) or "error"
    if isinstance(value, Mapping):
        inner = _first_str(value, "message", "msg", "detail", "error", "reason")
        return _error_text(inner) if inner else _short_json(value)
    if isinstance(value, list) and value:
        return _error_text(value[0])
    return "error" if value is True else _short_json(value)


def _json_error(parsed: Any) -> str | None:
    """An error the result states itself: an ``error`` field, ``success: false`` and kin."""
    if not isinstance(parsed, Mapping):
        return None
    for key in ("error", "error_message", "errorMessage", "exception"):
        value = parsed.get(key)
        if value not in (None, "", False, [], {}):
            return _error_text(value)
    status = parsed.get("status")
    if (
        parsed.get("success") is False
        or parsed.get("ok") is False
        or (isinstance(status, str) and status.lower() in ("error", "failed", "failure"))
    ):
        detail = _first_str(parsed, "message", "msg", "detail", "reason", "stderr")
        return _error_text(detail) if detail else "unsuccessful"
    return None


def _text_error(text: str, parsed: Any) -> str | None:
    """For tools whose payload is data (files, pages): only a result that *is* an error counts."""
    if parsed is not None:
        return _json_error(parsed)
    if _LEADING_ERROR.match(text):
        return _reason(text) or _flat(text.strip().split("\n", 1)[0], 200)
    if "Traceback (most recent call last)" in text:
        return _reason(text) or "Traceback"
    return None


def _process(text: str, parsed: Any) -> tuple[str, str, int | None, str | None]:
    """(output, stderr, exit code, failure) of a command or code run."""
    if isinstance(parsed, Mapping):
        output = _first_str(parsed, *_OUTPUT_KEYS)
        stderr = _first_str(parsed, "stderr")
        code = _first_int(parsed, *_EXIT_KEYS)
    else:
        output, stderr, code = text, "", None
        edges = text[:300] + "\n" + text[-300:]
        found = _EXIT_IN_TEXT.findall(edges)
        if found:
            code = int(found[-1])
    failure = _json_error(parsed) if isinstance(parsed, Mapping) else None
    if code is not None and code != 0:
        failure = failure or _reason(stderr) or _reason(output)
        failure = failure or _last_line(stderr) or _last_line(output) or f"exit {code}"
    elif code is None and failure is None:
        failure = _reason(stderr + "\n" + output)
        if failure is None and stderr.strip() and not output.strip():
            failure = _last_line(stderr)
    return output, stderr, code, failure


def _run_outcome(output: str, stderr: str, code: int | None, failed: bool) -> tuple[str, str]:
    """(`` -> exit 0, 47 lines output``, a passing test tally such as ``13 passed``)."""
    parts = [] if code is None else [f"exit {code}"]
    count = _lines(output) + _lines(stderr)
    parts.append(f"{_plural(count, 'line')} output" if count else "no output")
    tallies = [] if failed else _TEST_TALLY.findall(output[-2000:])
    return " -> " + ", ".join(parts), tallies[-1] if tallies else ""
