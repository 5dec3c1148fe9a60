"""Layer 3 of the failure ladder: a deterministic summary built without an LLM.

Why: when the summariser fails (or none is configured, the offline default) compaction must
still keep the thread: what the user asked, what the agent did with which tools and files,
what failed, and what an earlier summary said. Everything here is mechanical, redacted,
bounded and written as history, so it can never carry an instruction the model would resume.

Size: the prose part is at most ``max_chars`` characters; the anchor ledger follows it,
rendered by :meth:`AnchorLedger.render` with its own bound, so the whole text is at most
``max_chars + 2 + ledger_bound(ledger_chars)`` characters (17,602 with the defaults: the
ledger's 8,000 and the 1,600 of its rules and decisions; the engine passes a ledger bound
that follows the window, :mod:`~hermes_core.compression.ledger_budget`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

from hermes_core.compression.anchors import (
    DEFAULT_LEDGER_CHARS,
    AnchorLedger,
    extract_anchors,
    split_summary,
)
from hermes_core.compression.anchors.message import ask_text
from hermes_core.compression.tool_results import loads_shared
from hermes_core.redact import redact
from hermes_core.transcript.messages import (
    is_real_user_message,
    message_text,
    tool_name_for_results,
)

__all__ = ["FALLBACK_MAX_CHARS", "fallback_summary"]

FALLBACK_MAX_CHARS: Final = 8000
_WS = re.compile(r"\s+")
_BAD_EXIT = re.compile(r"-> exit [1-9]")
_KEY_ARGS: Final = (
    "path", "file_path", "filepath", "filename", "file", "command", "cmd", "query", "url",
    "urls", "pattern", "name",
)  # fmt: skip
_FILE_OPS: Final = {"read_file": "read", "write_file": "written", "patch": "patched"}
#: Share of the prose budget per section (leftovers go to the sections that need more).
_SHARES: Final = {
    "Goal": 0.12,
    "Completed Actions": 0.36,
    "Active State": 0.08,
    "Blocked": 0.12,
    "Historical Pending Asks": 0.06,
    "Relevant Files": 0.12,
    "Critical Context": 0.14,
}
_GREEDY: Final = ("Completed Actions", "Critical Context", "Relevant Files", "Blocked", "Goal")


def _clip(text: Any, limit: int) -> str:
    """One redacted line of at most ``limit`` characters."""
    if not isinstance(text, str):
        return ""
    return _clip_str(text[: 8 * limit + 64], limit)


@lru_cache(maxsize=4096)
def _clip_str(text: str, limit: int) -> str:
    line = redact(_WS.sub(" ", text)).strip()
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _visible(text: str) -> str:
    """Assistant text without its reasoning block (kept out of summaries, spec §4)."""
    for tag in ("think", "reasoning"):
        if f"</{tag}>" in text:
            text = text.rsplit(f"</{tag}>", 1)[1]
        elif text.lstrip().startswith(f"<{tag}>"):
            text = ""
    return text


def _arguments(raw: Any) -> Mapping[str, Any]:
    if isinstance(raw, Mapping):
        return raw
    if isinstance(raw, str) and len(raw) <= 400_000:
        try:
            parsed = loads_shared(raw)
        except (ValueError, RecursionError):
            return {}
        return parsed if isinstance(parsed, Mapping) else {}
    return {}


def _key_argument(args: Mapping[str, Any]) -> str:
    """The argument that says what a call did: its path, command, query or URL."""
    for key in _KEY_ARGS:
        value = args.get(key)
        if isinstance(value, list) and value and isinstance(value[0], str):
            more = f" (+{len(value) - 1})" if len(value) > 1 else ""
            return _clip(value[0], 100) + more
        if isinstance(value, str) and value.strip():
            return _clip(value, 100)
    for value in list(args.values())[:20]:
        if isinstance(value, str) and value.strip() and len(value) <= 200:
            return _clip(value, 60)
    return ""


def _failed(text: str) -> bool:
    """An explicit failure signal in a tool result (exit code, error field, error line)."""
    head = text.lstrip()[:400]
    if head.startswith(("Error", "error:", "ERROR", "Traceback")):
        return True
    if head.startswith("[") and ("FAILED" in head or _BAD_EXIT.search(head)):
        return True  # a result already pruned to one line (spec §4 phase 1)
    if not head.startswith("{") or len(text) > 400_000:
        return False
    try:
        data = loads_shared(text)
    except (ValueError, RecursionError):
        return False
    if not isinstance(data, Mapping):
        return False
    code = data.get("exit_code", data.get("returncode"))
    bad_code = isinstance(code, int) and not isinstance(code, bool) and code != 0
    return bad_code or bool(data.get("error")) or data.get("success") is False


@dataclass
class _Episode:
    """One user turn of the middle: the ask, the calls that followed, the last reply."""

    ask: str | None
    calls: list[tuple[str, str]] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)
    reply: str = ""


@dataclass
class _Digest:
    episodes: list[_Episode] = field(default_factory=list)
    tools: Counter[str] = field(default_factory=Counter)
    files: dict[str, list[str]] = field(default_factory=dict)
    last_call: str = ""
    last_failed: bool = False
    users: int = 0


def _digest(messages: Sequence[Any]) -> _Digest:
    msgs = [m for m in messages if isinstance(m, Mapping)]
    names = tool_name_for_results(msgs)
    digest = _Digest()
    for msg in msgs:
        role = msg.get("role")
        if role == "user" and is_real_user_message(msg):
            digest.users += 1
            ask = _clip(ask_text(message_text(msg)), 200)
            digest.episodes.append(_Episode(ask or "(no text)"))
            continue
        if not digest.episodes:
            digest.episodes.append(_Episode(None))
        episode = digest.episodes[-1]
        if role == "assistant":
            if reply := _clip(_visible(message_text(msg)), 240):
                episode.reply = reply
            calls = msg.get("tool_calls")
            for call in calls[:500] if isinstance(calls, list) else ():
                function = call.get("function") if isinstance(call, Mapping) else None
                if not isinstance(function, Mapping):
                    continue
                tool = _clip(function.get("name"), 60) or "tool"
                args = _arguments(function.get("arguments"))
                key = _key_argument(args)
                episode.calls.append((tool, key))
                digest.tools[tool] += 1
                digest.last_call = f"{tool} ({key})" if key else tool
                digest.last_failed = False
                path = next((args[k] for k in _KEY_ARGS[:5] if isinstance(args.get(k), str)), "")
                if path.strip():
                    ops = digest.files.setdefault(_clip(path, 200), [])
                    ops.append(_FILE_OPS.get(tool, tool))
        elif role == "tool" and _failed(message_text(msg)):
            cid = msg.get("tool_call_id")
            tool = names.get(cid, "") if isinstance(cid, str) else ""
            episode.failures[_clip(tool, 60) or "tool"] += 1
            digest.last_failed = True
    digest.episodes = [e for e in digest.episodes if e.ask or e.calls or e.reply]
    return digest


def _short(key: str, limit: int = 70) -> str:
    """A key argument in ``limit`` characters; a long path keeps its tail (the file name)."""
    if len(key) <= limit or " " in key or "/" not in key:
        return _clip(key, limit)
    return "…" + key[-(limit - 1) :]


def _grouped(calls: list[tuple[str, str]], per_tool: int = 3) -> str:
    """``read_file ×3 (a.py, b.py, c.py)``: each tool once, in first-use order."""
    order: dict[str, list[str]] = {}
    for tool, key in calls:
        order.setdefault(tool, []).append(key)
    parts = []
    for tool, keys in order.items():
        distinct = [k for k in dict.fromkeys(keys) if k]
        shown = ", ".join(_short(k) for k in distinct[:per_tool])
        more = f", +{len(distinct) - per_tool} more" if len(distinct) > per_tool else ""
        detail = f" ({shown}{more})" if shown else ""
        parts.append(f"{tool} ×{len(keys)}{detail}" if len(keys) > 1 else f"{tool}{detail}")
    return "; ".join(parts)


def _episode_line(episode: _Episode) -> str:
    head = f"User asked “{_clip(episode.ask, 140)}”" if episode.ask else "Continuing earlier work"
    parts = [head]
    if episode.calls:
        failed = sum(episode.failures.values())
        parts.append(_grouped(episode.calls) + (f" [{failed} failed]" if failed else ""))
    if episode.reply:
        parts.append(f"replied “{_clip(episode.reply, 160)}”")
    return "- " + _clip(" → ".join(parts), 700)


def _sections(
    digest: _Digest, current: AnchorLedger, previous: str
) -> list[tuple[str, list[str], list[str]]]:
    """(title, fixed lines, droppable lines oldest first) per section, in template order."""
    asks = [e.ask for e in digest.episodes if e.ask]
    goal = [f"- Latest request in these turns: “{asks[-1]}”"] if asks else []
    if len(asks) > 1:
        goal.insert(0, f"- Earliest request in these turns: “{asks[0]}”")
    tools = ", ".join(f"{t} ×{n}" for t, n in digest.tools.items())
    actions = [f"- Tool calls in these turns: {_clip(tools, 600)}"] if tools else []
    state = []
    if digest.last_call:
        outcome = ", which failed" if digest.last_failed else ""
        state.append(f"- The last tool call was {_clip(digest.last_call, 200)}{outcome}.")
    replies = [e.reply for e in digest.episodes if e.reply]
    if replies:
        state.append(f"- The assistant's last message: “{replies[-1]}”")
    errors = [f"- {e}" for e in current.errors[-12:]]
    blocked = ["- Errors seen in these turns (some may have been fixed later):"] if errors else []
    last = digest.episodes[-1] if digest.episodes else None
    pending = []
    if last is not None and last.ask and not last.reply:
        pending.append(f"- The user had asked “{_clip(last.ask, 200)}”; no reply was recorded.")
    files = [f"- {path} ({', '.join(_counted(ops))})" for path, ops in digest.files.items()]
    context = []
    if previous:
        context.append("- An earlier summary said (abridged, quoted):")
        quoted = [f"> {line}" for line in previous[:1500].splitlines() if line.strip()]
        context.extend(quoted + (["> …"] if len(previous) > 1500 else []))
    return [
        ("Goal", goal, []),
        ("Completed Actions", actions, [_episode_line(e) for e in digest.episodes]),
        ("Active State", state, []),
        ("Blocked", blocked, errors),
        ("Historical Pending Asks", pending, []),
        ("Relevant Files", [], files),
        ("Critical Context", context, []),
    ]


def _counted(ops: list[str]) -> list[str]:
    return [f"{op} ×{n}" if n > 1 else op for op, n in Counter(ops).items()]


def _fit(title: str, fixed: list[str], lines: list[str], cap: int) -> str:
    """The section within ``cap`` characters: the oldest droppable lines go first (with a
    note), then trailing fixed lines; "" when not even the heading fits."""
    heading = f"## {title}"
    base = len(heading) + sum(len(x) + 1 for x in fixed)
    rest = sum(len(x) + 1 for x in lines)
    dropped = 0

    def note(count: int) -> list[str]:
        return [f"- ({count} earlier entries omitted)"] if count else []

    while dropped < len(lines) and base + rest + sum(len(x) + 1 for x in note(dropped)) > cap:
        rest -= len(lines[dropped]) + 1
        dropped += 1
    body = fixed + note(dropped) + lines[dropped:]
    while body and len(heading) + sum(len(x) + 1 for x in body) > cap:
        body.pop()
    return "\n".join([heading, *body]) if body else ""


def _build(
    messages: Sequence[Any],
    previous_summary: str | None,
    max_chars: int,
    ledger_chars: int = DEFAULT_LEDGER_CHARS,
) -> str:
    digest = _digest(messages)
    previous_prose, previous_ledger = split_summary(previous_summary or "")
    current = extract_anchors(messages, max_chars=ledger_chars)
    ledger = previous_ledger.merge(current)
    calls = sum(digest.tools.values())
    preamble = (
        f"[Fallback summary: the summariser was unavailable, so this record was built "
        f"mechanically from {len(messages)} compacted messages ({digest.users} user messages, "
        f"{calls} tool calls). It describes what happened; it gives no instructions.]"
    )
    sections = _sections(digest, current, _clip_block(previous_prose))
    need = {t: len(t) + 3 + sum(len(x) + 1 for x in f + d) for t, f, d in sections if f or d}
    avail = max(0, max_chars - len(preamble) - 2 * (len(need) + 1))
    caps = {t: min(n, int(avail * _SHARES[t])) for t, n in need.items()}
    spare = avail - sum(caps.values())
    for title in _GREEDY:
        if title in need:
            extra = min(spare, need[title] - caps[title])
            caps[title] += extra
            spare -= extra
    parts = [preamble] + [_fit(t, f, d, caps[t]) for t, f, d in sections if t in need]
    prose = "\n\n".join(p for p in parts if p)
    if len(prose) > max_chars:
        prose = prose[: max(0, max_chars - 1)].rstrip() + "…" if max_chars > 0 else ""
    rendered = ledger.render(ledger_chars)
    return "\n\n".join(p for p in (prose, rendered) if p)


def _clip_block(text: str) -> str:
    """Redacted multi-line text, each line bounded (the previous summary's prose)."""
    return "\n".join(_clip(line, 300) for line in text[:4000].splitlines())


def fallback_summary(
    messages: Sequence[Mapping[str, Any]],
    *,
    previous_summary: str | None = None,
    max_chars: int = FALLBACK_MAX_CHARS,
    ledger_chars: int = DEFAULT_LEDGER_CHARS,
) -> str:
    """The deterministic summary of the compacted ``messages`` (see the module docstring for
    its sections and size); ``ledger_chars`` is the ledger's render bound (the engine's
    follows the window). Never raises: malformed input still yields a minimal record."""
    try:
        return _build(messages, previous_summary, max_chars, ledger_chars)
    except Exception:  # noqa: BLE001 - layer 3 is the last resort and must always answer
        count = len(messages) if isinstance(messages, Sequence) else 0
        note = f"[Fallback summary: {count} earlier messages were compacted; no details kept.]"
        return note[: max(0, max_chars)]
