"""What bench/session_cost.py replays with: the token meter, the stub summariser, the reference.

- :class:`Meter`: o200k ids of each message, counted once (by object, then by canonical JSON),
  with the project counter's framing, and a request's cached prefix against the previous one.
- :class:`StubServer`: a loopback OpenAI chat-completions server answering every request with
  one ~2,000-token stub summary and the usage it cost.
- :class:`Reference`: a model of hermes-agent 0.19.0's ``ContextCompressor`` defaults and of
  the agent-loop checks that call it (``agent/context_compressor.py``,
  ``agent/conversation_loop.py``, ``agent/turn_context.py``), written from its behaviour. Where
  its wording matters only by its size (one-line tool summaries, the summariser template, the
  summary prefix), ours stands in, padded to the reference's measured token counts.
"""

from __future__ import annotations

import json
import threading
import urllib.request
import zlib
from array import array
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from hermes_core.compression.assemble import END_MARKER, SUMMARY_PREFIX
from hermes_core.compression.images import strip_historical_images
from hermes_core.compression.prompts import first_prompt, update_prompt
from hermes_core.compression.prune import DUPLICATE_NOTE, shrink_arguments
from hermes_core.compression.serialize import serialize_turns
from hermes_core.compression.tool_summaries import summarize_tool_result
from hermes_core.tokens import (
    DEFAULT_IMAGE_TOKENS,
    MESSAGE_OVERHEAD,
    REPLY_PRIMING,
    TOOL_CALL_OVERHEAD,
    default_loader,
)

Message = dict[str, Any]
OPEN, CLOSE, CALL, IMAGE = 300_000, 300_001, 300_002, 400_000  # framing ids above the vocab
IMAGE_PARTS = ("image_url", "input_image", "image")
STUB_TOKENS = 2_000
# hermes-agent 0.19.0, measured in o200k tokens: its summary prefix, its summariser prompt
# without turns (first, update) and its auto focus paragraph without the user's words
REF_PREFIX_TOKENS, REF_FRAME_TOKENS, REF_FOCUS_TOKENS = 345, (1_077, 1_202), 114
FOCUS = "\n\nFOCUS TOPIC (most of the summary budget goes to it): "


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def role(m: Message) -> str:
    return str(m.get("role"))


class Meter:
    """o200k ids of each message, counted once; what each request costs with caching."""

    def __init__(self) -> None:
        self.encode = default_loader().encoding("o200k_base").encode_ordinary
        self._by_id: dict[int, tuple[Message, array[int]]] = {}
        self._by_key: dict[str, array[int]] = {}
        self.breakpoints = False  # the cache model of bill()

    def ids(self, message: Message) -> array[int]:
        """One message's ids; equal messages share one array (so ``is`` compares them)."""
        hit = self._by_id.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        wire = {k: v for k, v in message.items() if not k.startswith("_")}
        key = json.dumps(wire, sort_keys=True, ensure_ascii=False, default=str)
        ids = self._by_key.get(key)
        if ids is None:
            ids = self._by_key[key] = self.measure(message)
        self._by_id[id(message)] = (message, ids)  # kept alive, so ids are never reused
        return ids

    def measure(self, message: Message) -> array[int]:
        """Ids counted as ``hermes_core.tokens.message_tokens`` counts them with tiktoken (the
        lengths agree on every message of the generated transcripts): framing, role, content,
        each call's name and arguments, other fields as text."""
        out = array("i", [OPEN] * (MESSAGE_OVERHEAD - 1))
        for key, value in message.items():
            if key.startswith("_") or value is None:
                continue
            if key == "content" and isinstance(value, list):
                for part in value:
                    kind = part.get("type") if isinstance(part, dict) else None
                    if kind in IMAGE_PARTS:
                        seed = zlib.crc32(_text(part).encode()) % 100_000
                        out.extend([IMAGE + seed] * DEFAULT_IMAGE_TOKENS)
                    elif kind in ("text", "input_text", "output_text") and "text" in part:
                        out.extend(self.encode(part["text"]))
                    else:
                        out.extend(self.encode(_text(part)))
            elif key == "tool_calls":
                for call in value:
                    function = call.get("function") or {}
                    out.extend([CALL] * TOOL_CALL_OVERHEAD)
                    out.extend(self.encode(_text(function.get("name") or "")))
                    out.extend(self.encode(_text(function.get("arguments") or "")))
            elif key == "content" or isinstance(value, (str, list, dict)):
                out.extend(self.encode(_text(value)))
        out.append(CLOSE)
        return out

    def total(self, messages: Iterable[Message]) -> int:
        return sum(len(self.ids(m)) for m in messages) + REPLY_PRIMING

    def bill(self, sent: list[Message], before: list[array[int]]) -> tuple[int, int, int, list]:
        """(prompt tokens, cached tokens, messages cached whole, ids) of one request; ``before``
        is the previous request's ids. Leading equal messages match whole; the first pair that
        differs is compared token by token, then the prefix ends. With ``breakpoints`` (an
        Anthropic host marking the system prompt and the newest message) a request reads the
        whole previous request when it extends it, else only the system prompt."""
        seqs = [self.ids(m) for m in sent]
        if self.breakpoints:
            pairs = enumerate(zip(before, seqs, strict=False))
            whole = next((i for i, (a, b) in pairs if a is not b), min(len(before), len(seqs)))
            if before and whole >= len(before):
                return sum(map(len, seqs)) + REPLY_PRIMING, sum(map(len, before)), whole, seqs
            system = len(seqs[0]) if whole >= 1 else 0
            return sum(map(len, seqs)) + REPLY_PRIMING, system, whole, seqs
        cached = whole = 0
        for a, b in zip(before, seqs, strict=False):
            if a is b:
                cached, whole = cached + len(a), whole + 1
                continue
            lo, hi = 0, min(len(a), len(b))
            while lo < hi:  # the longest common prefix, slices compared in C
                mid = (lo + hi + 1) // 2
                lo, hi = (mid, hi) if a[:mid] == b[:mid] else (lo, mid - 1)
            cached += lo
            break
        return sum(map(len, seqs)) + REPLY_PRIMING, cached, whole, seqs


