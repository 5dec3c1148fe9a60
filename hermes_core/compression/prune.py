"""Phase 1 of compression: prune old tool results without an LLM (spec 10 §4 Phase 1).

Tool output is most of a coding transcript and the cheapest thing to shrink: an old file dump
or test log can become one line (``[terminal] ran `pytest` -> exit 1, FAILED: 3 failed``) that
still tells the agent what happened. Pure: the input is never mutated, every changed message
is a new dict whose original is returned in ``replaced`` (the archive invariant), and only
contents and call arguments change, never the call/result pairing. Each pass is O(n).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from hermes_core.compression.images import strip_historical_images
from hermes_core.compression.references import ArchiveRefs, tagger
from hermes_core.transcript.validation import tool_call_ids

__all__ = [
    "DUPLICATE_NOTE",
    "PASS_NAMES",
    "TRUNCATED_MARK",
    "PruneFn",
    "PruneResult",
    "proactive_prune",
    "prune_tool_results",
    "shrink_arguments",
]

#: (tool_name, arguments, result, max_chars) -> replacement line, or None to keep the result.
PruneFn = Callable[[str, Mapping[str, Any], str, int], "str | None"]
Cost = Callable[[Mapping[str, Any]], int]

DUPLICATE_NOTE: Final = "[Duplicate tool output — same content as a more recent call]"
TRUNCATED_MARK: Final = "...[truncated]"
PASS_NAMES: Final = ("dedup", "summaries", "arguments", "tail", "images")
DEDUP_MIN_CHARS: Final = 200
ARGUMENTS_MAX_CHARS: Final = 500
ARGUMENT_VALUE_CHARS: Final = 200
TAIL_PRESSURE_FACTOR: Final = 1.5


@dataclass
class PruneResult:
    """The pruned transcript, the originals of what changed, and per-pass counts.

    ``passes`` counts changed messages, except ``images``, which counts image parts stripped.
    """

    messages: list[dict[str, Any]]
    replaced: dict[int, dict[str, Any]]
    passes: dict[str, int]


class _Edits:
    """The output under construction; a change copies the message and archives the original."""

    def __init__(
        self, source: Sequence[Mapping[str, Any]], *, images: bool, refs: ArchiveRefs | None
    ) -> None:
        self.source = source
        self.passes = dict.fromkeys(PASS_NAMES, 0)
        self.tag = tagger(refs)  # index -> " [ref R]" naming the original's row, or ""
        if images:
            stripped = strip_historical_images(source, tag=self.tag)
            self.messages, self.replaced, self.passes["images"] = stripped
        else:
            self.messages = cast("list[dict[str, Any]]", list(source))
            self.replaced = {}

    def put(self, i: int, message: dict[str, Any], pass_name: str) -> None:
        self.replaced.setdefault(i, cast("dict[str, Any]", self.source[i]))
        self.messages[i] = message
        self.passes[pass_name] += 1

    def result(self) -> PruneResult:
        return PruneResult(self.messages, self.replaced, self.passes)


def _role(msg: object) -> object:
    return msg.get("role") if isinstance(msg, dict) else None


def _result_text(msg: object) -> str | None:
    """A tool result's text when its content is a string or only well-formed text parts.

    Mixed content (an image that is kept) and malformed parts are left for the validator.
    """
    if _role(msg) != "tool":
        return None
    content = cast("dict[str, Any]", msg).get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list) or not content:
        return None
    texts: list[str] = []
    for part in content:
        if not (isinstance(part, dict) and part.get("type") == "text"):
            return None
        text = part.get("text")
        if not isinstance(text, str):
            return None
        texts.append(text)
    return "\n".join(texts)


def _answered_calls(messages: Sequence[Mapping[str, Any]]) -> dict[int, tuple[str, Any]]:
    """Tool message index -> (function name, raw arguments) of the call it answers.

    A forward pass, so a reused call id resolves to the latest call before the result.
    """
    current: dict[str, tuple[str, Any]] = {}
    found: dict[int, tuple[str, Any]] = {}
    for i, msg in enumerate(messages):
        role = _role(msg)
        if role == "assistant" and isinstance(msg.get("tool_calls"), list):
            for call in msg["tool_calls"]:
                cid = call.get("id") if isinstance(call, dict) else None
                if not (isinstance(cid, str) and cid):
                    continue
                function = call.get("function")
                function = function if isinstance(function, dict) else {}
                name = function.get("name")
                current[cid] = (name if isinstance(name, str) else "", function.get("arguments"))
        elif role == "tool":
            cid = msg.get("tool_call_id")
            if isinstance(cid, str) and cid in current:
                found[i] = current[cid]
    return found


def _parsed_arguments(raw: Any) -> dict[str, Any]:
    """A fresh dict of the call's arguments ({} unless they are a JSON object)."""
    try:
        if isinstance(raw, Mapping):  # a host that stores arguments parsed
            raw = json.dumps(raw, default=str)
        parsed = json.loads(raw) if isinstance(raw, str) else None
    except (TypeError, ValueError, RecursionError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


@dataclass(frozen=True)
class _Summarizer:
    """Turns one long tool result into the pruner's line, or declines."""

    calls: Mapping[int, tuple[str, Any]]  # tool message index -> (name, raw arguments)
    prune: PruneFn
    min_chars: int
    max_chars: int

    def line_for(self, i: int, msg: object) -> str | None:
        """The replacement for message ``i``; None when it is no long result, or the pruner
        declines, fails or would not save anything. A pruner's exception never propagates."""
        text = _result_text(msg)
        if text is None or len(text) <= self.min_chars or text.startswith(DUPLICATE_NOTE):
            return None
        if len(text) <= self.max_chars and "\n" not in text:
            return None  # already one line no summary could beat
        name, raw_arguments = self.calls.get(i, ("", None))
        try:
            line = self.prune(name, _parsed_arguments(raw_arguments), text, self.max_chars)
        except Exception:  # noqa: BLE001 - a broken pruner keeps the original result
            return None
        if not isinstance(line, str) or not line.strip() or self.max_chars < 1:
            return None
        if len(line) > self.max_chars:
            line = line[: self.max_chars - 1] + "…"
        return line if len(line) < len(text) else None


# --- the passes ---------------------------------------------------------------------------------


def _dedup(edits: _Edits, protect_from: int, min_chars: int, skip: range = range(0)) -> None:
    """Pass 1: older copies of a result (``min_chars``+) become a note; the newest is kept."""
    seen: set[str] = set()  # Python hashes each string once; equal hashes are then compared
    for i in range(len(edits.messages) - 1, -1, -1):
        text = _result_text(edits.messages[i])
        if text is None or len(text) < min_chars:
            continue
        if text not in seen:
            seen.add(text)
        elif i < protect_from and i not in skip:
            note = DUPLICATE_NOTE + edits.tag(i)
            edits.put(i, {**edits.messages[i], "content": note}, "dedup")


def _edited(protect_from: int, skip: range) -> list[int]:
    """The indices a pass may change: those before the tail, less the skipped span."""
    return [i for i in range(protect_from) if i not in skip]


def _summaries(
    edits: _Edits, summarizer: _Summarizer, protect_from: int, skip: range = range(0)
) -> None:
    """Pass 2: each long result before the tail becomes the pruner's one line."""
    for i in _edited(protect_from, skip):
        line = summarizer.line_for(i, edits.messages[i])
        if line is not None:
            edits.put(i, {**edits.messages[i], "content": line + edits.tag(i)}, "summaries")


def _cut_strings(value: Any, mark: str) -> Any:
    if isinstance(value, str):
        if len(value) <= ARGUMENT_VALUE_CHARS:
            return value
        return value[:ARGUMENT_VALUE_CHARS] + mark
    if isinstance(value, dict):
        return {key: _cut_strings(item, mark) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut_strings(item, mark) for item in value]
    return value


def shrink_arguments(raw: object, tag: str = "") -> str | None:
    """Arguments over 500 chars with long string values cut; None unless the result is a
    shorter JSON object with the same keys (anything else is left alone). ``tag`` (a
    `` [ref R]``) follows each cut's mark inside the string, so the JSON stays valid."""
    if not isinstance(raw, str) or len(raw) <= ARGUMENTS_MAX_CHARS:
        return None
    try:
        parsed = json.loads(raw)
        if not isinstance(parsed, dict):
            return None
        cut = _cut_strings(parsed, TRUNCATED_MARK + tag)
        try:
            shrunk = json.dumps(cut, ensure_ascii=False)
            shrunk.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates from \ud800-style escapes
            shrunk = json.dumps(cut)
        again = json.loads(shrunk)
    except (ValueError, RecursionError):
        return None
    if not isinstance(again, dict) or again.keys() != parsed.keys():
        return None
    return shrunk if len(shrunk) < len(raw) else None


def _arguments(edits: _Edits, protect_from: int, skip: range = range(0)) -> None:
    """Pass 3: oversized call arguments before the tail keep their keys, lose their bulk."""
    for i in _edited(protect_from, skip):
        msg = edits.messages[i]
        calls = msg.get("tool_calls") if _role(msg) == "assistant" else None
        if not isinstance(calls, list):
            continue
        new_calls: list[Any] = []
        changed = False
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            shrunk = (
                shrink_arguments(function.get("arguments"), edits.tag(i))
                if isinstance(function, dict)
                else None
            )
            if shrunk is None:
                new_calls.append(call)
                continue
            new_calls.append(
                {**call, "function": {**cast("dict[str, Any]", function), "arguments": shrunk}}
            )
            changed = True
        if changed:
            edits.put(i, {**msg, "tool_calls": new_calls}, "arguments")


def _newest_round_start(messages: Sequence[object]) -> int:
    """Index of the last assistant message with tool calls (its results are the newest round)."""
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        if _role(msg) == "assistant" and tool_call_ids(cast("dict[str, Any]", msg)):
            return i
    return len(messages)


def _cost_of(cost: Cost, msg: object) -> int:
    return cost(msg) if isinstance(msg, Mapping) else 0


def _tail_pressure(
    edits: _Edits, summarizer: _Summarizer, protect_from: int, budget: int, cost: Cost
) -> None:
    """Pass 4: a tail over 1.5x its budget demotes bulky results, oldest first, until it fits.

    Never the newest round (results after the last assistant with calls), never user text.
    """
    messages = edits.messages
    total = sum(_cost_of(cost, messages[i]) for i in range(protect_from, len(messages)))
    if total <= budget * TAIL_PRESSURE_FACTOR:
        return
    for i in range(protect_from, _newest_round_start(messages)):
        if total <= budget:
            return
        line = summarizer.line_for(i, messages[i])
        if line is None:
            continue
        before = _cost_of(cost, messages[i])
        edits.put(i, {**messages[i], "content": line + edits.tag(i)}, "tail")
        total -= before - _cost_of(cost, messages[i])


# --- entry points --------------------------------------------------------------------------------


def prune_tool_results(
    messages: Sequence[Mapping[str, Any]],
    *,
    protect_from: int,
    prune: PruneFn,
    min_prune_chars: int = 200,
    tail_budget_tokens: int | None = None,
    cost: Cost | None = None,
    max_summary_chars: int = 300,
    skip: range = range(0),
    refs: ArchiveRefs | None = None,
) -> PruneResult:
    """Phase 1: strip historical images, then dedup, one-line summaries and argument cuts
    before ``protect_from``, then tail pressure when ``tail_budget_tokens`` and ``cost`` are
    given. Messages from ``protect_from`` on are the protected tail.

    ``skip`` is a span nobody will read in pruned form (a middle the fallback summarises from
    the originals): its messages still count as newer copies for dedup but are not edited,
    which saves a JSON parse of every tool result in it. ``refs``: the store rows of the
    input, named in each stand-in (compression/references.py)."""
    protect_from = max(0, min(protect_from, len(messages)))
    edits = _Edits(messages, images=True, refs=refs)
    summarizer = _Summarizer(_answered_calls(messages), prune, min_prune_chars, max_summary_chars)
    _dedup(edits, protect_from, DEDUP_MIN_CHARS, skip)
    _summaries(edits, summarizer, protect_from, skip)
    _arguments(edits, protect_from, skip)
    if tail_budget_tokens is not None and cost is not None:
        _tail_pressure(edits, summarizer, protect_from, tail_budget_tokens, cost)
    return edits.result()


def proactive_prune(
    messages: Sequence[Mapping[str, Any]],
    *,
    protect_from: int,
    prune: PruneFn,
    cost: Cost,
    min_result_chars: int = 8000,
    min_reclaim_tokens: int = 4096,
    max_summary_chars: int = 300,
    refs: ArchiveRefs | None = None,
) -> PruneResult | None:
    """Phase 1 alone, early (spec 10 §8): dedup and summaries on results over
    ``min_result_chars`` only; None unless that reclaims ``min_reclaim_tokens`` (by ``cost``),
    so a host does not churn its prompt cache for a few tokens."""
    protect_from = max(0, min(protect_from, len(messages)))
    edits = _Edits(messages, images=False, refs=refs)
    summarizer = _Summarizer(_answered_calls(messages), prune, min_result_chars, max_summary_chars)
    _dedup(edits, protect_from, max(DEDUP_MIN_CHARS, min_result_chars + 1))
    _summaries(edits, summarizer, protect_from)
    reclaimed = sum(
        cost(original) - _cost_of(cost, edits.messages[i]) for i, original in edits.replaced.items()
    )
    return edits.result() if edits.replaced and reclaimed >= min_reclaim_tokens else None
