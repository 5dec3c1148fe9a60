"""Drive a real hermes-agent ``ContextCompressor`` as its agent loop does (child side).

Runs under a reference's private venv (bench/_hermes_refs.py makes it): stdlib plus the
installed ``agent`` package only. Usage: ``python hermes_ref_driver.py VERSION TRANSCRIPT WINDOW
STUB_URL [SECONDS_PER_REQUEST]`` with VERSION ``0.19`` or ``0.22``. The compressor's clock is
simulated (30 s a request by default, as ours' in session_cost.py), so 0.22's 300 s anti-thrash
probe and no-op backoff see the hours a real session takes, not the seconds a replay takes.

Line-delimited JSON on stdin/stdout, one request a line: ``{"op": "prepare", "usage": N|null,
"append": [i, ...]}`` (the last request's billed prompt, then the transcript messages the host
appended since) answers ``{"sent": [...], "compactions": n}``; ``{"op": "close"}`` ends it. In
``sent``, an int is a transcript index (the message unchanged), ``[k, message]`` a message the
compressor made, first seen, and ``[k]`` that message again.

The loop rules are each version's, read from its ``agent/turn_context*.py``,
``agent/conversation_loop.py``, ``agent/turn_preflight*.py`` and
``agent/conversation_compression.py``: a turn-start preflight (up to 3 passes), a pre-API check
before every request (3 attempts a turn, shared with the post-tool check in 0.22), a post-tool
check on the last real count, and after a compaction the bookkeeping the loop's compress wrapper
does (the -1 sentinel, the rough estimate, awaiting real usage, ``record_completed_compaction``).
0.22 measures pressure on its usage anchor (the last real prompt plus a rough count of what was
appended since, reply included: its completion tokens) and never defers an anchored figure. The
system prompt stays outside the list, as in the agent.
No tool schemas are sent (the transcripts carry none).
"""

from __future__ import annotations

import json
import sys
import time
import urllib.request
from types import SimpleNamespace
from typing import Any

import agent.context_compressor as cc
from agent.model_metadata import estimate_messages_tokens_rough, estimate_request_tokens_rough

try:  # the loop wrapper's "the compacted list keeps a real user turn" repair
    from agent.conversation_compression import _ensure_compressed_has_user_turn as _keep_user
except ImportError:  # pragma: no cover - both pinned versions have it
    _keep_user = None
try:  # 0.22: the just-delivered reply stays live across a compaction
    from agent.conversation_compression_reply_anchor import (
        _ensure_compressed_keeps_last_assistant_reply as _keep_reply,
    )
except ImportError:  # 0.19 has no such guard
    _keep_reply = None

Message = dict[str, Any]
MAX_ATTEMPTS = 3


def _wire(message: Message) -> Message:
    return {k: v for k, v in message.items() if not str(k).startswith("_")}


def _key(message: Message) -> str:
    return json.dumps(_wire(message), sort_keys=True, ensure_ascii=False, default=str)


def patch_summariser(url: str) -> None:
    """Send the compressor's summary request to the bench stub (its usage is what is billed)."""

    def call_llm(**kw: Any) -> Any:
        body = json.dumps({"model": "stub", "messages": kw["messages"]}).encode()
        headers = {"Content-Type": "application/json"}
        request = urllib.request.Request(f"{url}/chat/completions", body, headers)
        with urllib.request.urlopen(request, timeout=120) as response:
            data = json.loads(response.read())
        text = data["choices"][0]["message"]["content"]
        message = SimpleNamespace(role="assistant", content=text, tool_calls=None)
        choice = SimpleNamespace(index=0, message=message, finish_reason="stop")
        usage = SimpleNamespace(**data["usage"])
        return SimpleNamespace(choices=[choice], usage=usage, model="stub", id="stub")

    cc.call_llm = call_llm  # type: ignore[attr-defined]


class Clock:
    """The ``time`` module as the compressor sees it: wall and monotonic time advance only when
    the replay says a request went by; everything else is the real module."""

    def __init__(self) -> None:
        self._wall, self._mono, self.elapsed = time.time(), time.monotonic(), 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)

    def time(self) -> float:
        return self._wall + self.elapsed

    def monotonic(self) -> float:
        return self._mono + self.elapsed


