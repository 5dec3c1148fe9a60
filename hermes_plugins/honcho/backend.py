"""The Honcho SDK behind a small, user-bound interface.

Every method takes the caller's user peer and only ever touches that peer's data: searches
are filtered on the server (``metadata.hermes_user`` / the peer's own conclusions) and every
answer is checked again here, because a filter that a server ignores must not leak another
user's memories. Records are fetched and their owner checked before they are changed.

Honcho cannot delete a single message, so forgetting one is a tombstone: the owner key is
moved to ``hermes_forgotten`` and recall no longer matches it. Conclusions are deleted.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

import httpx
from honcho import Honcho  # type: ignore[import-untyped]
from honcho.http.exceptions import NotFoundError  # type: ignore[import-untyped]
from honcho.session import Session  # type: ignore[import-untyped]

from hermes_plugins.honcho.formatting import Recalled, chunk, excerpt
from hermes_plugins.honcho.identity import OWNER_KEY
from hermes_plugins.honcho.settings import HonchoSettings

FORGOTTEN_KEY = "hermes_forgotten"
_BATCH = 100  # Honcho accepts at most 100 messages per call
_QUERY_CHARS = 2_000  # a search query longer than this only slows the server down


class NotYours(Exception):
    """The record does not exist or belongs to someone else (indistinguishable on purpose)."""


@dataclass(frozen=True)
class Record:
    """One searchable memory: a conclusion about the user or one of their messages."""

    id: str
    kind: str  # "conclusion" | "message"
    content: str
    speaker: str

    def to_dict(self, terms: list[str]) -> dict[str, str]:
        return {
            "id": self.id,
            "kind": self.kind,
            "speaker": self.speaker,
            "content": excerpt(self.content, terms, 1_500),
        }


class HonchoBackend:
    """One Honcho client for one home; peers and sessions are created once and cached."""

    def __init__(
        self,
        settings: HonchoSettings,
        logger: logging.Logger,
        *,
        http_client: httpx.Client | None = None,
    ) -> None:
        self.settings = settings
        self.log = logger
        self.client: Any = Honcho(
            api_key=settings.api_key,
            base_url=settings.base_url,
            workspace_id=settings.workspace,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            http_client=http_client,
        )
        self._peers: dict[str, Any] = {}
        self._sessions: dict[str, Any] = {}
        self._lock = threading.Lock()

    # --- get-or-create, cached ---------------------------------------------------------

    def peer(self, peer_id: str) -> Any:
        with self._lock:
            cached = self._peers.get(peer_id)
        if cached is not None:
            return cached
        created = self.client.peer(peer_id)
        with self._lock:
            return self._peers.setdefault(peer_id, created)

    def session(self, key: str, user_peer: str) -> Any:
        with self._lock:
            cached = self._sessions.get(key)
        if cached is not None:
            return cached
        created = self.client.session(
            key,
            metadata={OWNER_KEY: user_peer},
            peers=[user_peer, self.settings.ai_peer],
        )
        with self._lock:
            return self._sessions.setdefault(key, created)

    # --- sync --------------------------------------------------------------------------

    def add_turn(
        self, user_peer: str, key: str, user: str, assistant: str, extra: dict[str, Any]
    ) -> int:
        """Store the user's and the assistant's words; long ones in numbered chunks."""
        size = self.settings.message_max_chars
        messages: list[Any] = []
        for peer_id, text in ((user_peer, user), (self.settings.ai_peer, assistant)):
            if not text.strip():
                continue
            peer = self.peer(peer_id)
            pieces = chunk(text, size)
            for index, piece in enumerate(pieces):
                metadata: dict[str, object] = {OWNER_KEY: user_peer, **extra}
                if len(pieces) > 1:
                    metadata.update(chunk=index + 1, chunks=len(pieces))
                messages.append(peer.message(piece, metadata=metadata))
        if not messages:
            return 0
        session = self.session(key, user_peer)
        for start in range(0, len(messages), _BATCH):
            session.add_messages(messages[start : start + _BATCH])
        return len(messages)

    # --- recall ------------------------------------------------------------------------

    def recall(self, user_peer: str, query: str, terms: list[str]) -> Recalled:
        """The user's card and representation for ``query``, plus their matching messages."""
        limit = self.settings.search_limit
        context = self.peer(user_peer).context(
            search_query=query[:_QUERY_CHARS], search_top_k=limit
        )
        card: tuple[str, ...] = ()
        representation = ""
        if context.peer_id == user_peer and context.target_id == user_peer:
            card = tuple(str(item) for item in context.peer_card or ())
            representation = str(context.representation or "")
        else:
            self.log.warning("honcho: dropped a context answer for another peer")
        lines = tuple(
            (record.speaker, excerpt(record.content, terms))
            for record in self.search_messages(user_peer, query, limit)
        )
        return Recalled(card=card, representation=representation, messages=lines)

    def search_messages(self, user_peer: str, query: str, limit: int) -> list[Record]:
        found = self.client.search(
            query[:_QUERY_CHARS], filters={"metadata": {OWNER_KEY: user_peer}}, limit=limit
        )
        records = []
        for message in found:
            metadata = message.metadata or {}
            if metadata.get(OWNER_KEY) != user_peer or FORGOTTEN_KEY in metadata:
                continue  # the server filter is not trusted alone
            speaker = "user" if message.peer_id == user_peer else "assistant"
            record_id = f"m:{message.session_id}:{message.id}"
            records.append(Record(record_id, "message", str(message.content), speaker))
        return records

    def search_conclusions(self, user_peer: str, query: str, limit: int) -> list[Record]:
        view = self.peer(user_peer).conclusions
        found = view.query(query[:_QUERY_CHARS], top_k=limit)
        return [
            Record(f"c:{item.id}", "conclusion", str(item.content), "honcho")
            for item in found
            if item.observer_id == user_peer and item.observed_id == user_peer
        ]

    def search(self, user_peer: str, query: str, limit: int) -> list[Record]:
        return self.search_conclusions(user_peer, query, limit) + self.search_messages(
            user_peer, query, limit
        )

    # --- profile, context, conclusions -------------------------------------------------

    def get_card(self, user_peer: str) -> list[str]:
        return [str(item) for item in self.peer(user_peer).get_card() or []]

    def set_card(self, user_peer: str, card: list[str]) -> list[str]:
        return [str(item) for item in self.peer(user_peer).set_card(card) or []]

    def context(self, user_peer: str, query: str | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"search_top_k": self.settings.search_limit}
        if query:
            kwargs["search_query"] = query[:_QUERY_CHARS]
        context = self.peer(user_peer).context(**kwargs)
        if context.peer_id != user_peer or context.target_id != user_peer:
            raise NotYours("context answer for another peer")
        return {
            "peer_card": list(context.peer_card or []),
            "representation": context.representation or "",
        }

    def conclude(self, user_peer: str, content: str) -> str:
        created = self.peer(user_peer).conclusions.create([{"content": content}])
        return f"c:{created[0].id}" if created else ""

    def forget(self, user_peer: str, record_id: str) -> str:
        """Delete a conclusion or tombstone a message, after checking it is the user's."""
        kind, _, rest = record_id.partition(":")
        if kind == "c" and rest:
            view = self.peer(user_peer).conclusions
            try:
                item = view.get(rest)  # raises NotFoundError outside this peer's view
            except NotFoundError as exc:
                raise NotYours(record_id) from exc
            if item.observer_id != user_peer or item.observed_id != user_peer:
                raise NotYours(record_id)
            view.delete(rest)
            return "deleted"
        session_id, _, message_id = rest.partition(":")
        if kind == "m" and session_id and message_id:
            session = Session(session_id, self.client)  # no request: the id is checked below
            try:
                message = session.get_message(message_id)
            except NotFoundError as exc:
                raise NotYours(record_id) from exc
            metadata = dict(message.metadata or {})
            if metadata.get(OWNER_KEY) != user_peer or message.session_id != session_id:
                raise NotYours(record_id)
            metadata.pop(OWNER_KEY)
            metadata[FORGOTTEN_KEY] = user_peer
            session.update_message(message_id, metadata)
            return "forgotten"
        raise ValueError(f"'{record_id}' is not a record id from honcho_search")

    def forget_peer(self, user_peer: str) -> dict[str, int]:
        """Delete what Honcho keeps about ``user_peer``: every conclusion it drew or that was
        drawn about it, every session it is a member of that is its own
        (``metadata.hermes_user``; deleting one deletes its messages and their embeddings),
        and its peer card. Lists are read whole before deleting (deleting shifts the pages).
        The peer record itself stays: SDK 2.7 has no call to delete a peer; it holds no text
        but its id."""
        peer = self.peer(user_peer)
        found: dict[str, Any] = {}
        for side in ("observed_id", "observer_id"):
            for item in self.client.conclusions.list(filters={side: user_peer}):
                if user_peer in (item.observer_id, item.observed_id):
                    found[item.id] = item
        for conclusion_id in found:
            peer.conclusions.delete(conclusion_id)  # the route is by id, whatever the view
        owned = [s for s in peer.sessions() if (s.metadata or {}).get(OWNER_KEY) == user_peer]
        for session in owned:
            session.delete()
        card = peer.get_card() or []
        if card:
            peer.set_card([])
        return {"conclusions": len(found), "sessions": len(owned), "card entries": len(card)}

    def close(self) -> None:
        self.client._http.close()  # the SDK has no public close; this only closes its own client
