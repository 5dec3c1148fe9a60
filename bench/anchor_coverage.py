#!/usr/bin/env python3
"""Anchor coverage: what one compaction keeps of the middle's files, commands and failures.

One ``compress()`` per transcript and window (estimate counter, ``summarizer="fallback"``,
``force=True``), then, over the compacted middle's tool calls, the share found in the summary:

* **paths**: every ``path``/``file_path``/``file``/``filename``/``paths`` argument (as
  bench/compress.py counts them);
* **edited**: the paths of calls whose tool name says it writes (write, edit, patch, ...);
* **commands**: every ``command``/``cmd`` of a shell tool, whitespace collapsed;
* **failed**: shell calls whose JSON result has a non-zero exit code, kept only when the first
  40 characters of one of its error lines (a line of its output naming an error, an exception
  or a failure, or a linter's ``file:line:col: CODE``) are on the command's own line, or on
  the ``↳`` line right under it (the ledger's form);
* **last**: the middle's last shell command.

"Found" means verbatim, or recoverable from the ledger's documented grouped lines (see
docs/compression.md): a line ``- DIR/{a.py, b.py}`` holds ``DIR/a.py`` and ``DIR/b.py``; a line
``- PROG SUB`` followed by lines ``· ARGS`` holds ``PROG SUB ARGS``. Nothing else counts.

Targets (exit 1 when missed): edited, failed and last 100% everywhere; paths and commands at
least 95% wherever a compact rendering of the middle's reference items (paths grouped by
directory, commands by program and subcommand, each once) fits the ledger budget: the
"compact" column, in characters, against the "budget" column. The prose must stay within
``summary_budget()`` and the ledger within its budget (paths, commands and the rest; the
user's rules and the assistant's decisions have a fifth of it on top: ``ledger_bound``).

Transcripts: the two samples (tests/data/transcripts), bench/gen_transcript.py sessions
(``--seed 1``, generated into ``--data-dir`` when missing; about a minute each) and sessions
made here by :func:`make_session`: a deterministic agent working through tasks in a
generated monorepo (absolute paths six or seven directories deep, tests run, lint and type
checks that fail now and then, edits and new files), fast enough for the test suite.

Usage: python bench/anchor_coverage.py [--turns 150 300 500 1000] [--gen-turns 150 1000]
           [--data-dir DIR] [--skip-generate] [--contexts 32000 128000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hermes_core.compression.anchors import ANCHOR_HEADER, ledger_bound  # noqa: E402
from hermes_core.compression.oneshot import compress  # noqa: E402
from hermes_core.compression.policy import summary_budget  # noqa: E402
from hermes_core.config.settings import Settings  # noqa: E402
from hermes_core.tokens import get_counter  # noqa: E402

Message = dict[str, Any]
SAMPLES = ("coding-50turns", "coding-200turns")
PATH_KEYS = frozenset({"path", "file_path", "file", "filename", "paths"})
COMMAND_KEYS = frozenset({"command", "cmd"})
SHELL_TOOL = re.compile(r"term|shell|bash|zsh|exec|run|command|cmd|console")
WRITE_TOOL = re.compile(r"write|edit|patch|creat|replac|insert|append|save")
ERROR_WORD = re.compile(r"Error|Exception|FAILED|failed|error|fatal|ERR!|Fault|:\d+: [A-Z]+\d+ ")
GROUP_PATHS = re.compile(r"- (.*/)\{(.+)\}")
MIN_SHARE = 0.95
_WS = re.compile(r"\s+")


def collapse(text: str) -> str:
    return _WS.sub(" ", text).strip()


# --------------------------------------------------------------------------- reference


@dataclass
class Reference:
    """What the middle's tool calls name, each once, in order."""

    paths: dict[str, None] = field(default_factory=dict)
    edited: dict[str, None] = field(default_factory=dict)
    commands: dict[str, None] = field(default_factory=dict)
    failed: dict[str, list[str]] = field(default_factory=dict)  # command -> its error lines
    last: str | None = None


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _args(call: Any) -> tuple[str, Any]:
    function = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping):
        return "", None
    raw = function.get("arguments")
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        args = None
    name = function.get("name")
    return (name.lower() if isinstance(name, str) else ""), args


