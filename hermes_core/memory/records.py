"""A folder of staged-write records (``$HERMES_HOME/pending/<kind>/<id>.json``).

Why shared: memory and skills stage writes the same way: one JSON record per write, named by
eight hex digits, listed oldest first, a record that cannot be read reported by id instead of
breaking the listing. Each kind says how to read and check its own records (:meth:`get`).
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final, Generic, Protocol, TypeVar

__all__ = ["RecordDirectory"]

_ID: Final = re.compile(r"[0-9a-f]{8}")


class _Record(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def created(self) -> float: ...


R = TypeVar("R", bound=_Record)


class RecordDirectory(Generic[R]):
    """The records of one kind; ``command`` names the command that lists them."""

    command = "memory"

    def __init__(self, directory: str | Path, clock: Callable[[], float] = time.time) -> None:
        self.directory = Path(directory)
        self.clock = clock

    def path(self, pending_id: str) -> Path:
        if not isinstance(pending_id, str) or not _ID.fullmatch(pending_id):
            raise KeyError(
                f"{pending_id!r} is not a pending id (8 hex digits, see "
                f"`hermes-context {self.command} pending`)"
            )
        return self.directory / f"{pending_id}.json"

    def new_id(self) -> str:
        while True:
            candidate = secrets.token_hex(4)
            if not self.path(candidate).exists():
                return candidate

    def get(self, pending_id: str) -> R:
        """The record; KeyError (with what to do) when it is missing or unreadable."""
        raise NotImplementedError

    def all(self) -> tuple[list[R], list[str]]:
        """Every readable record, oldest first, and the ids of unreadable ones."""
        records: list[R] = []
        broken: list[str] = []
        if not self.directory.is_dir():
            return records, broken
        for path in sorted(self.directory.glob("*.json")):
            if not _ID.fullmatch(path.stem):
                continue
            try:
                records.append(self.get(path.stem))
            except KeyError:
                broken.append(path.stem)
        records.sort(key=lambda r: (r.created, r.id))
        return records, broken

    def delete(self, pending_id: str) -> bool:
        path = self.path(pending_id)
        existed = path.exists()
        path.unlink(missing_ok=True)
        return existed
