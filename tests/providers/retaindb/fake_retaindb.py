"""A loopback fake of the RetainDB REST API the provider assumes, with fault injection.

In-memory records, case-insensitive keyword search (any query word of 3+ letters counts),
idempotency keys that drop repeated stores, every request recorded, and faults on demand:
an HTTP status, a delay, malformed JSON, "store then hang" (the write lands but the answer
never comes, as when the client dies before hearing back), and a leak mode that answers
every user's records to prove the client filters by owner itself.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from loopback import QuietHandler, Recorded, json_or_text, read_raw, send, serve, stop

_WORD = re.compile(r"\w{3,}")


@dataclass
class FakeRetainDB:
    api_key: str = "rdb-test-key-0000"
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    #: fault injection
    status: int | None = None
    status_count: int | None = None  # None: until cleared
    delay: float = 0.0
    malformed: bool = False
    store_then_hang: bool = False
    leak: bool = False

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._next_id = 1
        self._keys: dict[tuple[str, str], str] = {}
        self.duplicates = 0
        self.server: ThreadingHTTPServer | None = None

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeRetainDB:
        fake = self

        class Handler(_Handler):
            state = fake

        self.server = serve(Handler)
        return self

    def stop(self) -> None:
        self._release.set()
        stop(self.server)

    def heal(self) -> None:
        """Clear every fault and release requests that are waiting."""
        with self._lock:
            self.status = None
            self.status_count = None
            self.delay = 0.0
            self.malformed = False
            self.store_then_hang = False
            self.leak = False
            self._release.set()
            self._release = threading.Event()

    def fail(self, status: int, count: int | None = None) -> None:
        with self._lock:
            self.status, self.status_count = status, count

    # --- helpers for tests -------------------------------------------------------------------

    def contents(self, user_id: str | None = None) -> list[str]:
        """Stored contents in creation order (optionally for one user)."""
        with self._lock:
            return [
                r["content"]
                for r in self.records.values()
                if user_id is None or r["user_id"] == user_id
            ]

    def requests_to(self, method: str, path_prefix: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and r.path.startswith(path_prefix)]

    def add(self, user_id: str, content: str, project: str = "default") -> str:
        with self._lock:
            return self._store(
                {"user_id": user_id, "project": project, "content": content, "session_id": None}
            )["id"]

    # --- the API -----------------------------------------------------------------------------

    def _store(self, body: dict[str, Any]) -> dict[str, Any]:
        memory_id = f"mem_{self._next_id}"
        self._next_id += 1
        record = {
            "id": memory_id,
            "user_id": body["user_id"],
            "project": body["project"],
            "content": body["content"],
            "session_id": body.get("session_id"),
            "metadata": body.get("metadata") or {},
            "created_at": time.time(),
        }
        self.records[memory_id] = record
        return record

    def handle(self, request: Recorded) -> tuple[int, Any]:
        with self._lock:
            self.requests.append(request)
            release = self._release
            delay, malformed = self.delay, self.malformed
            if self.status is not None:
                status = self.status
                if self.status_count is not None:
                    self.status_count -= 1
                    if self.status_count <= 0:
                        self.status = self.status_count = None
                return status, {"error": f"injected {status}"}
        if delay:
            release.wait(delay)
        if request.headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, {"error": "bad api key"}
        if malformed:
            return 200, b"{not json"
        with self._lock:
            status, answer = self._route(request)
            hang = self.store_then_hang and request.method == "POST"
            release = self._release
        if hang and request.path == "/v1/memories":
            release.wait(30.0)
        return status, answer

    def _route(self, request: Recorded) -> tuple[int, Any]:
        method, path, body, query = request.method, request.path, request.body, request.query
        sent = body if isinstance(body, dict) else {}
        for name in ("user_id", "session_id"):
            value = sent.get(name, query.get(name))
            if value is not None and not (isinstance(value, str) and SAFE_ID.fullmatch(value)):
                # stricter than a server needs to be: the provider promises canonical ids
                return 422, {"error": f"{name} must be 1-128 of [a-z0-9_-]"}
        if method == "POST" and path == "/v1/memories":
            if not all(isinstance(body.get(k), str) for k in ("project", "user_id", "content")):
                return 422, {"error": "project, user_id and content are required"}
            key = body.get("idempotency_key")
            if key and (body["user_id"], key) in self._keys:
                self.duplicates += 1
                return 200, self.records[self._keys[(body["user_id"], key)]]
            record = self._store(body)
            if key:
                self._keys[(body["user_id"], key)] = record["id"]
            return 201, record
        if method == "DELETE" and path == "/v1/memories":
            user, project = query.get("user_id"), query.get("project")
            if not user or not project:
                return 422, {"error": "project and user_id are required"}
            gone = [
                k
                for k, r in self.records.items()
                if r["user_id"] == user and r["project"] == project
            ]
            for memory_id in gone:
                del self.records[memory_id]
            return 200, {"deleted": len(gone)}
        if method == "POST" and path == "/v1/search":
            words = set(_WORD.findall(str(body.get("query", "")).lower()))
            hits = [
                r
                for r in self.records.values()
                if (self.leak or (r["user_id"] == body.get("user_id")))
                and r["project"] == body.get("project")
                and any(w in r["content"].lower() for w in words)
            ]
            return 200, {"results": [dict(r, score=0.9) for r in hits[: body.get("limit", 10)]]}
        if path.startswith("/v1/memories/"):
            record = self.records.get(path.rsplit("/", 1)[1])
            if record is None:
                return 404, {"error": "not found"}
            if method == "GET":  # like a careless server: no owner check; the client must do it
                return 200, record
            if method == "DELETE":
                if record["user_id"] != query.get("user_id"):
                    return 404, {"error": "not found"}
                del self.records[record["id"]]
                return 200, {"deleted": True}
        if method == "GET" and path == "/v1/profile":
            mine = [
                r["content"] for r in self.records.values() if r["user_id"] == query.get("user_id")
            ]
            return 200, {
                "user_id": query.get("user_id"),
                "project": query.get("project"),
                "memory_count": len(mine),
                "recent": mine[-5:],
            }
        return 404, {"error": f"no route {method} {path}"}


#: the ids the provider sends (provider_kit.canonical_id: ``u-alice``, ``s_<hint>_<hash>``)
SAFE_ID = re.compile(r"[a-z0-9_-]{1,128}")


class _Handler(QuietHandler):
    state: FakeRetainDB

    def _serve(self) -> None:
        parts = urlsplit(self.path)
        raw = read_raw(self)
        parsed = json_or_text(raw) if raw else {}
        request = Recorded(
            method=self.command,
            path=parts.path,
            query={k: v[0] for k, v in parse_qs(parts.query).items()},
            headers={k.lower(): v for k, v in self.headers.items()},
            body=None if isinstance(parsed, str) else parsed,
        )
        status, answer = self.state.handle(request)
        send(self, status, answer)

    do_GET = do_POST = do_DELETE = _serve
