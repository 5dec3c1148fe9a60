"""What every provider fake needs from HTTP: a quiet handler, a recorded request, reading a
body, answering with JSON (or deliberately broken bytes), and a server on 127.0.0.1.

The four fakes (Honcho, Mem0, RetainDB, Supermemory) differ in their routes and faults only;
this is the plumbing they share.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["QuietHandler", "Recorded", "json_or_text", "read_raw", "send", "serve", "stop"]


@dataclass
class Recorded:
    """One request as the fake saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    query: dict[str, str] = field(default_factory=dict)


class QuietHandler(BaseHTTPRequestHandler):
    """No access log on stderr."""

    def log_message(self, format: str, *args: Any) -> None:
        return


def read_raw(handler: BaseHTTPRequestHandler) -> bytes:
    length = int(handler.headers.get("Content-Length") or 0)
    return handler.rfile.read(length) if length else b""


def json_or_text(raw: bytes) -> Any:
    """The parsed body; None when empty; the text itself when it is not JSON."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def send(handler: BaseHTTPRequestHandler, status: int, answer: Any) -> None:
    """Answer ``answer`` as JSON (``bytes`` are sent as they are, e.g. malformed JSON)."""
    if isinstance(answer, bytes):
        data = answer
    else:
        data = b"" if answer is None else json.dumps(answer).encode()
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    except OSError:
        pass  # the client gave up (timeout): nothing to answer


def serve(handler: type[BaseHTTPRequestHandler], poll: float = 0.05) -> ThreadingHTTPServer:
    """A started server on a free loopback port, on a daemon thread."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.block_on_close = False
    threading.Thread(target=server.serve_forever, args=(poll,), daemon=True).start()
    return server


def stop(server: ThreadingHTTPServer | None) -> None:
    if server is not None:
        server.shutdown()
        server.server_close()