def _error_lines(content: Any) -> list[str]:
    text = content if isinstance(content, str) else ""
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, Mapping):
        parts = [parsed.get(k) for k in ("output", "stdout", "stderr", "error")]
        text = "\n".join(p for p in parts if isinstance(p, str))
    lines = (collapse(line) for line in text.splitlines())
    return [x for x in lines if ERROR_WORD.search(x) and not x.startswith("Traceback")]


def _exit_code(content: Any) -> int:
    try:
        parsed = json.loads(content) if isinstance(content, str) else None
    except ValueError:
        return 0
    code = parsed.get("exit_code") if isinstance(parsed, Mapping) else None
    return code if isinstance(code, int) and not isinstance(code, bool) else 0


def reference(middle: list[Message]) -> Reference:
    ref = Reference()
    results = {m.get("tool_call_id"): m.get("content") for m in middle if m.get("role") == "tool"}
    for msg in middle:
        for call in msg.get("tool_calls") or []:
            name, args = _args(call)
            if not isinstance(args, Mapping):
                continue
            for key, value in args.items():
                if key in PATH_KEYS:
                    for path in (p.strip() for p in _strings(value) if p.strip()):
                        ref.paths[path] = None
                        if WRITE_TOOL.search(name):
                            ref.edited[path] = None
                elif key in COMMAND_KEYS and SHELL_TOOL.search(name):
                    for command in (collapse(c) for c in _strings(value) if c.strip()):
                        ref.commands[command] = None
                        ref.last = command
                        content = results.get(call.get("id"))
                        if _exit_code(content):
                            ref.failed[command] = _error_lines(content)
    return ref


def compact_chars(ref: Reference) -> int:
    """About the least a compact rendering of ``ref`` needs: paths grouped by directory,
    commands by program (``python -m module`` as one), a failed command's line with its first
    error line (at most 100 characters), the header and labels; nothing of the other
    categories."""
    dirs: dict[str, list[str]] = {}
    for path in ref.paths:
        head, _, base = path.rpartition("/")
        dirs.setdefault(head, []).append(base)
    chars = sum(len(d) + sum(len(b) + 2 for b in bs) + 4 for d, bs in dirs.items())
    programs: dict[str, list[str]] = {}
    for command in ref.commands:
        words = command.split(" ")
        cut = 3 if len(words) > 3 and words[1] == "-m" else 1
        programs.setdefault(" ".join(words[:cut]), []).append(" ".join(words[cut:]))
    chars += sum(len(p) + 3 + sum(len(r) + 5 for r in rs) for p, rs in programs.items())
    chars += sum(len(c) + 16 + min(len(e[0]) if e else 0, 100) for c, e in ref.failed.items())
    return chars + 200


# --------------------------------------------------------------------------- found


