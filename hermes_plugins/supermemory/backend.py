"""A narrow wrapper over the ``supermemory`` 5.x SDK: the four calls the provider makes.

It turns SDK models into small frozen records, checks ownership markers on everything the
server returns, and turns every SDK or transport failure into :class:`BackendError` with a
message that carries no response body, header or key.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import supermemory
from supermemory.core.request_options import RequestOptions
from supermemory.requests.filter_expression import FilterExpressionParams

from hermes_plugins.supermemory.scope import OWNER_KEY
from hermes_plugins.supermemory.settings import SupermemorySettings

MetadataValue = str | float | bool | list[str]


class BackendError(Exception):
    """A Supermemory call failed; ``str()`` is safe to log and to show a model."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Hit:
    """One search result owned by the caller's container."""

    id: str
    text: str
    document_id: str | None
    score: float


@dataclass(frozen=True)
class StoredDocument:
    """A document as the server describes it, with the owner marker it was written with."""

    id: str
    content: str
    owner: str | None


def describe(exc: BaseException, timeout: float) -> BackendError:
    """A safe description of an SDK failure: status and kind only, never the body."""
    if isinstance(exc, BackendError):
        return exc
    if isinstance(exc, (supermemory.APITimeoutError, httpx.TimeoutException)):
        return BackendError(f"Supermemory did not answer within {timeout:g}s")
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and status >= 400:
        hint = {
            401: "authentication failed: check the API key",
            403: "permission denied for this API key",
            404: "not found",
            429: "rate limited: try again later",
        }.get(status, "server error" if status >= 500 else "request rejected")
        return BackendError(f"Supermemory answered HTTP {status} ({hint})", status=status)
    if isinstance(exc, (supermemory.APIConnectionError, httpx.TransportError)):
        return BackendError("Supermemory could not be reached")
    return BackendError(f"Supermemory sent an answer that could not be read ({type(exc).__name__})")


def _owner_of(metadata: object) -> str | None:
    if isinstance(metadata, Mapping):
        owner = metadata.get(OWNER_KEY)
        return owner if isinstance(owner, str) else None
    return None


class SupermemoryBackend:
    """One SDK client with a bounded httpx client; thread-safe for the core's workers."""

    def __init__(
        self,
        settings: SupermemorySettings,
        api_key: str,
        *,
        http_client: httpx.Client | None = None,
    ) -> None:
        self._timeout = settings.timeout
        self._owns_http = http_client is None
        self._http = http_client or httpx.Client(timeout=httpx.Timeout(settings.timeout))
        self._client = supermemory.Supermemory(
            api_key=api_key,
            base_url=settings.base_url,
            timeout=httpx.Timeout(settings.timeout),
            max_retries=settings.max_retries,
            http_client=self._http,
        )
        self._closed = threading.Event()

    # --- calls ----------------------------------------------------------------------------

    def add(self, tag: str, content: str, metadata: Mapping[str, MetadataValue]) -> str:
        """Store ``content`` in ``tag`` with the owner marker; returns the document id."""
        marked: dict[str, Any] = {**metadata, OWNER_KEY: tag}
        try:
            ref = self._client.add(tag, content=content, metadata=marked)
            doc_id = ref.id
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a safe message
            raise describe(exc, self._timeout) from None
        if not isinstance(doc_id, str) or not doc_id:
            raise BackendError("Supermemory accepted the document but returned no id")
        return doc_id

    def search(self, tag: str, query: str, limit: int, *, retries: int | None = None) -> list[Hit]:
        """Search ``tag`` (server-side scope and owner filter), then drop foreign records."""
        owner_filter: FilterExpressionParams = {"field": OWNER_KEY, "operator": "eq", "value": tag}
        options: RequestOptions = {} if retries is None else {"max_retries": retries}
        try:
            response = self._client.search(
                tag,
                query=query,
                limit=limit,
                search_mode="hybrid",
                include={"documents": True},
                filter=owner_filter,
                request_options=options,
            )
            results = list(response.results)
            hits = [hit for hit in (self._hit(result, tag) for result in results) if hit]
        except Exception as exc:  # noqa: BLE001 - malformed answers included
            raise describe(exc, self._timeout) from None
        return hits[:limit]

    def get_document(self, tag: str, document_id: str) -> StoredDocument | None:
        """The document in ``tag``, or ``None`` when the server does not know it there."""
        try:
            document = self._client.documents.get(tag, document_id)
            stored = StoredDocument(
                id=str(document.id),
                content=str(document.content or ""),
                owner=_owner_of(document.metadata),
            )
        except Exception as exc:  # noqa: BLE001
            error = describe(exc, self._timeout)
            if error.status == 404:
                return None
            raise error from None
        return stored

    def delete_document(self, tag: str, document_id: str) -> bool:
        """Delete one document from ``tag``; ``True`` when the server says it did."""
        try:
            result = self._client.documents.delete(tag, ids=[document_id])
            count = int(result.count)
        except Exception as exc:  # noqa: BLE001
            raise describe(exc, self._timeout) from None
        return count > 0

    def delete_namespace(self, tag: str) -> dict[str, int]:
        """Permanently delete everything in ``tag`` (``DELETE /ns/{tag}``): the counts the
        server gives; ``{}`` when it knows no such namespace (nothing was kept there)."""
        try:
            answer = self._client.namespaces.delete(tag)
            counts = {
                "documents": int(getattr(answer, "deleted_documents_count", 0) or 0),
                "memories": int(getattr(answer, "deleted_memories_count", 0) or 0),
            }
        except Exception as exc:  # noqa: BLE001
            error = describe(exc, self._timeout)
            if error.status == 404:
                return {}
            raise error from None
        return counts

    def close(self) -> None:
        """Release the connection pool; safe to call twice."""
        if self._closed.is_set():
            return
        self._closed.set()
        if self._owns_http:
            self._http.close()

    # --- parsing --------------------------------------------------------------------------

    @staticmethod
    def _hit(result: Any, tag: str) -> Hit | None:
        text = result.memory or result.chunk
        included = getattr(result, "included", None)
        document = getattr(included, "document", None) if included is not None else None
        owner = _owner_of(result.metadata)
        if owner is None and document is not None:
            owner = _owner_of(document.metadata)
        if owner != tag or not isinstance(text, str) or not text.strip():
            return None
        document_id = getattr(document, "id", None)
        return Hit(
            id=str(result.id),
            text=text,
            document_id=document_id if isinstance(document_id, str) else None,
            score=float(result.similarity or 0.0),
        )