def patch_clock() -> Clock:
    """Point the compressor modules' ``time`` at a simulated clock."""
    clock = Clock()
    for name in ("agent.context_compressor", "agent.context_compressor_prellm"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "time", None) is time:
            module.time = clock  # type: ignore[attr-defined]
    return clock


class Loop:
    """One session: the host's list, the compressor, and the loop's per-request checks."""

    def __init__(self, version: str, transcript: list[Message], window: int) -> None:
        self.v22 = version == "0.22"
        self.transcript, self.system = transcript, str(transcript[0].get("content") or "")
        self.c = cc.ContextCompressor(model="gpt-4o", config_context_length=window, quiet_mode=True)
        self.messages: list[Message] = []
        self.compactions = self.attempts = 0
        self.turn_start = self.calls = False
        self.anchor: tuple[int, int] | None = None  # (billed prompt, list length then)
        self.summary_fallbacks = 0

    # --- the host's side -----------------------------------------------------------------

    def append(self, message: Message) -> None:
        self.messages.append(message)
        if message.get("role") == "user":
            self.turn_start = True
        elif message.get("role") == "assistant":
            self.calls = bool(message.get("tool_calls"))

    def usage(self, tokens: int) -> None:
        self.c.update_from_response(
            {"prompt_tokens": tokens, "completion_tokens": 0, "total_tokens": tokens}
        )
        self.anchor = (tokens, len(self.messages))

    def prepare(self) -> list[Message]:
        if self.calls and not self.turn_start:
            self._post_tool()
        if self.turn_start:
            self.attempts = 0
            self._preflight()
        self._pre_api()
        self.turn_start = self.calls = False
        return self.messages

    # --- counts ----------------------------------------------------------------------------

    def _anchored(self) -> int | None:
        """0.22's anchored count: real prompt + rough delta (reply included); None if stale."""
        if not self.v22 or self.anchor is None:
            return None
        prompt, base = self.anchor
        return prompt + estimate_messages_tokens_rough(self.messages[base:])

    def _request_rough(self) -> int:
        return estimate_request_tokens_rough(self.messages, system_prompt=self.system)

    def _api_rough(self) -> int:
        """The pre-API estimate over the assembled request (system message included)."""
        api = [{"role": "system", "content": self.system}, *self.messages]
        return estimate_messages_tokens_rough(api)

    # --- the loop's checks -------------------------------------------------------------------

    def _post_tool(self) -> None:
        """After a tool round: the real count (0.22: anchored; nothing while awaiting usage)."""
        c = self.c
        if self.v22 and c.awaiting_real_usage_after_compression:
            return
        anchored = self._anchored()
        if anchored is not None:
            real = anchored
        elif c.last_prompt_tokens > 0:
            real = c.last_prompt_tokens
        elif c.last_prompt_tokens == -1:
            real = 0
        else:
            real = estimate_request_tokens_rough(self.messages)
        if self.v22 and self.attempts >= MAX_ATTEMPTS:
            return
        if c.should_compress(real):
            self.attempts += self.v22
            self._compress(c.last_prompt_tokens if not self.v22 else real)

    def _preflight(self) -> None:
        """At a turn's start: the request estimate, deferral, up to 3 passes."""
        c = self.c
        gate = len(self.messages) > c.protect_first_n + c.protect_last_n + 1
        if not gate and estimate_messages_tokens_rough(self.messages) < c.threshold_tokens:
            return
        anchored = self._anchored()
        tokens = anchored if anchored is not None else self._request_rough()
        deferred = anchored is None and c.should_defer_preflight_to_real_usage(tokens)
        if not deferred:
            if self.v22:
                c.maybe_seed_preflight_display_tokens(tokens)
            elif c.last_prompt_tokens >= 0 and tokens > c.last_prompt_tokens:
                c.last_prompt_tokens = tokens
        if deferred or not c.should_compress(tokens):
            return
        for _ in range(MAX_ATTEMPTS):
            rows, before = len(self.messages), tokens
            if not self._compress(tokens):
                break
            tokens = self._request_rough()  # the anchor is gone after a rewrite
            if not (len(self.messages) < rows or tokens < before * 0.95):
                break
            if not c.should_compress(tokens):
                break
            if self.v22 and not (tokens >= c.threshold_tokens and tokens < before * 0.95):
                break

    def _pre_api(self) -> None:
        """Before each request (0.22: a gate re-checked after each compaction)."""
        c, last = self.c, None
        while self.attempts < MAX_ATTEMPTS and len(self.messages) > 1:
            anchored = self._anchored()
            pressure = anchored if anchored is not None else self._api_rough()
            if self.v22 and anchored is None and not c.awaiting_real_usage_after_compression:
                pressure = max(pressure, int(c.last_real_prompt_tokens or 0))
            if last is not None and pressure >= c.threshold_tokens and not pressure < last * 0.95:
                return  # 0.22: insufficient progress, no more passes this turn
            defer = anchored is None and c.should_defer_preflight_to_real_usage(pressure)
            if defer or not c.should_compress(pressure):
                return
            self.attempts += 1
            changed = self._compress(pressure)
            if not (self.v22 and changed):
                return
            last = pressure

    def _compress(self, approx: int) -> bool:
        """The loop's compress wrapper: an aborted or no-op candidate changes nothing; else the
        0.22 reply guard, the user-turn repair, then the post-compaction bookkeeping."""
        c, before = self.c, self.messages
        new = c.compress(before, current_tokens=approx)
        if getattr(c, "_last_compress_aborted", False) and self.v22:
            return False
        if not new or new == before:
            if self.v22 and callable(noted := getattr(c, "_record_structural_no_op", None)):
                noted("compaction returned the transcript unchanged (no_progress)")
            return False
        progress = bool(getattr(c, "_last_compression_made_progress", False))
        fallback = bool(getattr(c, "_last_summary_fallback_used", False))
        skipped = bool(getattr(c, "_last_feasibility_skip", False))
        if self.v22 and _keep_reply is not None:
            _keep_reply(before, new, session_id="")
        if _keep_user is not None:
            _keep_user(before, new)
        self.messages, self.anchor, self.compactions = new, None, self.compactions + 1
        c.last_compression_rough_tokens = self._request_rough()
        c.last_prompt_tokens, c.last_completion_tokens = -1, 0
        c.awaiting_real_usage_after_compression = True
        self.summary_fallbacks += fallback
        if progress:
            extra = {"feasibility_skip": skipped} if self.v22 else {}
            c.record_completed_compaction(used_fallback=fallback, **extra)
        return True


