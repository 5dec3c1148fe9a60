"""The default ``file_memory`` plugin: MEMORY.md / USER.md in the prompt, and the memory tool.

Thin on purpose: the store, snapshot, approval and tool live in :mod:`hermes_core.memory`.
This class binds them to sessions: each session gets the snapshot frozen when it started
(writes during the session do not change the prompt, so the provider's prefix cache stays
valid) and a tool bound to the session's user, so one user's profile never reaches another.

Where the blocks live is asked of the host (the ``memory_documents`` hook), which this plugin
answers last, with the home's files, when ``memory.backend`` is ``files``; with ``postgres``
the same blocks and tool are served from the rows the postgres plugin answers with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.errors import MemoryStoreError
from hermes_core.markers import hookimpl
from hermes_core.plugins import PluginContext
from hermes_core.types import Finding, Message, SessionInfo, Turn

if TYPE_CHECKING:  # the memory modules load on first use: ``compress`` never needs them
    from hermes_core.memory.documents import MemoryDocuments
    from hermes_core.memory.file_documents import FileMemoryDocuments
    from hermes_core.memory.snapshot import Scanner
    from hermes_core.memory.tool import MemoryTool

_Key = tuple[str, str | None]


class FileMemoryPlugin:
    """Built-in ``file_memory``: the frozen memory blocks and the ``memory`` tool."""

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        self._snapshots: dict[_Key, str] = {}
        self._tools: dict[_Key, MemoryTool] = {}

    def _scanner(self) -> Scanner | None:
        scan = self.context.scan_threat
        if scan is None:
            return None  # the store's default: the built-in strict scanner

        def strict(text: str) -> list[Finding]:
            return scan(text, "strict")

        return strict

    def _documents(self, home: Path) -> MemoryDocuments:
        """The host's answer to ``memory_documents`` (outside a host: the home's files)."""
        from hermes_core.memory.documents import checked_documents
        from hermes_core.memory.file_documents import FileMemoryDocuments

        opener = self.context.memory_documents
        if opener is not None:
            return checked_documents(opener(home))
        backend = self.context.settings.memory.backend
        if backend != "files":
            raise MemoryStoreError(f"memory.backend: {backend} needs a host to open it")
        return FileMemoryDocuments.for_home(home)

    def _tool(self, session: SessionInfo) -> MemoryTool:
        key = (session.session_id, session.user_id)
        tool = self._tools.get(key)
        if tool is None:
            from hermes_core.memory.home import open_writer
            from hermes_core.memory.tool import MemoryTool

            home = session.home or self.context.home
            writer = open_writer(
                home,
                self.context.settings,
                user_id=session.user_id,
                scanner=self._scanner(),
                documents=self._documents(home),
            )
            tool = self._tools[key] = MemoryTool(writer)
        return tool

    def _enabled(self) -> bool:
        memory = self.context.settings.memory
        return memory.memory_enabled or memory.user_profile_enabled

    @hookimpl(trylast=True)
    def memory_documents(self, home: Path) -> FileMemoryDocuments | None:
        """The home's files, when ``memory.backend`` is ``files``."""
        from hermes_core.memory.file_documents import FileMemoryDocuments

        if self.context.settings.memory.backend != "files":
            return None
        return FileMemoryDocuments.for_home(home)

    @hookimpl(trylast=True)
    def memory_session_start(self, session: SessionInfo) -> None:
        """Freeze the snapshot the whole session will show."""
        self.memory_system_block(session)

    @hookimpl(trylast=True)
    def memory_system_block(self, session: SessionInfo) -> str | None:
        key = (session.session_id, session.user_id)
        if key not in self._snapshots:
            self._snapshots[key] = self._tool(session).writer.store.snapshot()
        return self._snapshots[key] or None

    @hookimpl(trylast=True)
    def memory_tools(self, session: SessionInfo) -> list[dict[str, Any]] | None:
        from hermes_core.memory.tool import MEMORY_TOOL_SCHEMA

        return [MEMORY_TOOL_SCHEMA] if self._enabled() else None

    @hookimpl(trylast=True)
    def memory_handle_tool(
        self, session: SessionInfo, name: str, arguments: Mapping[str, Any]
    ) -> str | None:
        if name != "memory" or not self._enabled():
            return None
        return self._tool(session).handle(arguments)

    @hookimpl(trylast=True)
    def memory_sync(self, turn: Turn, session: SessionInfo) -> None:
        """A turn ended: the memory tool's consolidation attempts count from zero again."""
        tool = self._tools.get((session.session_id, session.user_id))
        if tool is not None:
            tool.new_turn()

    @hookimpl(trylast=True)
    def memory_on_pre_compress(self, messages: Sequence[Message], session: SessionInfo) -> None:
        """A compaction rewrites the prompt anyway: the next block is a fresh snapshot."""
        self._snapshots.pop((session.session_id, session.user_id), None)

    @hookimpl(trylast=True)
    def memory_session_end(self, session: SessionInfo, reason: str) -> None:
        key = (session.session_id, session.user_id)
        self._snapshots.pop(key, None)
        self._tools.pop(key, None)
