"""A stand-in for a real model provider: an OpenAI chat-completions server on 127.0.0.1.

It behaves like a provider where it matters to a host: it counts the prompt it receives
(tiktoken o200k) and reports it in ``usage``, refuses a prompt larger than its window with the
error text real providers send ("maximum context length is N tokens"), and answers with tool
calls. Its answers are scripted from the user's last message, so the example is repeatable:

* ``remember: TEXT``  -> calls ``memory`` (add to the user profile), then says it saved it;
* ``search: WORDS``   -> calls ``session_search``, then reports how many sessions matched;
* ``read: PATH``      -> calls the host's own ``read_file`` tool, then reports the file's size;
* anything else       -> a plain text reply.

Requests for the model named ``summariser`` get a structured summary (the compressor's
sections), as a small auxiliary model would write one.
"""

from __future__ import annotations

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import hermes_core as hc

_CALL_IDS = itertools.count(1)  # tool call ids, unique across a session

SUMMARY = """## Goal
Work through the user's files and remember what the user asked to keep.
## Constraints & Preferences
The user asked to keep answers short.
## Completed Actions
Read several project files and answered questions about them.
## Active State
The conversation continues with the next file.
## Blocked
Nothing.
## Key Decisions
None recorded.
## Resolved Questions
None.
## Historical Pending Asks
None."""


class LoopbackModel:
    """The server; ``base_url`` is ``http://127.0.0.1:<port>/v1``."""

    def __init__(self, *, context_length: int) -> None:
        self.context_length = context_length
        self.prompt_tokens: list[int] = []  # every main-model request, as counted here
        self.refused = 0
        self.summaries = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        messages = request.get("messages") or []
        prompt = hc.count_tokens(messages)
        if request.get("model") == "summariser":
            with self._lock:
                self.summaries += 1
            return 200, _completion({"role": "assistant", "content": SUMMARY}, prompt)
        with self._lock:
            self.prompt_tokens.append(prompt)
            if prompt > self.context_length:
                self.refused += 1
                text = (
                    f"This model's maximum context length is {self.context_length} tokens. "
                    f"However, your messages resulted in {prompt} tokens."
                )
                return 400, {"error": {"message": text, "type": "invalid_request_error"}}
        return 200, _completion(_reply(messages), prompt)


def _reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":  # explain what the tool showed, as models do at length
        first_line = str(last.get("content") or "").splitlines()[:1]
        explanation = " ".join(
            f"Handler {n} answers its request with status code {n} and nothing else."
            for n in range(20)
        )
        return {"role": "assistant", "content": f"Read {first_line}. {explanation}"}
    text = str(last.get("content") or "").split("\n\n<memory-context>")[0]
    for prefix, tool, arguments in (
        ("remember: ", "memory", lambda rest: {"action": "add", "target": "user", "content": rest}),
        ("search: ", "session_search", lambda rest: {"query": rest}),
        ("read: ", "read_file", lambda rest: {"path": rest}),
    ):
        if text.startswith(prefix):
            call = {
                "id": f"call_{next(_CALL_IDS)}",  # unique, as a real model's are
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(arguments(text[len(prefix) :]))},
            }
            return {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"role": "assistant", "content": f"Noted: {text[:60]}"}


def _completion(message: dict[str, Any], prompt: int) -> dict[str, Any]:
    completion = hc.count_tokens(str(message.get("content") or ""))
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def _handler(model: LoopbackModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            status, body = model.answer(json.loads(self.rfile.read(length) or b"{}"))
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
