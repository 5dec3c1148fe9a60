"""A small RetainDB REST client over httpx (there is no SDK).

Assumed API (documented in ``docs/providers/retaindb.md``), bearer auth on every request and
``project`` + ``user_id`` in every body or query string:

- ``POST /v1/memories``: store ``{content, session_id, metadata, idempotency_key}``
  (also sent as the ``Idempotency-Key`` header); answers the record.
- ``POST /v1/search``: ``{query, limit}``; answers ``{"results": [record, ...]}``.
- ``GET /v1/memories/{id}``, ``DELETE /v1/memories/{id}``.
- ``DELETE /v1/memories`` (``project`` + ``user_id`` in the query): every memory of the user
  in the project, for ``forget``; answers ``{"deleted": n}``.
- ``GET /v1/profile``: what the service knows about the user.

A record is a JSON object with at least ``id``, ``user_id`` and ``content``. Every failure
becomes a :class:`RetainDBError` whose ``retryable`` tells the write-behind queue whether to
try again; the message never holds the key.
"""

from __future__ import annotations

from typing import Any

import httpx

#: Failures that say the service (or our access to it) is unavailable, not that the turn is
#: wrong: an outage, throttling, or a key or gateway problem an operator will fix. A queued
#: turn waits these out however long they last.
_RETRYABLE_STATUS = frozenset({401, 403, 404, 408, 425, 429})


class RetainDBError(Exception):
    """A failed call: ``status`` is the HTTP status, or ``None`` for transport/format errors."""

    def __init__(self, message: str, status: int | None = None, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.status = status
        #: the call cost its whole timeout (recall pauses after one, so turns stay fast)
        self.timed_out = timed_out

    @property
    def retryable(self) -> bool:
        """Transport errors, timeouts, 408/429 and 5xx may pass; other 4xx will not."""
        return self.status is None or self.status in _RETRYABLE_STATUS or self.status >= 500


class RetainDBClient:
    """One ``httpx.Client`` for a project; thread-safe as httpx clients are."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        project: str,
        *,
        timeout: float,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.project = project
        self._http = httpx.Client(
            base_url=base_url,
            headers={"Authorization": f"Bearer {api_key}", "User-Agent": "hermes-context"},
            timeout=timeout,
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    # --- endpoints -------------------------------------------------------------------------

    def remember(
        self,
        user_id: str,
        content: str,
        *,
        idempotency_key: str,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        body = {
            "project": self.project,
            "user_id": user_id,
            "session_id": session_id,
            "content": content,
            "metadata": metadata or {},
            "idempotency_key": idempotency_key,
        }
        headers = {"Idempotency-Key": idempotency_key}
        return _record(self._call("POST", "/v1/memories", json=body, headers=headers, t=timeout))

    def search(
        self, user_id: str, query: str, *, limit: int, timeout: float | None = None
    ) -> list[dict[str, Any]]:
        body = {"project": self.project, "user_id": user_id, "query": query, "limit": limit}
        answer = self._call("POST", "/v1/search", json=body, t=timeout)
        results = answer.get("results")
        if not isinstance(results, list):
            raise RetainDBError("RetainDB search answered without a 'results' list")
        return [item for item in results if isinstance(item, dict)]

    def get(self, user_id: str, memory_id: str) -> dict[str, Any] | None:
        """The record, or ``None`` when the service does not know it (404)."""
        try:
            return _record(self._call("GET", f"/v1/memories/{_path_id(memory_id)}", uid=user_id))
        except RetainDBError as exc:
            if exc.status == 404:
                return None
            raise

    def delete(self, user_id: str, memory_id: str) -> None:
        self._call("DELETE", f"/v1/memories/{_path_id(memory_id)}", uid=user_id)

    def delete_user(self, user_id: str) -> int:
        """Delete every memory of ``user_id`` in the project; how many the server deleted."""
        answer = self._call("DELETE", "/v1/memories", uid=user_id)
        deleted = answer.get("deleted", 0)
        if isinstance(deleted, bool) or not isinstance(deleted, int):
            raise RetainDBError("RetainDB DELETE /v1/memories answered no 'deleted' count")
        return deleted

    def profile(self, user_id: str) -> dict[str, Any]:
        return self._call("GET", "/v1/profile", uid=user_id)

    # --- plumbing --------------------------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        *,
        json: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        uid: str | None = None,
        t: float | None = None,
    ) -> dict[str, Any]:
        params = {"project": self.project, "user_id": uid} if uid is not None else None
        timeout: Any = t if t is not None else httpx.USE_CLIENT_DEFAULT
        try:
            response = self._http.request(
                method, path, json=json, params=params, headers=headers, timeout=timeout
            )
        except httpx.TimeoutException:
            raise RetainDBError(f"RetainDB {method} {path} timed out", timed_out=True) from None
        except httpx.HTTPError as exc:
            raise RetainDBError(f"RetainDB {method} {path} failed: {type(exc).__name__}") from None
        if response.status_code >= 400:
            raise RetainDBError(
                f"RetainDB {method} {path} answered HTTP {response.status_code}",
                status=response.status_code,
            )
        if not response.content:
            return {}
        try:
            answer = response.json()
        except ValueError:
            raise RetainDBError(f"RetainDB {method} {path} answered malformed JSON") from None
        if not isinstance(answer, dict):
            raise RetainDBError(f"RetainDB {method} {path} answered {type(answer).__name__}")
        return answer


def _record(answer: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(answer.get("id"), str | int):
        raise RetainDBError("RetainDB answered a memory without an 'id'")
    return answer


def _path_id(memory_id: str) -> str:
    """Ids go into the URL path: refuse anything that could change the path."""
    if not memory_id or any(c in memory_id for c in "/?#%\\") or memory_id in (".", ".."):
        raise ValueError("memory ids hold no '/', '?', '#', '%' or '\\'")
    return memory_id
