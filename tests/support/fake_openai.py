"""A real loopback server speaking OpenAI chat completions, with scripted answers and faults.

Use it as a context manager (or the ``fake_llm`` fixture from this folder's conftest)::

    with FakeLLM() as llm:
        llm.script(answer("## Goal\\nShip it."), http_error(503), hang(1.0), disconnect())
        endpoint = ChatEndpoint(llm.base_url, "aux-model", timeout=0.2)

Each request to ``POST /v1/chat/completions`` (or another path in ``llm.routes``) takes the
next step from the script, then asks ``llm.responder`` (a function of the recorded request,
for a scripted *agent* model that answers what it is sent), then ``llm.default``; every
request is recorded in ``llm.requests``. Delays wait on an event that
``close()`` sets, so a test never waits for a sleeping handler.
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

StepKind = Literal["answer", "raw", "disconnect", "truncated"]


@dataclass(frozen=True)
class Step:
    """One scripted response."""

    kind: StepKind
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    delay: float = 0.0


@dataclass
class Recorded:
    """One request as the server saw it (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    json: Any = None

    @property
    def text(self) -> str:
        return self.raw.decode("utf-8", "replace")


def answer(
    content: Any = "OK",
    *,
    finish_reason: str | None = "stop",
    model: str = "fake-model",
    usage: dict[str, int] | None = None,
    delay: float = 0.0,
) -> Step:
    """A normal completion whose first choice carries ``content`` (``None`` allowed)."""
    payload = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return Step("answer", body=json.dumps(payload).encode(), delay=delay)


def raw(
    body: str | bytes,
    *,
    status: int = 200,
    content_type: str = "application/json",
    delay: float = 0.0,
) -> Step:
    """Exactly ``body``, e.g. broken JSON or JSON without ``choices``."""
    data = body.encode() if isinstance(body, str) else body
    return Step("raw", status=status, body=data, content_type=content_type, delay=delay)


def call(name: str, arguments: dict[str, Any] | str, call_id: str = "c1") -> dict[str, Any]:
    """One OpenAI tool call as a server sends it (arguments as JSON text)."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def tool_calls(*calls: Any, content: Any = None, finish_reason: str = "tool_calls") -> Step:
    """A completion whose message asks for ``calls`` (any shape: malformed ones too)."""
    payload = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "tool_calls": list(calls)},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return raw(json.dumps(payload))


def http_error(status: int, message: str | None = None) -> Step:
    """An HTTP error with an OpenAI-style error body."""
    text = message or f"fake error {status}"
    return raw(
        json.dumps({"error": {"message": text, "type": "fake", "code": status}}), status=status
    )


def hang(seconds: float, then: Step | None = None) -> Step:
    """Wait ``seconds`` before answering (to trip a client's read timeout)."""
    step = then or answer()
    return Step(step.kind, step.status, step.body, step.content_type, delay=seconds)


def disconnect() -> Step:
    """Read the request, then close the connection without a response."""
    return Step("disconnect")


def truncated() -> Step:
    """Send headers promising a body, a few bytes of it, then close (a broken stream)."""
    return Step("truncated", body=b'{"choices": [{"mess')


@dataclass
class _State:
    steps: deque[Step] = field(default_factory=deque)
    requests: list[Recorded] = field(default_factory=list)
    default: Step = field(default_factory=answer)
    responder: Callable[[Recorded], Step] | None = None
    routes: set[str] = field(default_factory=lambda: {"/v1/chat/completions"})
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request log lines."""

    def do_POST(self) -> None:
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length else b""
        try:
            parsed = json.loads(data) if data else None
        except ValueError:
            parsed = None
        headers = {key.lower(): value for key, value in self.headers.items()}
        recorded = Recorded("POST", self.path, headers, data, parsed)
        with state.lock:
            routed = self.path.split("?")[0].rstrip("/") in state.routes
            state.requests.append(recorded)
            responder = None
            if not routed:
                step = http_error(404, f"no route {self.path}")
            elif state.steps:
                step = state.steps.popleft()
            elif state.responder is not None:
                responder = state.responder
            else:
                step = state.default
        if responder is not None:  # outside the lock: a responder may be slow or raise
            try:
                step = responder(recorded)
            except Exception as exc:  # a broken responder is a 500 the test sees
                step = http_error(500, f"responder failed: {exc!r}")
        if step.delay and state.stop.wait(step.delay):
            self.close_connection = True
            return
        if step.kind == "disconnect":
            self.close_connection = True
            return
        self.send_response(step.status)
        self.send_header("Content-Type", step.content_type)
        if step.kind == "truncated":
            self.send_header("Content-Length", "4096")
            self.end_headers()
            self.wfile.write(step.body)
            self.wfile.flush()
            self.close_connection = True
            return
        self.send_header("Content-Length", str(len(step.body)))
        self.end_headers()
        self.wfile.write(step.body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: _State) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (timeout tests) is expected; stay quiet."""


class FakeLLM:
    """The server; ``base_url`` is ``http://127.0.0.1:<port>/v1``."""

    def __init__(self) -> None:
        self._state = _State()
        self._server = _Server(self._state)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[Recorded]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def default(self) -> Step:
        return self._state.default

    @default.setter
    def default(self, step: Step) -> None:
        self._state.default = step

    @property
    def responder(self) -> Callable[[Recorded], Step] | None:
        return self._state.responder

    @responder.setter
    def responder(self, function: Callable[[Recorded], Step] | None) -> None:
        self._state.responder = function

    def add_route(self, path: str) -> None:
        """Answer ``POST path`` too (e.g. ``/v1/responses``)."""
        with self._state.lock:
            self._state.routes.add(path.rstrip("/"))

    def script(self, *steps: Step) -> None:
        """Queue responses, answered in order."""
        with self._state.lock:
            self._state.steps.extend(steps)

    def pending(self) -> int:
        """Scripted steps not used yet."""
        with self._state.lock:
            return len(self._state.steps)

    def close(self) -> None:
        self._state.stop.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def unused_port() -> int:
    """A loopback port with nothing listening (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
