"""A loopback fake of the Mem0 platform REST API and an OpenAI-compatible embeddings endpoint.

Only what ``mem0.MemoryClient`` (2.x) sends for our calls is implemented: ping, add, search,
get, update, delete, delete all of a user. ``/v1/embeddings`` returns a hashed bag of words
(texts that share words are near) for Mem0's local mode. Every request is recorded; faults
are injected by setting ``fault`` to 401, 429, 500, ``"delay"`` (held until the fault is
cleared) or ``"malformed"``.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from loopback import QuietHandler, Recorded, json_or_text, read_raw, send, serve, stop

DIMS = 64
_WORD = re.compile(r"\w+", re.UNICODE)


def embed(text: str, dims: int = DIMS) -> list[float]:
    vector = [0.0] * dims
    for word in _WORD.findall(text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[int.from_bytes(digest[:4], "big") % dims] += 1.0
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0:
        vector[0], norm = 1.0, 1.0
    return [v / norm for v in vector]


def matches(query: str, text: str) -> int:
    """How many query words of 3+ characters occur in ``text`` (case-insensitive)."""
    words = {w for w in _WORD.findall(query.lower()) if len(w) >= 3}
    lowered = text.lower()
    return sum(1 for w in words if w in lowered)


@dataclass
class FakeMem0:
    api_key: str = "m0-test-key-not-a-secret"
    memories: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    fault: int | str | None = None
    ignore_filters: bool = False  # a buggy server that leaks other users' records
    release: threading.Event = field(default_factory=threading.Event)
    url: str = ""
    _server: ThreadingHTTPServer | None = None

    # --- lifecycle ---------------------------------------------------------------------

    def start(self) -> FakeMem0:
        fake = self

        class Handler(QuietHandler):
            def _any(self) -> None:
                fake._handle(self)

            do_GET = do_POST = do_PUT = do_DELETE = _any

        self._server = serve(Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        return self

    def stop(self) -> None:
        self.release.set()
        stop(self._server)

    def set_fault(self, fault: int | str | None) -> None:
        self.fault = fault
        if fault == "delay":
            self.release.clear()
        else:
            self.release.set()

    def paths(self, method: str | None = None) -> list[str]:
        return [r.path for r in self.requests if method is None or r.method == method]

    def seed(self, user_id: str, text: str) -> str:
        memory_id = str(uuid.uuid4())
        self.memories[memory_id] = {"id": memory_id, "memory": text, "user_id": user_id}
        return memory_id

    # --- handling ----------------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        body = json_or_text(read_raw(handler))
        path = handler.path
        self.requests.append(Recorded(handler.command, path, dict(handler.headers.items()), body))
        if self.fault == "delay":
            self.release.wait(30)
        elif isinstance(self.fault, int):
            return send(handler, self.fault, {"detail": f"injected {self.fault}"})
        elif self.fault == "malformed":
            return send(handler, 200, b'{"results": [ this is not json')
        route = path.split("?", 1)[0]
        if route.startswith("/v1/embeddings"):
            return self._embeddings(handler, body)
        if route.startswith("/v1/chat/completions"):
            answer = {"choices": [{"message": {"role": "assistant", "content": "{}"}}]}
            return send(handler, 200, answer)
        if handler.headers.get("Authorization") != f"Token {self.api_key}":
            return send(handler, 401, {"detail": "Invalid API key"})
        if route == "/v1/ping/":
            return send(handler, 200, {"status": "ok", "org_id": "o", "project_id": "p"})
        if route == "/v3/memories/add/" and handler.command == "POST":
            return self._add(handler, body)
        if route == "/v3/memories/search/" and handler.command == "POST":
            return self._search(handler, body)
        if route == "/v1/memories/" and handler.command == "DELETE":
            return self._delete_all(handler, path)
        found = re.fullmatch(r"/v1/memories/([^/]+)/", route)
        if found:
            return self._one(handler, found.group(1), body)
        return send(handler, 404, {"detail": f"no route {route}"})

    def _delete_all(self, handler: BaseHTTPRequestHandler, path: str) -> None:
        """``DELETE /v1/memories/?user_id=...``: every memory matching all the filters given
        (the platform refuses a call without one)."""
        from urllib.parse import parse_qs, urlsplit

        query = {k: v[0] for k, v in parse_qs(urlsplit(path).query).items()}
        scope = {k: query[k] for k in ("user_id", "agent_id", "run_id") if k in query}
        if not scope:
            return send(handler, 400, {"detail": "at least one filter is required"})
        for memory_id, record in list(self.memories.items()):
            if all(record.get(k) == v for k, v in scope.items()):
                del self.memories[memory_id]
        return send(handler, 200, {"message": "Memories deleted successfully!"})

    def _add(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        filters = body.get("filters") or {}
        user_id = filters.get("user_id") or body.get("user_id")
        if not valid_entity_id(user_id):
            return send(handler, 400, {"detail": "user_id required, without whitespace"})
        results = []
        for message in body.get("messages", []):
            memory_id = str(uuid.uuid4())
            record = {
                "id": memory_id,
                "memory": message["content"],
                "user_id": user_id,
                "agent_id": filters.get("agent_id") or body.get("agent_id"),
                "metadata": body.get("metadata"),
            }
            self.memories[memory_id] = record
            results.append({"id": memory_id, "memory": message["content"], "event": "ADD"})
        return send(handler, 200, {"results": results})

    def _search(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        user_id = (body.get("filters") or {}).get("user_id")
        if not valid_entity_id(user_id):
            return send(handler, 400, {"detail": "filters.user_id required, without whitespace"})
        hits = []
        for record in list(self.memories.values()):
            if record["user_id"] != user_id and not self.ignore_filters:
                continue
            score = matches(body.get("query", ""), record["memory"])
            if score:
                hits.append({**record, "score": score / 10})
        hits.sort(key=lambda r: -r["score"])
        return send(handler, 200, {"results": hits[: int(body.get("top_k") or 10)]})

    def _one(self, handler: BaseHTTPRequestHandler, memory_id: str, body: Any) -> None:
        record = self.memories.get(memory_id)
        if record is None:
            return send(handler, 404, {"detail": "Memory not found"})
        if handler.command == "GET":
            return send(handler, 200, record)
        if handler.command == "PUT":
            record["memory"] = body["text"]
            return send(handler, 200, {"id": memory_id, "memory": body["text"]})
        if handler.command == "DELETE":
            del self.memories[memory_id]
            return send(handler, 200, {"message": "Memory deleted successfully!"})
        return send(handler, 405, {"detail": "method not allowed"})

    def _embeddings(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": embed(text)}
            for i, text in enumerate(texts)
        ]
        usage = {"prompt_tokens": 1, "total_tokens": 1}
        answer = {"object": "list", "data": data, "model": body.get("model"), "usage": usage}
        return send(handler, 200, answer)


def valid_entity_id(value: object) -> bool:
    """Mem0's rule for user and agent ids (its local mode trims them and refuses any inner
    whitespace): the fake refuses what would be trimmed, so an id must reach it canonical."""
    return isinstance(value, str) and bool(value) and not any(c.isspace() for c in value)
