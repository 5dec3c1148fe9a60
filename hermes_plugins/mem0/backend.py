"""One interface over Mem0's two faces: the hosted ``MemoryClient`` and the local ``Memory``.

The provider talks to this class only, so user binding, the circuit breaker and formatting
are written once. Answers are normalised here (``{"results": [...]}`` or a bare list, both
seen in 2.x) and anything else raises :class:`MalformedAnswer`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import httpx
from mem0 import Memory, MemoryClient  # type: ignore[import-untyped]
from mem0.exceptions import MemoryNotFoundError  # type: ignore[import-untyped]

from hermes_core.errors import ConfigError, ProviderError
from hermes_plugins.mem0.settings import PREFIX, Mem0Settings

Record = dict[str, Any]


class MalformedAnswer(ProviderError):
    """Mem0 answered, but not in a shape we understand."""


def _records(answer: Any, what: str) -> list[Record]:
    items = answer.get("results") if isinstance(answer, Mapping) else answer
    if not isinstance(items, list) or not all(isinstance(item, Mapping) for item in items):
        raise MalformedAnswer(f"mem0 {what}: unexpected answer of type {type(answer).__name__}")
    return [dict(item) for item in items]


class Mem0Backend:
    """Thin, typed calls into the SDK; errors propagate to the provider, which decides."""

    def __init__(self, settings: Mem0Settings, *, http_client: httpx.Client | None = None):
        self.settings = settings
        self._http_client = http_client
        self._lock = threading.Lock()
        self._platform: MemoryClient | None = None
        self._local: Memory | None = None
        self._closed = False
        if settings.mode == "oss":
            self._local = self._build_local()

    # --- construction ------------------------------------------------------------------

    def _build_local(self) -> Memory:
        try:
            memory = Memory.from_config(dict(self.settings.oss_config))
        except Exception as exc:  # noqa: BLE001 - pydantic's ValidationError and the stores' own errors
            raise ConfigError(
                f"{PREFIX}.oss_config: Mem0 refused it ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0] if str(exc) else ''}); see Mem0's Memory.from_config "
                "documentation for vector_store, embedder and llm"
            ) from None
        # The OpenAI clients Mem0 builds wait 600 s and retry twice; bound them like ours.
        for part in (getattr(memory, "embedding_model", None), getattr(memory, "llm", None)):
            client = getattr(part, "client", None)
            if part is not None and client is not None and hasattr(client, "with_options"):
                part.client = client.with_options(timeout=self.settings.timeout, max_retries=0)
        return memory

    def _memory(self) -> Memory:
        local = self._local
        if local is None:
            raise ProviderError("mem0: the provider was shut down")
        return local

    def _client(self) -> MemoryClient:
        """The hosted client, built on first use: its constructor pings the service."""
        with self._lock:
            if self._closed:
                raise ProviderError("mem0: the provider was shut down")
            if self._platform is None:
                http = self._http_client or httpx.Client(timeout=self.settings.timeout)
                self._platform = MemoryClient(
                    api_key=self.settings.api_key, host=self.settings.host, client=http
                )
            return self._platform

    # --- calls -------------------------------------------------------------------------

    def search(self, query: str, user_id: str, top_k: int) -> list[Record]:
        filters = {"user_id": user_id}
        if self.settings.mode == "oss":
            answer = self._memory().search(query, top_k=top_k, filters=filters)
        else:
            answer = self._client().search(query, filters=filters, top_k=top_k)
        return _records(answer, "search")

    def add(
        self,
        messages: Sequence[Mapping[str, str]],
        user_id: str,
        metadata: Mapping[str, Any],
        infer: bool,
    ) -> list[Record]:
        agent_id = self.settings.agent_id
        payload = [dict(message) for message in messages]
        if self.settings.mode == "oss":
            answer = self._memory().add(
                payload, user_id=user_id, agent_id=agent_id, metadata=dict(metadata), infer=infer
            )
        else:
            # The 2.x options model says identity goes in ``filters`` for v3; add() itself
            # still forwards top-level ids, so both are sent and agree.
            filters = {"user_id": user_id, **({"agent_id": agent_id} if agent_id else {})}
            answer = self._client().add(
                payload,
                user_id=user_id,
                agent_id=agent_id,
                filters=filters,
                metadata=dict(metadata),
                infer=infer,
            )
        return _records(answer, "add")

    def get(self, memory_id: str) -> Record | None:
        """The record, or None when Mem0 does not know the id."""
        if self.settings.mode == "oss":
            try:
                answer = self._memory().get(memory_id)
            except ValueError:  # a malformed id is no record of ours either
                return None
        else:
            try:
                answer = self._client().get(memory_id)
            except MemoryNotFoundError:
                return None
        if answer is None:
            return None
        if not isinstance(answer, Mapping):
            raise MalformedAnswer(f"mem0 get: unexpected answer of type {type(answer).__name__}")
        return dict(answer)

    def update(self, memory_id: str, text: str) -> None:
        if self.settings.mode == "oss":
            self._memory().update(memory_id, text=text)
        else:
            self._client().update(memory_id, text=text)

    def delete(self, memory_id: str) -> None:
        if self.settings.mode == "oss":
            self._memory().delete(memory_id)
        else:
            self._client().delete(memory_id)

    def delete_all(self, user_id: str) -> int | None:
        """Delete every memory of ``user_id`` (and of this ``agent_id`` when one is set: the
        memories other applications keep under the user are theirs). The number deleted in
        local mode; ``None`` on the platform, whose answer does not say."""
        agent_id = self.settings.agent_id
        scope = {"user_id": user_id, **({"agent_id": agent_id} if agent_id else {})}
        if self.settings.mode == "oss":
            memory = self._memory()
            found = _records(memory.get_all(filters=scope, top_k=1_000_000), "get_all")
            if found:
                memory.delete_all(**scope)
            return len(found)
        self._client().delete_all(**scope)
        return None

    def close(self) -> None:
        """Release connections and the local store's file locks; safe to call twice."""
        with self._lock:
            self._closed = True
            platform, self._platform = self._platform, None
            local, self._local = self._local, None
        if platform is not None:
            platform.client.close()
        if local is not None:
            local.close()