def filler(tokens: int) -> str:
    """Neutral text of exactly ``tokens`` o200k tokens (each `` note`` is one)."""
    return " note" * max(0, tokens)


def stub_summary(encode: Callable[[str], list[int]]) -> str:
    """~2,000 tokens under the summary's section headings, the same for every request."""
    heads = ["Goal", "Constraints & Preferences", "Completed Actions", "Active State", "Blocked"]
    heads += ["Key Decisions", "Resolved Questions", "Historical Pending Asks", "Relevant Files"]
    lines: list[str] = []
    while len(encode("\n".join(lines))) < STUB_TOKENS:
        k = len(lines)
        if k % 12 == 0:
            lines.append(f"\n## {heads[(k // 12) % len(heads)]}")
        lines.append(
            f"{k + 1}. Read lib/module_{k}.py and fixed parse_{k}() for empty input; "
            f"tests/test_module_{k}.py passes (12 tests) after the change."
        )
    return "\n".join(lines).strip()


class StubServer:
    """Loopback ``POST /v1/chat/completions``: the stub, and ``usage`` with the o200k count of
    the messages received; ``used`` sums requests, prompt and completion tokens."""

    def __init__(self, meter: Meter) -> None:
        self.stub = stub_summary(meter.encode)
        self.used = [0, 0, 0]
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt = sum(len(meter.measure(m)) for m in body["messages"]) + REPLY_PRIMING
                done = len(meter.encode(server.stub))
                server.used = [server.used[0] + 1, server.used[1] + prompt, server.used[2] + done]
                choice = {"message": {"role": "assistant", "content": server.stub}}
                reply = {
                    "id": "stub",
                    "object": "chat.completion",
                    "model": body.get("model", "stub"),
                    "choices": [{"index": 0, **choice, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": prompt, "completion_tokens": done},
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._http.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def complete(self, messages: list[Message]) -> str:
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            json.dumps({"model": "stub", "messages": messages}).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return str(json.loads(response.read())["choices"][0]["message"]["content"])

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()


# --------------------------------------------------------------------------- the reference


def _content_text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _has_text(m: Message) -> bool:
    return bool(_content_text(m.get("content")).strip())


def _calls(m: Message) -> list[dict[str, Any]]:
    return list(m.get("tool_calls") or [])


def _user(m: Message) -> bool:
    """A real user turn (not a summary the reference made)."""
    return role(m) == "user" and "_summary" not in m


class Reference:
    """hermes-agent 0.19.0's compressor at its defaults, driven as its agent loop drives it.

    The loop: before each request its rough count (``len(str(message))`` / 4, images 1,500,
    plus the system prompt) is checked, up to three passes at a turn's start, unless its rule
    defers to real usage (right after a compaction, or within max(4,096, 5%) tokens of a count
    that fit); after a response with tool calls, the real prompt count is checked too. The
    system prompt lives outside the list and never changes. Two compactions in a row that leave
    the real count over the threshold block it.
    """

    name = "reference"
    PROTECT_FIRST, PROTECT_LAST, TAIL_FLOOR, MIN_THRESHOLD = 3, 20, 8, 64_000

    def __init__(self, system: Message, window: int, stub: StubServer, meter: Meter) -> None:
        pct = 0.75 if window < 512_000 else 0.50  # 0.50, raised under 512K windows
        self.threshold = max(int(window * pct), self.MIN_THRESHOLD)
        if self.threshold >= window:
            self.threshold = int(window * 0.85)
        self.budget, self.window, self.stub = int(self.threshold * 0.20), window, stub
        self.system, self.messages = system, list[Message]()
        self.counts = {"compressed": 0, "pruned": 0}
        self.previous: str | None = None
        self.last_prompt = self.last_real = self.fit_rough = self.after_rough = 0
        self.awaiting = self.verify = self.calls = self.turn_start = False
        self.ineffective = 0
        self._sizes: dict[int, tuple[Message, int, int, int]] = {}
        self.prefix = SUMMARY_PREFIX + filler(REF_PREFIX_TOKENS - len(meter.encode(SUMMARY_PREFIX)))
        ours = (first_prompt("", 2_000), update_prompt("", "", 2_000))
        sizes = [len(meter.encode("".join(m["content"] for m in p))) for p in ours]
        self.frame = [n - size for n, size in zip(REF_FRAME_TOKENS, sizes, strict=True)]
        self.focus_pad = REF_FOCUS_TOKENS - len(meter.encode(FOCUS + "\n"))

    # --- the host's calls --------------------------------------------------------------------

    def append(self, message: Message) -> None:
        self.messages.append(message)
        self.turn_start = self.turn_start or role(message) == "user"
        if role(message) == "assistant":
            self.calls = bool(message.get("tool_calls"))

    def prepare(self) -> list[Message]:
        if self.calls and self.last_prompt > 0 and self._due(self.last_prompt):
            self._compress()  # the loop's check of the last response's real count
        for _ in range(3 if self.turn_start else 1):
            rough = self._rough(self.messages)
            if self._defer(rough) or not self._due(rough) or not self._compress():
                break
        self.turn_start = False
        return [self.system, *self.messages]

    def usage(self, tokens: int) -> None:
        self.last_prompt = self.last_real = tokens
        if tokens < self.threshold:
            if self.awaiting and self.after_rough:
                self.fit_rough = self.after_rough
            self.ineffective = 0
        else:
            self.fit_rough = 0
            self.ineffective += self.verify
        self.verify = self.awaiting = False

    def end_turn(self) -> None:
        pass

    def close(self) -> None:
        pass

    # --- its counts and triggers -------------------------------------------------------------

    def _size(self, m: Message) -> tuple[int, int, int]:
        """(characters and images of the rough count, chars/4 + 10 of the tail walks)."""
        hit = self._sizes.get(id(m))
        if hit is None or hit[0] is not m:
            content, shadow, images = m.get("content"), dict(m), 0
            if isinstance(content, list):
                image = [isinstance(p, dict) and p.get("type") in IMAGE_PARTS for p in content]
                images = sum(image)
                shadow["content"] = [
                    {"type": p["type"], "image": "[stripped]"} if is_image else p
                    for p, is_image in zip(content, image, strict=True)
                ]
                length = len(_content_text(content)) + images * 6_400
            else:
                length = len(content) if isinstance(content, str) else len(str(content or ""))
            walk = length // 4 + 10 + sum(len(str(c)) // 4 for c in m.get("tool_calls") or [])
            hit = self._sizes[id(m)] = (m, len(str(shadow)), images, walk)
        return hit[1], hit[2], hit[3]

    def _rough(self, messages: list[Message]) -> int:
        sizes = [self._size(m) for m in messages]
        chars = (sum(s[0] for s in sizes) + 3) // 4 + (len(self.system["content"]) + 3) // 4
        return chars + DEFAULT_IMAGE_TOKENS * sum(s[1] for s in sizes)

    def _due(self, tokens: int) -> bool:
        return tokens >= self.threshold and self.ineffective < 2

    def _defer(self, rough: int) -> bool:
        if rough < self.threshold or self.awaiting:
            return rough >= self.threshold
        baseline = self.fit_rough or self.after_rough
        if not 0 < self.last_real < self.threshold or baseline <= 0:
            return False
        if rough - baseline > max(4096, int(self.threshold * 0.05)):
            return False
        self.fit_rough = max(baseline, rough)
        return True

    # --- one compaction ----------------------------------------------------------------------

    def _prune(self, msgs: list[Message]) -> list[Message]:
        """Dedup everywhere; one-liners and argument cuts before the protected tail (the tail
        budget, at least 20 messages)."""
        n, acc, boundary = len(msgs), 0, len(msgs)
        for i in range(n - 1, -1, -1):
            tokens = self._size(msgs[i])[2]
            if acc + tokens > self.budget and n - i >= min(self.PROTECT_LAST, n):
                boundary = i  # the message that overflows is still protected
                break
            acc, boundary = acc + tokens, i
        boundary = n - max(n - boundary, min(self.PROTECT_LAST, n))
        calls = {
            c.get("id"): c.get("function") or {} for m in msgs for c in m.get("tool_calls") or []
        }
        out, seen = list(msgs), set()
        for i in range(n - 1, -1, -1):
            content = msgs[i].get("content")
            if role(msgs[i]) == "tool" and isinstance(content, str) and len(content) >= 200:
                if content in seen:
                    out[i] = {**msgs[i], "content": DUPLICATE_NOTE}
                seen.add(content)
        for i in range(boundary):
            m, content = out[i], out[i].get("content")
            if role(m) == "tool" and isinstance(content, str) and len(content) > 200:
                if not content.startswith("[Duplicate tool output"):
                    fn = calls.get(m.get("tool_call_id"), {})
                    try:
                        args = json.loads(fn.get("arguments") or "{}")
                    except ValueError:
                        args = {}
                    args = args if isinstance(args, dict) else {}
                    line = summarize_tool_result(fn.get("name", "unknown"), args, content, 200)
                    out[i] = {**m, "content": line}
            elif role(m) == "assistant" and m.get("tool_calls"):
                new = [
                    {**c, "function": {**c["function"], "arguments": cut}}
                    if (cut := shrink_arguments(c.get("function", {}).get("arguments")))
                    else c
                    for c in m["tool_calls"]
                ]
                if any(a is not b for a, b in zip(new, m["tool_calls"], strict=True)):
                    out[i] = {**m, "tool_calls": new}
        return out

    @staticmethod
    def _forward(msgs: list[Message], i: int) -> int:
        while i < len(msgs) and role(msgs[i]) == "tool":
            i += 1
        return i

    @staticmethod
    def _backward(msgs: list[Message], i: int) -> int:
        if i <= 0 or i >= len(msgs):
            return i
        j = i - 1
        while j >= 0 and role(msgs[j]) == "tool":
            j -= 1
        return j if j >= 0 and role(msgs[j]) == "assistant" and msgs[j].get("tool_calls") else i

    def _walk(
        self, msgs: list[Message], head: int, budget: int, floor: int, *, soft: bool
    ) -> tuple[int, int]:
        """Back from the end; the message that overflows stays out of the soft walk and in the
        plain one (the reference's two walks differ there)."""
        n, acc, cut = len(msgs), 0, len(msgs)
        for i in range(n - 1, head - 1, -1):
            tokens = self._size(msgs[i])[2]
            if acc + tokens > budget and n - i >= floor:
                return (cut if soft else i), acc
            acc, cut = acc + tokens, i
        return cut, acc

    def _tail_cut(self, msgs: list[Message], head: int) -> int:
        """Up to 1.5 x the tail budget (the plain budget when everything fits that), at least 8
        messages, never inside a tool group, the last user and the last assistant that wrote
        text kept."""
        n = len(msgs)
        available = max(0, n - head - 1)
        floor = min(self.TAIL_FLOOR, max(3, available - 2), available) if available > 1 else 0
        cut, acc = self._walk(msgs, head, int(self.budget * 1.5), floor, soft=True)
        if cut <= head and acc > 0:
            cut = self._walk(msgs, head, self.budget, floor, soft=False)[0]
        cut = min(cut, n - floor)
        if cut <= head:
            cut = max(n - floor, head + 1)
        cut = self._backward(msgs, cut)
        users = [i for i in range(head, n) if _user(msgs[i])]
        if users and users[-1] < cut:
            user = users[-1]
            cut = max(user, head + 1)
            if cut > user:  # the user at the head's edge: summarise it with its reply
                pair = user + 1
                if pair < n and role(msgs[pair]) == "assistant":
                    pair = self._forward(msgs, pair + 1)
                cut = max(pair, head + 1)
        replies = [i for i in range(head, n) if role(msgs[i]) == "assistant"]
        texts = [i for i in replies if _has_text(msgs[i])]
        last = texts[-1] if texts else replies[-1] if replies else -1
        if 0 <= last < cut:
            cut = max(self._backward(msgs, last), head + 1)
        return self._forward(msgs, max(cut, head + 1))

    def _summarise(self, turns: list[Message], focus: list[str]) -> str:
        size = sum(self._size(m)[0] for m in turns) // 4
        budget = max(2_000, min(size // 5, int(self.window * 0.05), 10_000))
        text = serialize_turns(turns, max_chars=10**9, per_message_max=6_000)
        update = self.previous is not None
        prompt = update_prompt(self.previous or "", text, budget) if update else None
        prompt = prompt or first_prompt(text, budget)
        prompt[-1]["content"] += filler(self.frame[update])
        if focus:  # its auto focus: the newest user turns, quoted twice in the paragraph
            topic = "Recent user focus:\n" + "\n".join(f"- {f}" for f in focus)
            topic = topic if len(topic) <= 700 else topic[:699] + "…"
            prompt[-1]["content"] += f"{FOCUS}{topic}{filler(self.focus_pad)}\n{topic}"
        body = self.stub.complete(prompt)
        asks = [m for m in turns if _user(m) and _has_text(m)]
        if asks:  # the task snapshot it grounds on the newest real user turn
            ask = " ".join(_content_text(asks[-1]["content"]).split())[:1_400]
            snapshot = f"User asked (from compacted turns): {ask!r}"
            body = f"## Historical Task Snapshot\n{snapshot}\n\n{body}"
        return body

    def _compress(self) -> bool:
        msgs = self.messages
        head = 0 if self.counts["compressed"] or self.previous else self.PROTECT_FIRST
        if len(msgs) <= head + 4:
            self.ineffective += 1
            return False
        msgs = self._prune(msgs)
        start = self._forward(msgs, head)
        end = self._tail_cut(msgs, start)
        if start >= end:
            self.ineffective += 1
            return False
        turns = msgs[start:end]
        marks = [i for i in range(end) if "_summary" in msgs[i]]
        if marks:  # an earlier summary in the window: only the turns after it
            turns = msgs[max(start, marks[-1] + 1) : end]
        else:
            self.previous = None
        users = [m for m in msgs if _user(m) and _has_text(m)]
        focus = [" ".join(_content_text(m["content"]).split())[:260] for m in users[-3:]]
        self.previous = self._summarise(turns, focus)
        summary = f"{self.prefix}\n{self.previous}"
        last_head = role(msgs[start - 1]) if start else "user"
        first_tail = role(msgs[end]) if end < len(msgs) else "user"
        force_user = last_head == "system" or not any(
            role(m) == "user" for m in msgs[:start] + msgs[end:]
        )
        kind = "user" if last_head in ("assistant", "tool") or force_user else "assistant"
        merge = False
        if kind == first_tail:  # flip it, or merge it into the first tail message
            flipped = "assistant" if kind == "user" else "user"
            merge = flipped == last_head or force_user
            kind = kind if merge else flipped
        tail = [dict(m) for m in msgs[end:]]
        middle = [{"role": kind, "content": f"{summary}\n\n{END_MARKER}", "_summary": True}]
        if merge:
            old = _content_text(tail[0].get("content"))
            tail[0]["content"] = (
                f"[EARLIER CONTEXT, for reference]\n{old}\n\n[END OF EARLIER CONTEXT, SUMMARY "
                f"FOLLOWS]\n\n{summary}\n\n{END_MARKER}"
            )
            tail[0]["_summary"], middle = True, []
        out = [dict(m) for m in msgs[:start]] + middle + tail
        self.messages = strip_historical_images(self._sanitise(out))[0]
        self.counts["compressed"] += 1
        self.after_rough, self.last_prompt = self._rough(self.messages), -1
        self.awaiting = self.verify = True
        return True

    @staticmethod
    def _sanitise(msgs: list[Message]) -> list[Message]:
        """Drop results whose call is gone and calls whose result is gone."""
        calls = {c.get("id") for m in msgs for c in _calls(m)}
        results = {m.get("tool_call_id") for m in msgs if role(m) == "tool"}
        out = [m for m in msgs if role(m) != "tool" or m.get("tool_call_id") in calls]
        for i, m in enumerate(out):
            kept = [c for c in m.get("tool_calls") or [] if c.get("id") in results]
            if m.get("tool_calls") and len(kept) != len(m["tool_calls"]):
                rest = {k: v for k, v in m.items() if k != "tool_calls"}
                content = m.get("content") or "(tool call removed)"
                out[i] = {**m, "tool_calls": kept} if kept else {**rest, "content": content}
        return out
