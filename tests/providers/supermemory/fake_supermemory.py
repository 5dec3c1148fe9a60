"""A loopback fake of the Supermemory v5 HTTP API: just the endpoints the provider calls.

``POST /ns/{ns}/document`` (add), ``POST /ns/{ns}/search``, ``GET /ns/{ns}/document/{id}``
``DELETE /ns/{ns}/document`` and ``DELETE /ns/{ns}`` (forget); in-memory documents, keyword
search (any query word of 3+ letters, case-insensitive), every request recorded, and faults
on demand. Two switches make
it misbehave on purpose (``leak_namespaces``: search and get ignore the namespace) so tests
can show that the provider's own ownership checks hold even when the server's do not.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

from loopback import QuietHandler, Recorded, json_or_text, read_raw, send

API_KEY = "sm-test-key-0123456789abcdef"
CHUNK_CHARS = 1_500
_NOW = "2026-11-30T12:00:00Z"
#: the namespaces (container tags) the fake accepts
NAMESPACE = re.compile(r"[A-Za-z0-9_-]{1,100}")


@dataclass
class Fault:
    status: int | None = None  # answer this HTTP status
    delay: float = 0.0  # seconds before answering
    malformed: bool = False  # answer 200 with a body that is not JSON


@dataclass
class Doc:
    id: str
    namespace: str
    content: str
    metadata: dict[str, Any]


@dataclass
class State:
    docs: dict[str, Doc] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    fault: Fault = field(default_factory=Fault)
    leak_namespaces: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    released: threading.Event = field(default_factory=threading.Event)
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))


def _words(text: str) -> set[str]:
    return {word for word in re.findall(r"\w+", text.lower()) if len(word) >= 3}


def _chunks(text: str) -> list[str]:
    return [text[i : i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)] or [""]


def _matches_filter(metadata: dict[str, Any], expression: Any) -> bool:
    if not expression:
        return True
    operator = expression.get("operator")
    if operator == "and":
        return all(_matches_filter(metadata, part) for part in expression["operands"])
    if operator == "or":
        return any(_matches_filter(metadata, part) for part in expression["operands"])
    equal = metadata.get(expression.get("field")) == expression.get("value")
    return equal if operator == "eq" else not equal


class _Handler(QuietHandler):
    server: FakeServer

    def _route(self) -> None:
        state = self.server.state
        body = json_or_text(read_raw(self))
        with state.lock:
            state.requests.append(Recorded(self.command, self.path, dict(self.headers), body))
            fault = state.fault
        if fault.delay and state.released.wait(fault.delay):
            return  # the fake is shutting down
        if fault.status:
            return self._send(fault.status, {"error": f"injected {fault.status}"})
        if fault.malformed:
            return self._send(200, b'{"results": [ not json')
        if self.headers.get("authorization") != f"Bearer {API_KEY}":
            return self._send(401, {"error": "invalid API key"})
        parts = self.path.split("?", 1)[0].strip("/").split("/")
        if self.command == "DELETE" and len(parts) == 2 and parts[0] == "ns":
            with state.lock:
                return self._delete_namespace(parts[1])
        if len(parts) < 3 or parts[0] != "ns":
            return self._send(404, {"error": "no such route"})
        namespace, rest = parts[1], parts[2:]
        if not NAMESPACE.fullmatch(namespace):
            # the SDK puts the namespace into the path unescaped: only a safe one may arrive
            return self._send(400, {"error": "namespace must be 1-100 of [A-Za-z0-9_-]"})
        with state.lock:
            if self.command == "POST" and rest == ["document"]:
                return self._add(namespace, body)
            if self.command == "POST" and rest == ["search"]:
                return self._search(namespace, body)
            if self.command == "GET" and len(rest) == 2 and rest[0] == "document":
                return self._get(namespace, rest[1])
            if self.command == "DELETE" and rest == ["document"]:
                return self._delete(namespace, body)
        return self._send(404, {"error": "no such route"})

    do_GET = do_POST = do_DELETE = _route

    # --- endpoints (called with the state lock held) ---------------------------------------

    def _add(self, namespace: str, body: Any) -> None:
        state = self.server.state
        doc_id = f"doc{next(state.ids)}"
        state.docs[doc_id] = Doc(
            doc_id, namespace, body["content"], dict(body.get("metadata") or {})
        )
        self._send(200, {"id": doc_id, "status": "queued"})

    def _search(self, namespace: str, body: Any) -> None:
        state = self.server.state
        wanted = _words(body.get("query", ""))
        mode = body.get("searchMode", "hybrid")
        include_docs = bool((body.get("include") or {}).get("documents"))
        results = []
        for doc in state.docs.values():
            if doc.namespace != namespace and not state.leak_namespaces:
                continue
            if not _matches_filter(doc.metadata, body.get("filter")) and not state.leak_namespaces:
                continue
            for index, chunk in enumerate(_chunks(doc.content)):
                if not wanted & _words(chunk):
                    continue
                result: dict[str, Any] = {
                    "id": f"{doc.id}-c{index}",
                    "metadata": doc.metadata,
                    "similarity": 0.9,
                    "isLatest": True,
                    "isInference": False,
                    "system": {"updatedAt": _NOW},
                    "memory" if mode == "memories" else "chunk": chunk,
                }
                if include_docs:
                    result["included"] = {
                        "document": {
                            "id": doc.id,
                            "metadata": doc.metadata,
                            "system": {"createdAt": _NOW, "updatedAt": _NOW},
                        }
                    }
                results.append(result)
        limit = int(body.get("limit") or 10)
        self._send(200, {"results": results[:limit], "searchTime": 1.5})

    def _get(self, namespace: str, doc_id: str) -> None:
        doc = self.server.state.docs.get(doc_id)
        if doc is None or (doc.namespace != namespace and not self.server.state.leak_namespaces):
            return self._send(404, {"error": "document not found"})
        self._send(
            200,
            {
                "id": doc.id,
                "type": "text",
                "content": doc.content,
                "metadata": doc.metadata,
                "system": {
                    "status": "done",
                    "dreamingStatus": "done",
                    "createdAt": _NOW,
                    "updatedAt": _NOW,
                },
            },
        )

    def _delete(self, namespace: str, body: Any) -> None:
        state = self.server.state
        count, errors = 0, []
        for doc_id in body.get("ids", []):
            doc = state.docs.get(doc_id)
            if doc is None or doc.namespace != namespace:
                errors.append({"id": doc_id, "error": "not found"})
                continue
            del state.docs[doc_id]
            count += 1
        self._send(200, {"count": count, "errors": errors})

    def _delete_namespace(self, namespace: str) -> None:
        """``DELETE /ns/{ns}``: every document of the namespace, permanently (404 when the
        namespace holds nothing, as the service answers for an unknown one)."""
        state = self.server.state
        gone = [doc_id for doc_id, doc in state.docs.items() if doc.namespace == namespace]
        if not gone:
            return self._send(404, {"error": "namespace not found"})
        for doc_id in gone:
            del state.docs[doc_id]
        answer = {"status": "deleted", "namespace": namespace}
        self._send(200, {**answer, "deletedDocumentsCount": len(gone), "deletedMemoriesCount": 0})

    # --- answers ---------------------------------------------------------------------------

    def _send(self, status: int, payload: Any) -> None:
        send(self, status, payload)


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = State()
        self.thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    @property
    def requests(self) -> list[Recorded]:
        with self.state.lock:
            return list(self.state.requests)

    @property
    def docs(self) -> dict[str, Doc]:
        with self.state.lock:
            return dict(self.state.docs)

    def set_fault(self, fault: Fault | None) -> None:
        with self.state.lock:
            self.state.fault = fault or Fault()

    @contextmanager
    def faulty(self, **kwargs: Any) -> Iterator[None]:
        self.set_fault(Fault(**kwargs))
        try:
            yield
        finally:
            self.set_fault(None)

    def start(self) -> FakeServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.state.released.set()
        self.shutdown()
        self.server_close()
