"""Facts a compaction should keep: found in a transcript, or planted into a copy of it.

Why: "what does compaction keep?" needs a fixed list of things to look for. Six kinds, the
handles an agent needs to carry on: file paths, shell commands, error lines, the user's own
rules, decisions, and numbers with units. :func:`find_facts` reads them mechanically from a
slice of a transcript (so a user can measure their own sessions); :func:`plant_facts` inserts
synthetic ones, a few of each kind, spread over a slice, in the shapes a coding session has
them (tool calls, failed commands, user turns, assistant replies), so every kind has facts
even in a transcript that holds none. Everything here is pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from hermes_core.transcript.messages import is_real_user_message, message_text, turn_groups

__all__ = ["KINDS", "Fact", "collapse", "find_facts", "normal_number", "plant_facts"]

Message = dict[str, Any]

#: The kinds, in report order.
KINDS: Final = ("paths", "commands", "errors", "rules", "decisions", "numbers")

PATH_KEYS: Final = frozenset({"path", "file_path", "filepath", "file", "filename", "paths"})
COMMAND_KEYS: Final = frozenset({"command", "cmd"})
SHELL_TOOL: Final = re.compile(r"term|shell|bash|zsh|exec|run|command|cmd|console|powershell")
ERROR_LINE: Final = re.compile(
    r"Error\b|Exception\b|FAILED|\bfailed\b|\berror\b|fatal|ERR!|:\d+:\d+: [A-Z]+\d+ "
)
RULE_WORDS: Final = re.compile(
    r"\b(?:always|never|don'?t|do not|must not|mustn'?t|must)\b", re.IGNORECASE
)
DECISION_WORDS: Final = re.compile(
    r"\b(?:decided|decision|going with|go with|chose|opted|settled on|instead of|"
    r"(?:I|we)(?:'ll| will) (?:use|keep|switch)|switch(?:ed)? to)\b",
    re.IGNORECASE,
)
_UNITS = (
    r"ms|s|sec|seconds|minutes|min|h|hours|KB|MB|GB|TB|KiB|MiB|GiB|%|tokens|lines|files|"
    r"tests|bytes|requests|rps|turns|messages|x"
)
NUMBER: Final = re.compile(
    rf"(?<![\w.,])\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?\s?(?:{_UNITS})(?![\w%])"
    rf"|(?<![\w.,])\d+(?:\.\d+)?\s?(?:{_UNITS})(?![\w%])"
)
_PATH_IN_TEXT: Final = re.compile(
    r"(?<![\w/.:-])(?:~|\.{1,2})?/?"
    r"(?:[\w.-]{1,80}/){1,12}[\w-]{1,80}\.\w{1,8}\b"
)
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+|\n+")
_WS: Final = re.compile(r"\s+")
MAX_FACT_CHARS: Final = 200  # a longer sentence or command is not one fact
ERROR_CHARS: Final = 80  # an error line is looked for by its first 80 characters


@dataclass(frozen=True)
class Fact:
    """One thing to look for: its kind, the text, the message it sits in, and whether it was
    planted (synthetic) or found in the transcript."""

    kind: str
    text: str
    index: int
    planted: bool = False


def collapse(text: str) -> str:
    """Whitespace runs as one space, stripped: how every fact is compared."""
    return _WS.sub(" ", text).strip()


def normal_number(text: str) -> str:
    """``1,375 ms`` and ``1375ms`` are one number: no thousands commas, no space before the
    unit."""
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text)
    return re.sub(r"(?<=\d)\s+(?=[A-Za-z%])", "", text)


# --------------------------------------------------------------------------- finding


def _arguments(call: Any) -> tuple[str, Mapping[str, Any]]:
    function = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping):
        return "", {}
    raw = function.get("arguments")
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        args = None
    name = function.get("name")
    return (name.lower() if isinstance(name, str) else ""), (
        args if isinstance(args, Mapping) else {}
    )


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _sentences(text: str) -> Iterator[str]:
    for part in _SENTENCE_END.split(text):
        sentence = collapse(part).rstrip(".!?").strip()
        if len(sentence.split()) >= 3 and len(sentence) <= MAX_FACT_CHARS:
            yield sentence


def _visible(text: str) -> str:
    """Assistant text without a reasoning block: compaction never keeps reasoning."""
    for tag in ("think", "reasoning"):
        if f"</{tag}>" in text:
            text = text.rsplit(f"</{tag}>", 1)[1]
    return text


def _failed(content: str) -> bool:
    try:
        parsed = json.loads(content)
    except ValueError:
        return content.lstrip().startswith(("Error", "error:", "ERROR", "Traceback"))
    code = parsed.get("exit_code") if isinstance(parsed, Mapping) else None
    return isinstance(code, int) and not isinstance(code, bool) and code != 0


def _output(content: str) -> str:
    try:
        parsed = json.loads(content)
    except ValueError:
        return content
    if not isinstance(parsed, Mapping):
        return content
    parts = [parsed.get(k) for k in ("output", "stdout", "stderr", "error")]
    return "\n".join(p for p in parts if isinstance(p, str))


def first_error_line(content: str) -> str | None:
    """The first line of a failed result that names what went wrong (not a traceback's
    header), cut to :data:`ERROR_CHARS`; ``None`` when there is none."""
    for raw in _output(content).splitlines():
        line = collapse(raw)
        if line and not line.startswith("Traceback") and ERROR_LINE.search(line):
            return line[:ERROR_CHARS].rstrip()
    return None


def _message_facts(msg: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    role = msg.get("role")
    if role == "assistant":
        for call in msg.get("tool_calls") or []:
            name, args = _arguments(call)
            for key, value in args.items():
                if key in PATH_KEYS:
                    yield from (("paths", p.strip()) for p in _strings(value) if p.strip())
                elif key in COMMAND_KEYS and SHELL_TOOL.search(name):
                    for command in (collapse(c) for c in _strings(value)):
                        if command and len(command) <= MAX_FACT_CHARS:
                            yield "commands", command
        text = _visible(message_text(msg))
        yield from (("decisions", s) for s in _sentences(text) if DECISION_WORDS.search(s))
        yield from (("numbers", m.group(0)) for m in NUMBER.finditer(text))
    elif role == "tool":
        content = message_text(msg)
        if _failed(content) and (line := first_error_line(content)) is not None:
            yield "errors", line
    elif is_real_user_message(msg):
        text = message_text(msg)
        yield from (("rules", s) for s in _sentences(text) if RULE_WORDS.search(s))
        yield from (("paths", m.group(0)) for m in _PATH_IN_TEXT.finditer(text))
        yield from (("numbers", m.group(0)) for m in NUMBER.finditer(text))


def find_facts(
    messages: Sequence[Mapping[str, Any]],
    start: int = 0,
    stop: int | None = None,
    *,
    per_kind: int = 500,
) -> list[Fact]:
    """The facts of ``messages[start:stop]``, each text once per kind (where it first
    appears), at most ``per_kind`` of each kind.

    Paths: path arguments of tool calls, and paths the user wrote; commands: the commands of
    shell tools; errors: the first error line of a failed tool result (non-zero exit code, or
    a result that starts with an error); rules: the user's sentences with always, never,
    don't, do not, must; decisions: the assistant's sentences that say what was chosen
    (decided, going with, instead of, we'll use, ...); numbers: numbers with a unit (ms, s,
    MB, %, tokens, tests, ...) in user and assistant text."""
    end = len(messages) if stop is None else min(stop, len(messages))
    seen: dict[str, dict[str, Fact]] = {kind: {} for kind in KINDS}
    for index in range(max(0, start), end):
        msg = messages[index]
        if not isinstance(msg, Mapping):
            continue
        for kind, text in _message_facts(msg):
            key = normal_number(text) if kind == "numbers" else text
            bucket = seen[kind]
            if key not in bucket and len(bucket) < per_kind:
                bucket[key] = Fact(kind, text, index)
    facts = [fact for kind in KINDS for fact in seen[kind].values()]
    return sorted(facts, key=lambda f: (f.index, KINDS.index(f.kind)))


# --------------------------------------------------------------------------- planting

_AREAS: Final = ("billing", "ingest", "auth", "search", "reports", "notify", "export", "cache")
_RULES: Final = (
    "Never edit the vendored files under third_party/{area}_kit without asking me first",
    "Always keep the public signature of {area}_entrypoint unchanged",
    "Don't add new dependencies to the {area} service",
    "Do not reformat files you did not otherwise change in {area}",
)
_DECISIONS: Final = (
    "Decision: we keep the retry budget of the {area} worker and fix the caller instead",
    "Decision: the {area} cache moves to SQLite instead of the in-memory dict",
    "Decision: we are going with the streaming parser for {area} exports",
    "Decision: the {area} timeout stays configurable instead of hard-coded",
)
_NUMBERS: Final = (
    "1,375 ms", "48.6 MB", "12,907 tokens", "3.25 s", "917 KB", "61.5%", "2,048 requests", "7.75 GB"
)  # fmt: skip


def _planted(kind: str, n: int, call_id: str) -> tuple[list[Message], str]:
    """The messages that carry planted fact ``n`` of ``kind``, and the fact's text."""
    area = _AREAS[n % len(_AREAS)]

    def call(name: str, args: dict[str, Any], result: str) -> list[Message]:
        function = {"name": name, "arguments": json.dumps(args)}
        return [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": call_id, "type": "function", "function": function}],
            },
            {"role": "tool", "tool_call_id": call_id, "name": name, "content": result},
        ]

    if kind == "paths":  # every other one edited: the ledger keeps written files first
        path = f"/work/planted/{area}/src/{area}_handler_{n}.py"
        if n % 2:
            args = {"path": path, "old_string": "return None", "new_string": "return {}"}
            return call("patch", args, json.dumps({"success": True})), path
        return call("read_file", {"path": path}, json.dumps({"content": "def handle(): ..."})), path
    if kind == "commands":
        command = f"make check-{area} PLANTED_LEVEL={n + 2}"
        result = json.dumps({"output": "checks passed", "exit_code": 0})
        return call("terminal", {"command": command}, result), command
    if kind == "errors":
        line = f"PlantedError: the {area} job lost its lease after {n + 3} retries"
        output = f'Traceback (most recent call last):\n  File "jobs.py", line 9\n{line}'
        result = json.dumps({"output": output, "exit_code": 1})
        return call("terminal", {"command": f"./run_job {area}"}, result), line[:ERROR_CHARS]
    if kind == "rules":
        rule = _RULES[n % len(_RULES)].format(area=area)
        return [
            {"role": "user", "content": rule + "."},
            {"role": "assistant", "content": "Understood."},
        ], rule
    if kind == "decisions":
        decision = _DECISIONS[n % len(_DECISIONS)].format(area=area)
        return [{"role": "assistant", "content": decision + "."}], decision
    number = _NUMBERS[n % len(_NUMBERS)]
    text = f"Measured on the replay: the {area} step now takes {number}."
    return [{"role": "assistant", "content": text}], number


