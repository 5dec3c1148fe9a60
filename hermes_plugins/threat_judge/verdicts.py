"""Verdicts remembered across processes: ``<home>/threat_judge/verdicts.json``.

Why on disk: the hook cannot tell a write from a re-render, and every new process renders
every memory entry again, so an in-memory cache alone costs one request per entry at each
start. A key is a digest of the scope, the text as sent, the rubric version and the model,
so a new rubric or another model judges again. Failures are never stored. The file is the
user's (mode 0600, written whole and renamed into place); a file that cannot be read is
ignored and rewritten, never trusted in part, and it holds at most ``size`` verdicts, the
least recently used dropped first.

The verdicts hold excerpts of the judged text (a user's memory entries, tool results) and
not whose text it was, so :meth:`Verdicts.forget` (the plugin's ``memory_forget``) drops
them all, file included (overwritten, then unlinked): they are asked again. A process that
loaded the file before sees it changed on disk (its identity: inode, size, time) and reads
it again before its next use, so it never writes forgotten verdicts back.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from hermes_core.types import Finding

__all__ = ["FILE_NAME", "Verdicts"]

FILE_NAME = "verdicts.json"
_FORMAT = 1
_FIELDS = 5  # pattern_id, category, message, plugin, excerpt
_FIELD_MAX = 600


class Verdicts:
    """An LRU of verdicts (a tuple of findings, empty for allow), kept in ``directory``
    when it is given; ``size`` 0 keeps nothing."""

    def __init__(self, directory: Path | None, size: int, logger: logging.Logger) -> None:
        self.size = size
        self.path = directory / FILE_NAME if directory is not None and size else None
        self._logger = logger
        self._lock = threading.Lock()
        self._items: OrderedDict[str, tuple[Finding, ...]] | None = None
        self._seen: tuple[int, int, int] | None = None  # the file as last read or written

    def get(self, key: str) -> tuple[Finding, ...] | None:
        with self._lock:
            items = self._loaded()
            if key not in items:
                return None
            items.move_to_end(key)
            return items[key]

    def put(self, key: str, findings: tuple[Finding, ...]) -> None:
        if not self.size:
            return
        with self._lock:
            items = self._loaded()
            items[key] = findings
            items.move_to_end(key)
            while len(items) > self.size:
                items.popitem(last=False)
            self._save(items)

    def forget(self) -> int:
        """Drop every verdict, here and on disk (see the module docstring); how many were
        kept."""
        from hermes_core.lifecycle.forget_files import shred

        with self._lock:
            count = len(self._loaded())
            self._items = OrderedDict()
            if self.path is not None:
                for path in (self.path, *self.path.parent.glob(".verdicts-*")):
                    if path.is_file() and not path.is_symlink():
                        shred(path)
            self._seen = self._identity()
        return count

    def _identity(self) -> tuple[int, int, int] | None:
        if self.path is None:
            return None
        try:
            stat = self.path.stat()
        except OSError:
            return None
        return (stat.st_ino, stat.st_size, stat.st_mtime_ns)

    def _loaded(self) -> OrderedDict[str, tuple[Finding, ...]]:
        seen = self._identity()
        if self._items is None or seen != self._seen:  # first use, or changed on disk
            self._items = self._read()
            self._seen = seen
        return self._items

    def _read(self) -> OrderedDict[str, tuple[Finding, ...]]:
        items: OrderedDict[str, tuple[Finding, ...]] = OrderedDict()
        if self.path is None or not self.path.is_file():
            return items
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("format") != _FORMAT:
                raise ValueError("not a verdict file of this version")
            for key, rows in data["verdicts"]:
                items[_text(key)] = tuple(_finding(row) for row in rows)
        except (OSError, ValueError, TypeError, KeyError) as exc:
            self._logger.warning(
                "threat judge: ignoring its verdict cache %s (%s); verdicts are asked again",
                self.path,
                type(exc).__name__,
            )
            return OrderedDict()
        while len(items) > self.size:
            items.popitem(last=False)
        return items

    def _save(self, items: OrderedDict[str, tuple[Finding, ...]]) -> None:
        if self.path is None:
            return
        rows = [[key, [_row(f) for f in findings]] for key, findings in items.items()]
        text = json.dumps({"format": _FORMAT, "verdicts": rows}, ensure_ascii=False)
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(prefix=".verdicts-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(text)
                os.chmod(temp, 0o600)
                os.replace(temp, self.path)
                self._seen = self._identity()
            except BaseException:
                Path(temp).unlink(missing_ok=True)
                raise
        except OSError as exc:  # a read-only home costs requests, not writes
            self._logger.warning("threat judge: cannot keep verdicts in %s (%s)", self.path, exc)


def _row(finding: Finding) -> list[str]:
    return [finding.pattern_id, finding.category, finding.message, finding.plugin, finding.excerpt]


def _finding(row: Any) -> Finding:
    if not isinstance(row, list) or len(row) != _FIELDS:
        raise ValueError("a stored finding is not a list of five strings")
    return Finding(*(_text(value) for value in row))


def _text(value: Any) -> str:
    if not isinstance(value, str) or len(value) > _FIELD_MAX:
        raise ValueError("a stored value is not a short string")
    return value