class Found:
    """What a text holds, verbatim or by the ledger's grouped lines."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.collapsed = collapse(text)
        self.lines = [collapse(line) for line in text.splitlines()]
        self.grouped: set[str] = set()
        self.notes: list[tuple[str, str]] = []  # (command, the "↳" line under it)
        head: str | None = None  # a "- " line that "· " lines may continue
        subject = ""  # the command the line above names
        for line in self.lines:
            if (match := GROUP_PATHS.fullmatch(line)) is not None:
                self.grouped.update(match.group(1) + m for m in match.group(2).split(", "))
            if line.startswith("· ") and head is not None:
                subject = collapse(f"{head} {line[2:]}")
                self.grouped.add(subject)
            elif line.startswith("↳"):
                self.notes.append((subject, line))
            elif line.startswith("- "):
                head = subject = line[2:]
            else:
                head, subject = None, ""

    def path(self, path: str) -> bool:
        return path in self.text or path in self.grouped

    def command(self, command: str) -> bool:
        return command in self.collapsed or command in self.grouped

    def failure(self, command: str, errors: list[str]) -> bool:
        """The command and one of its error lines on one line, or the command's line (alone or
        in a group) followed by a ``↳ exit N: error`` line holding the error."""
        needles = [e[:40] for e in errors] or ["exit"]
        if any(command in x and any(n in x for n in needles) for x in self.lines):
            return True
        return any(c == command and any(n in x for n in needles) for c, x in self.notes)


@dataclass
class Row:
    label: str
    context: int
    shares: dict[str, tuple[int, int]]
    compact: int
    budget: int
    ledger: int
    prose: int
    prose_budget: int

    def ok(self) -> bool:
        full = all(k == n for name, (k, n) in self.shares.items() if name in FULL)
        fits = self.compact <= self.budget
        most = all(k >= MIN_SHARE * n for name, (k, n) in self.shares.items() if name in MOST)
        bounded = self.ledger <= ledger_bound(self.budget) and self.prose <= self.prose_budget
        return full and (most or not fits) and bounded


FULL = ("edited", "failed", "last")
MOST = ("paths", "commands")


def _settings() -> Settings:
    settings = Settings()
    settings.model.tokenizer = "estimate"
    return settings


def ledger_budget(stats: Mapping[str, Any]) -> int:
    """The ledger bound the engine planned for this compaction (``stats["ledger"]``: it
    follows the window, hermes_core/compression/ledger_budget.py)."""
    return int(stats["ledger"]["chars"])


def measure(label: str, messages: list[Message], context: int) -> Row:
    result = compress(
        messages, context_length=context, config=_settings(), summarizer="fallback", force=True
    )
    window = result.stats.get("window")
    if result.status != "compressed" or not window or result.summary is None:
        raise SystemExit(f"{label} at {context:,}: {result.status}: {result.reason}")
    ref = reference(messages[window["head_end"] : window["tail_start"]])
    summary = result.summary
    at = summary.find(ANCHOR_HEADER)
    prose, ledger = (summary, "") if at < 0 else (summary[:at].rstrip(), summary[at:])
    found = Found(summary)
    shares = {
        "paths": (sum(map(found.path, ref.paths)), len(ref.paths)),
        "edited": (sum(map(found.path, ref.edited)), len(ref.edited)),
        "commands": (sum(map(found.command, ref.commands)), len(ref.commands)),
        "failed": (sum(found.failure(c, e) for c, e in ref.failed.items()), len(ref.failed)),
        "last": (int(ref.last is not None and found.command(ref.last)), int(ref.last is not None)),
    }
    return Row(
        label,
        context,
        shares,
        compact_chars(ref),
        ledger_budget(result.stats),
        len(ledger),
        get_counter(None, "estimate").count_text(prose),
        summary_budget(context),
    )


# --------------------------------------------------------------------------- sessions


_SERVICES = ("billing", "auth", "search", "notify", "gateway", "inventory", "reports")
_LAYERS = ("api", "models", "db", "workers", "schemas", "services", "utils")
_WORDS = re.findall(
    r"\S+",
    "invoice refund customer account token session query index email webhook route payment "
    "subscription plan usage export importer cache retry rate_limit config client handler "
    "events audit permissions order stock tax currency ledger_entry discount coupon",
)
_ROOT = "/home/dev/acme"


class _Session:
    """An agent's session in a generated monorepo: tasks of a few related files each."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.messages: list[Message] = [{"role": "system", "content": "You are a coding agent."}]
        self.calls = 0
        self.areas: list[tuple[str, str, list[str]]] = []

    def pick(self, seq: Any) -> Any:
        return self.rng.choice(seq)

    def task(self) -> None:
        if self.areas and self.rng.random() < 0.5:  # back to an area worked on before
            svc, layer, words = self.pick(self.areas)
        else:
            svc, layer, words = self.pick(_SERVICES), self.pick(_LAYERS), self.rng.sample(_WORDS, 4)
            self.areas.append((svc, layer, words))
        self.src = [f"services/{svc}/src/{svc}/{layer}/{w}.py" for w in words]
        self.src.append(f"services/{svc}/src/{svc}/{self.pick(_LAYERS)}/{self.pick(_WORDS)}.py")
        self.tests = [f"services/{svc}/tests/{layer}/test_{w}.py" for w in words[:3]]
        self.svc, self.layer = svc, layer
        self.runs: list[tuple[str, str, str]] = []
        ask = f"The {words[0]} flow in {svc} is broken; fix {self.src[0]} and keep the tests green."
        self.messages.append({"role": "user", "content": ask})

    def _code(self, path: str) -> str:
        stem = path.rsplit("/", 1)[1].removesuffix(".py")
        body = [
            f"def {stem}_{i}(value: int) -> int:\n    return value * {i}  # {stem}"
            for i in range(40)
        ]
        return "\n".join(f"{n:>5}|{line}" for n, line in enumerate("\n".join(body).splitlines()))

    def _commands(self) -> list[tuple[str, str, str]]:
        """The commands a task runs (several of them more than once): (command, what it
        prints when it passes, what it prints when it fails, or "" if it cannot fail)."""
        svc, layer, src, test = self.svc, self.layer, self.pick(self.src), self.pick(self.tests)
        word = self.pick(_WORDS)
        return [
            (
                f"pytest {test} -q",
                "4 passed in 0.31s",
                f"FAILED {test}::test_{word} - "
                "AssertionError: assert 3 == 4\n1 failed, 3 passed in 0.42s",
            ),
            (
                f"pytest {test} -q -k {word}",
                "1 passed in 0.12s",
                f"FAILED {test}::test_{word} - KeyError: 'currency'\n1 failed in 0.20s",
            ),
            (
                f"mypy services/{svc}/src/{svc}/{layer}",
                "Success: no issues found",
                f"{src}:42: "
                'error: Argument 1 to "apply" has incompatible type "str"; expected "int"  '
                "[arg-type]\nFound 1 error in 1 file",
            ),
            (
                f"ruff check {src}",
                "All checks passed!",
                f"{src}:10:5: F841 Local variable "
                "`exc` is assigned to but never used\nFound 1 error.",
            ),
            (f"git diff {src}", f"diff --git a/{src} b/{src}\n+    return value", ""),
            ("git status --short", f" M {src}", ""),
            (f'git add {src} && git commit -m "{svc}: fix {word}"', "[main 3f2a9c1] fix", ""),
            (f'grep -rn "def {word}" services/{svc}/src', f"{src}:12:def {word}():", ""),
            (f"ls services/{svc}/src/{svc}/{layer}", "__init__.py", ""),
            (
                f"python -m {svc}.cli migrate --dry-run",
                "ok",
                "Traceback (most recent call "
                f'last):\n  File "cli.py", line 3\nModuleNotFoundError: No module named '
                f"'{svc}.migrations'",
            ),
            (f"docker compose logs --tail 50 {svc}", "started", ""),
            (
                f"npm test --prefix web -- {word}.test.tsx",
                "Tests: 3 passed",
                "npm ERR! Test failed.  See above for more details.",
            ),
        ]

    def _command(self) -> tuple[str, str, int]:
        if not self.runs or self.rng.random() < 0.3:  # a new command, else one run before
            self.runs.append(self.pick(self._commands()))
        command, ok, bad = self.pick(self.runs)
        if bad and self.rng.random() < 0.15:
            return command, bad, 1
        return command, ok, 0

    def _call(self) -> tuple[str, dict[str, Any], str]:
        r = self.rng.random()
        if r < 0.35:
            path = f"{_ROOT}/{self.pick(self.src + self.tests)}"
            return "read_file", {"path": path}, json.dumps({"content": self._code(path)})
        if r < 0.45:
            hits = "\n".join(f"{p}:{i}: {self.pick(_WORDS)}" for i, p in enumerate(self.src))
            return (
                "search_files",
                {"pattern": self.pick(_WORDS), "path": f"services/{self.svc}"},
                hits,
            )
        if r < 0.57:
            path = f"{_ROOT}/{self.pick(self.src)}"
            args = {"path": path, "old_string": "return value", "new_string": "return value + 1"}
            return "patch", args, json.dumps({"success": True})
        if r < 0.62:  # a file rewritten whole, now and then a new one
            new = f"{self.pick(self.src).removesuffix('.py')}_v2.py"
            path = f"{_ROOT}/{new if self.rng.random() < 0.3 else self.pick(self.src)}"
            return (
                "write_file",
                {"path": path, "content": self._code(path)},
                '{"bytes_written": 2000}',
            )
        command, output, code = self._command()
        output = "\n".join([output] * 3)
        return "terminal", {"command": command}, json.dumps({"output": output, "exit_code": code})

    def step(self) -> None:
        calls, results = [], []
        for _ in range(1 if self.rng.random() < 0.75 else self.rng.randint(2, 3)):
            name, args, content = self._call()
            self.calls += 1
            cid = f"call_{self.calls}"
            function = {"name": name, "arguments": json.dumps(args)}
            calls.append({"id": cid, "type": "function", "function": function})
            results.append({"role": "tool", "tool_call_id": cid, "name": name, "content": content})
        note = self.pick(["", "Checking that.", f"Looking at {self.pick(self.src)} next."])
        self.messages.append({"role": "assistant", "content": note, "tool_calls": calls})
        self.messages.extend(results)