class Encoder:
    """Sent lists as transcript indices where unchanged, stable ids for the compressor's own."""

    def __init__(self, transcript: list[Message]) -> None:
        self.transcript = transcript
        self._known: dict[str, int] = {}  # wire key -> transcript index
        self._made: dict[str, int] = {}  # wire key -> id of a compressor-made message
        self._by_id: dict[int, tuple[Message, Any]] = {}  # kept alive: ids are never reused

    def appended(self, index: int) -> Message:
        message = self.transcript[index]
        self._known.setdefault(_key(message), index)
        self._by_id[id(message)] = (message, index)
        return message

    def encode(self, messages: list[Message]) -> list[Any]:
        out: list[Any] = []
        for m in messages:
            hit = self._by_id.get(id(m))
            if hit is None or hit[0] is not m:
                key = _key(m)
                if key in self._known:
                    code: Any = self._known[key]
                elif key in self._made:
                    code = [self._made[key]]
                else:
                    self._made[key] = len(self._made)
                    out.append([self._made[key], _wire(m)])
                    self._by_id[id(m)] = (m, [self._made[key]])
                    continue
                hit = self._by_id[id(m)] = (m, code)
            out.append(hit[1])
        return out


def main() -> int:
    version, path, window, url = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    step = float(sys.argv[5]) if len(sys.argv) > 5 else 30.0
    with open(path, encoding="utf-8") as f:
        transcript = json.load(f)
    patch_summariser(url)
    clock = patch_clock()
    loop, encoder = Loop(version, transcript, window), Encoder(transcript)
    out = sys.stdout
    out.write(json.dumps({"ready": True, "threshold": loop.c.threshold_tokens}) + "\n")
    out.flush()
    for line in sys.stdin:
        command = json.loads(line)
        if command["op"] == "close":
            break
        if command.get("usage") is not None:
            loop.usage(int(command["usage"]))
        for index in command.get("append", ()):
            loop.append(encoder.appended(index))
        clock.elapsed += step
        sent = encoder.encode(loop.prepare())
        reply = {"sent": sent, "compactions": loop.compactions, "fallbacks": loop.summary_fallbacks}
        out.write(json.dumps(reply, ensure_ascii=False) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
