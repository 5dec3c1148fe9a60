"""A loopback fake of the Honcho v3 REST API: just the endpoints the provider's SDK calls.

In-memory storage, case-insensitive keyword search (any query word of 3+ letters counts),
a record of every request, and faults on demand (401, 429, 500, a long delay, malformed
JSON). There is no deriver: a peer's representation is its explicit conclusions.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from loopback import QuietHandler, Recorded, json_or_text, read_raw, send, serve, stop

NOW = "2026-11-30T12:00:00Z"
_WORD = re.compile(r"\w{3,}", re.UNICODE)


@dataclass
class Fault:
    kind: str  # "401" | "429" | "500" | "delay" | "malformed"
    times: int | None = None  # None: until cleared
    path_contains: str = ""
    seconds: float = 30.0


@dataclass
class Store:
    workspaces: set[str] = field(default_factory=set)
    peers: dict[str, dict[str, Any]] = field(default_factory=dict)
    cards: dict[str, list[str]] = field(default_factory=dict)
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)
    conclusions: dict[str, dict[str, Any]] = field(default_factory=dict)


def keyword_match(query: str, text: str) -> bool:
    lower = text.lower()
    return any(word.lower() in lower for word in _WORD.findall(query))


def _filter_ok(filters: Any, item: dict[str, Any]) -> bool:
    if not filters:
        return True
    for key, wanted in filters.items():
        if key == "AND":
            if not all(_filter_ok(part, item) for part in wanted):
                return False
        elif key == "metadata":
            metadata = item.get("metadata") or {}
            if any(metadata.get(k) != v for k, v in wanted.items()):
                return False
        elif isinstance(wanted, dict) and "in" in wanted:
            if item.get(key) not in wanted["in"]:
                return False
        elif item.get(key) != wanted:
            return False
    return True


class FakeHoncho:
    """Start with :meth:`start`; ``base_url`` is what the SDK is pointed at."""

    def __init__(self, api_key: str | None = "hk-test-fake-key") -> None:
        self.api_key = api_key
        self.store = Store()
        self.requests: list[Recorded] = []
        self.faults: list[Fault] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._release = threading.Event()  # wakes delayed handlers when a fault is cleared
        self._server: ThreadingHTTPServer | None = None

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> FakeHoncho:
        fake = self

        class Handler(QuietHandler):
            def _any(self) -> None:
                fake._handle(self, self.command)

            do_GET = do_POST = do_PUT = do_DELETE = _any

        self._server = serve(Handler, poll=0.02)
        return self

    def stop(self) -> None:
        self._release.set()
        stop(self._server)

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # --- faults --------------------------------------------------------------------------

    def inject(
        self, kind: str, *, times: int | None = None, path: str = "", seconds: float = 30.0
    ) -> None:
        with self._lock:
            self._release.clear()
            self.faults.append(Fault(kind, times, path, seconds))

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()
            self._release.set()

    @contextmanager
    def faulty(self, kind: str, **options: Any) -> Iterator[None]:
        self.inject(kind, **options)
        try:
            yield
        finally:
            self.clear_faults()

    def _take_fault(self, path: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.path_contains in path:
                    if fault.times is not None:
                        fault.times -= 1
                        if fault.times <= 0:
                            self.faults.remove(fault)
                    return fault
        return None

    def paths(self, method: str | None = None) -> list[str]:
        return [r.path for r in self.requests if method is None or r.method == method]

    # --- HTTP ----------------------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(handler.path)
        body = json_or_text(read_raw(handler))
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        record = Recorded(method, parts.path, dict(handler.headers.items()), body, query)
        with self._lock:
            self.requests.append(record)
        fault = self._take_fault(parts.path)
        if fault is not None:
            if fault.kind == "delay":
                self._release.wait(fault.seconds)
            elif fault.kind == "malformed":
                return send(handler, 200, b'{"id": "broken", "items": [')
            else:
                status = int(fault.kind)
                return send(handler, status, {"detail": f"injected {status}"})
        expected = None if self.api_key is None else f"Bearer {self.api_key}"
        if expected is not None and handler.headers.get("Authorization") != expected:
            return send(handler, 401, {"detail": "invalid api key"})
        try:
            _check_ids(parts.path, body)
            status, answer = self._route(method, parts.path, query, body)
        except BadId as exc:
            status, answer = 422, {"detail": f"invalid id: {exc}"}
        except KeyError as exc:
            status, answer = 404, {"detail": f"not found: {exc}"}
        except Exception as exc:  # a fake bug shows as a 500 the test will see
            status, answer = 500, {"detail": f"fake error: {type(exc).__name__}: {exc}"}
        send(handler, status, answer)

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}{next(self._ids)}"

    # --- routes --------------------------------------------------------------------------

    def _route(self, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        seg = path.strip("/").split("/")
        if seg[:2] != ["v3", "workspaces"]:
            raise KeyError(path)
        if len(seg) == 2 and method == "POST":
            self.store.workspaces.add(body["id"])
            return 200, {"id": body["id"], "metadata": {}, "configuration": {}, "created_at": NOW}
        ws, rest = seg[2], seg[3:]
        if ws not in self.store.workspaces:
            raise KeyError(f"workspace {ws}")
        match rest, method:
            case ["peers"], "POST":
                return 200, self._peer(ws, body["id"])
            case ["peers", peer, "card"], "GET":
                return 200, {"peer_card": self.store.cards.get(peer)}
            case ["peers", peer, "card"], "PUT":
                self.store.cards[peer] = list(body["peer_card"])
                return 200, {"peer_card": self.store.cards[peer]}
            case ["peers", peer, "context"], "GET":
                return 200, self._context(peer, query)
            case ["sessions"], "POST":
                return 200, self._session(ws, body)
            case ["sessions", sid, "messages"], "POST":
                return 200, [self._add_message(ws, sid, m) for m in body["messages"]]
            case ["sessions", sid, "messages", mid], "GET":
                return 200, self._message(sid, mid)
            case ["sessions", sid, "messages", mid], "PUT":
                message = self._message(sid, mid)
                message["metadata"] = dict(body.get("metadata") or {})
                return 200, message
            case ["peers", peer, "sessions"], "POST":
                mine = [s for s in self.store.sessions.values() if peer in s["peers"]]
                return 200, _page([_public(s) for s in mine], query)
            case ["sessions", sid], "DELETE":
                del self.store.sessions[sid]  # with its messages and conclusions
                for mid in [k for k, m in self.store.messages.items() if m["session_id"] == sid]:
                    del self.store.messages[mid]
                for cid in [k for k, c in self.store.conclusions.items() if c["session_id"] == sid]:
                    del self.store.conclusions[cid]
                return 202, None
            case ["conclusions", "list"], "POST":
                hits = [
                    c
                    for c in self.store.conclusions.values()
                    if _filter_ok((body or {}).get("filters"), c)
                ]
                return 200, _page(hits, query)
            case ["search"], "POST":
                return 200, self._search(body)
            case ["conclusions"], "POST":
                return 200, [self._add_conclusion(c) for c in body["conclusions"]]
            case ["conclusions", "query"], "POST":
                return 200, self._query_conclusions(body)
            case ["conclusions", cid], "GET":
                return 200, self.store.conclusions[cid]
            case ["conclusions", cid], "DELETE":
                del self.store.conclusions[cid]
                return 200, None
        raise KeyError(f"{method} {path}")

    def _peer(self, ws: str, peer_id: str) -> dict[str, Any]:
        return self.store.peers.setdefault(
            peer_id,
            {
                "id": peer_id,
                "workspace_id": ws,
                "created_at": NOW,
                "metadata": {},
                "configuration": {},
            },
        )

    def _session(self, ws: str, body: dict[str, Any]) -> dict[str, Any]:
        session = self.store.sessions.setdefault(
            body["id"],
            {
                "id": body["id"],
                "is_active": True,
                "workspace_id": ws,
                "metadata": {},
                "configuration": {},
                "created_at": NOW,
                "peers": {},
            },
        )
        if "metadata" in body:
            session["metadata"] = body["metadata"]
        session["peers"].update(body.get("peers") or {})
        return _public(session)

    def _add_message(self, ws: str, sid: str, params: dict[str, Any]) -> dict[str, Any]:
        if sid not in self.store.sessions:
            raise KeyError(f"session {sid}")
        self._peer(ws, params["peer_id"])
        message = {
            "id": self._next_id("msg_"),
            "content": params["content"],
            "peer_id": params["peer_id"],
            "session_id": sid,
            "metadata": params.get("metadata") or {},
            "created_at": NOW,
            "workspace_id": ws,
            "token_count": len(params["content"]) // 4,
        }
        self.store.messages[message["id"]] = message
        return message

    def _message(self, sid: str, mid: str) -> dict[str, Any]:
        message = self.store.messages[mid]
        if message["session_id"] != sid:
            raise KeyError(mid)
        return message

    def _search(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        hits = [
            m
            for m in self.store.messages.values()
            if _filter_ok(body.get("filters"), m) and keyword_match(body["query"], m["content"])
        ]
        return hits[: int(body.get("limit") or 10)]

    def _add_conclusion(self, params: dict[str, Any]) -> dict[str, Any]:
        conclusion = {
            "id": self._next_id("con_"),
            "content": params["content"],
            "observer_id": params["observer_id"],
            "observed_id": params["observed_id"],
            "session_id": params.get("session_id"),
            "created_at": NOW,
        }
        self.store.conclusions[conclusion["id"]] = conclusion
        return conclusion

    def _query_conclusions(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        hits = [
            c
            for c in self.store.conclusions.values()
            if _filter_ok(body.get("filters"), c) and keyword_match(body["query"], c["content"])
        ]
        return hits[: int(body.get("top_k") or 10)]

    def _context(self, peer: str, query: dict[str, str]) -> dict[str, Any]:
        target = query.get("target", peer)
        mine = [
            c
            for c in self.store.conclusions.values()
            if c["observer_id"] == peer and c["observed_id"] == target
        ]
        search = query.get("search_query")
        if search:
            mine = [c for c in mine if keyword_match(search, c["content"])]
        top_k = int(query.get("search_top_k") or 10)
        lines = [f"- {c['content']}" for c in mine[:top_k]]
        return {
            "peer_id": peer,
            "target_id": target,
            "representation": "\n".join(lines) or None,
            "peer_card": self.store.cards.get(target),
        }


def _public(session: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in session.items() if k != "peers"}


def _page(items: list[dict[str, Any]], query: dict[str, str]) -> dict[str, Any]:
    """One page of ``items`` as Honcho answers a list (``page`` from 1, ``size``)."""
    page, size = int(query.get("page") or 1), int(query.get("size") or 50)
    pages = max(1, -(-len(items) // size))
    chosen = items[(page - 1) * size : page * size]
    return {"items": chosen, "total": len(items), "page": page, "size": size, "pages": pages}


#: Honcho's id rule for workspaces, peers and sessions (the server answers 422 otherwise)
HONCHO_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")


class BadId(Exception):
    """An id the real Honcho would refuse."""


def _check_ids(path: str, body: Any) -> None:
    """Refuse, like Honcho, ids outside its alphabet: in the path and in the bodies that
    name workspaces, peers and sessions."""
    ids = [unquote(part) for part in path.strip("/").split("/")[2:]]
    if isinstance(body, dict):
        if isinstance(body.get("id"), str):
            ids.append(body["id"])
        peers = body.get("peers")
        if isinstance(peers, dict | list):
            ids.extend(peer for peer in peers if isinstance(peer, str))
        for message in body.get("messages") or ():
            if isinstance(message, dict) and isinstance(message.get("peer_id"), str):
                ids.append(message["peer_id"])
        for conclusion in body.get("conclusions") or ():
            if isinstance(conclusion, dict):
                ids.extend(
                    conclusion[key]
                    for key in ("observer_id", "observed_id")
                    if isinstance(conclusion.get(key), str)
                )
    for value in ids:
        if not HONCHO_ID.fullmatch(value):
            raise BadId(repr(value[:60]))