def make_session(turns: int, seed: int = 1) -> list[Message]:
    """A deterministic session of ``turns`` assistant steps (see the module docstring)."""
    session = _Session(seed)
    done = 0
    while done < turns:
        session.task()
        for _ in range(min(session.rng.randint(5, 12), turns - done)):
            session.step()
            done += 1
        session.messages.append({"role": "assistant", "content": "Done: the tests pass now."})
    return session.messages


# --------------------------------------------------------------------------- main


def _gen_transcript(turns: int, data_dir: Path, skip: bool) -> list[Message] | None:
    path = data_dir / f"t{turns}.json"
    if not path.exists():
        if skip:
            print(f"skipped gen_transcript {turns:,} turns: {path} is missing")
            return None
        print(f"generating {path} (about a minute) ...", flush=True)
        part = path.with_name(path.name + ".part")
        script = REPO / "bench" / "gen_transcript.py"
        command = [sys.executable, str(script), "--seed", "1", "--turns", str(turns)]
        subprocess.run([*command, "--out", str(part)], check=True, stdout=subprocess.DEVNULL)
        os.replace(part, path)
    data: list[Message] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _pct(kept: int, total: int) -> str:
    return f"{kept}/{total} {100.0 * kept / total:.0f}%" if total else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="*", default=[150, 300, 500, 1000])
    parser.add_argument("--gen-turns", type=int, nargs="*", default=[150, 1000])
    parser.add_argument("--contexts", type=int, nargs="+", default=[32_000, 128_000])
    parser.add_argument("--data-dir", type=Path, default=REPO / "bench" / "out")
    parser.add_argument("--skip-generate", action="store_true")
    args = parser.parse_args()

    sets: list[tuple[str, list[Message]]] = []
    for name in SAMPLES:
        text = (REPO / "tests" / "data" / "transcripts" / f"{name}.json").read_text()
        sets.append((f"sample {name.split('-')[1]}", json.loads(text)))
    args.data_dir.mkdir(parents=True, exist_ok=True)
    for turns in args.gen_turns:
        if (data := _gen_transcript(turns, args.data_dir, args.skip_generate)) is not None:
            sets.append((f"gen_transcript {turns}", data))
    sets += [(f"make_session {t}", make_session(t)) for t in args.turns]

    header = (
        f"{'transcript':<22}{'window':>8}{'paths':>14}{'edited':>12}{'commands':>14}"
        f"{'failed':>11}{'last':>9}{'compact':>9}{'budget':>8}{'ledger':>8}{'prose/budget':>14}"
    )
    print(header)
    print("-" * len(header))
    good = True
    for label, messages in sets:
        for context in args.contexts:
            row = measure(label, messages, context)
            s = row.shares
            good = good and row.ok()
            print(
                f"{label:<22}{context:>8,}{_pct(*s['paths']):>14}{_pct(*s['edited']):>12}"
                f"{_pct(*s['commands']):>14}{_pct(*s['failed']):>11}{_pct(*s['last']):>9}"
                f"{row.compact:>9,}{row.budget:>8,}{row.ledger:>8,}"
                f"{row.prose:>7,}/{row.prose_budget:<6,}{'' if row.ok() else ' FAIL'}"
            )
    print("\nkept in the summary; compact = the least a grouped rendering of the reference needs")
    print(f"targets: {', '.join(FULL)} 100%; paths and commands >= 95% when compact <= budget")
    print("all targets met" if good else "FAIL: a target was missed")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