def _haystack(messages: Iterable[Mapping[str, Any]]) -> str:
    parts = []
    for msg in messages:
        parts.append(message_text(msg))
        for call in msg.get("tool_calls") or []:
            parts.append(json.dumps(_arguments(call)[1]))
    return "\n".join(parts)


def plant_facts(
    messages: Sequence[Mapping[str, Any]],
    start: int,
    stop: int,
    *,
    per_kind: int = 4,
) -> tuple[list[Message], list[Fact]]:
    """A copy of ``messages`` with ``per_kind`` synthetic facts of every kind inserted between
    turn groups of ``messages[start:stop]``, spread evenly (kinds interleaved, so each kind
    has early and late facts); the input is not changed. A planted text that already occurs
    in the transcript is left out (it could not tell what compaction kept)."""
    if per_kind < 1:
        raise ValueError(f"per_kind must be at least 1, got {per_kind}")
    starts = [g.start for g in turn_groups(messages) if start <= g.start < stop]
    if not starts:
        raise ValueError(f"no turn boundary in messages {start}..{stop} to plant facts at")
    existing = normal_number(collapse(_haystack(messages)))
    slots = per_kind * len(KINDS)
    inserts: dict[int, list[tuple[str, int]]] = {}
    for slot in range(slots):
        position = starts[min(len(starts) - 1, slot * len(starts) // slots)]
        inserts.setdefault(position, []).append((KINDS[slot % len(KINDS)], slot // len(KINDS)))
    out: list[Message] = []
    facts: list[Fact] = []
    for index, msg in enumerate(messages):
        for kind, n in inserts.get(index, []):
            carrier, text = _planted(kind, n, f"call_planted_{kind}_{n}")
            if normal_number(collapse(text)) in existing:
                continue
            holder = next(i for i, m in enumerate(carrier) if text in _haystack([m]))
            facts.append(Fact(kind, text, len(out) + holder, planted=True))
            out.extend(carrier)
        out.append(dict(msg))
    return out, facts
