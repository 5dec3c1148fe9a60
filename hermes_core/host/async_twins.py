"""The asyncio twins of the session calls, for hosts that run an event loop.

Each runs the synchronous call on a worker thread (``asyncio.to_thread``), so a provider's
network wait or an LLM summary never blocks the loop; the session's lock keeps the calls of
one session in order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["AsyncTwins"]


class AsyncTwins:
    """``aprepare``, ``arecord_usage``, ``aend_turn``, ``ahandle_tool_call``,
    ``acompact_now``, ``aclose``."""

    def prepare(self, messages: Sequence[Any]) -> list[dict[str, Any]]:
        raise NotImplementedError

    def record_usage(self, usage: object) -> None:
        raise NotImplementedError

    def end_turn(self, messages: Sequence[Any]) -> None:
        raise NotImplementedError

    def handle_tool_call(self, name: str, arguments: Mapping[str, Any] | str) -> str:
        raise NotImplementedError

    def compact_now(self, focus: str | None = None) -> list[dict[str, Any]]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    async def aprepare(self, messages: Sequence[Any]) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.prepare, messages)

    async def arecord_usage(self, usage: object) -> None:
        await asyncio.to_thread(self.record_usage, usage)

    async def aend_turn(self, messages: Sequence[Any]) -> None:
        await asyncio.to_thread(self.end_turn, messages)

    async def ahandle_tool_call(self, name: str, arguments: Mapping[str, Any] | str) -> str:
        return await asyncio.to_thread(self.handle_tool_call, name, arguments)

    async def acompact_now(self, focus: str | None = None) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.compact_now, focus)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)
