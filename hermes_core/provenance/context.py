"""The write's context, carried from the session to the writers in a ``ContextVar``.

Why a ContextVar and not a tool argument: the model writes the tool arguments, so it must not
be able to claim where its words came from. The session sets the context around its own call
into the memory tool or ``skill_manage``; built-in tools run inline in the same thread, so
the writer sees it. A write made outside any session (the CLI, library use, a thread of its
own) sees none.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from hermes_core.provenance.taint import TaintIndex

__all__ = ["WriteContext", "current", "using"]


@dataclass(frozen=True)
class WriteContext:
    """What a writer needs to judge a write: the session's index and who is writing."""

    index: TaintIndex
    session_id: str | None = None
    user_id: str | None = None
    source: str = "model"  # whose call this is: the model in conversation, or the review
    #: the review only: a quote of the user's own words, checked, backs this write
    backed: bool = False
    #: the review only: why the write is (or is not) backed, kept with its provenance
    note: str | None = None


_CURRENT: ContextVar[WriteContext | None] = ContextVar("hermes_write_context", default=None)


def current() -> WriteContext | None:
    """The context of the write in progress, or None outside a session's tool call."""
    return _CURRENT.get()


@contextlib.contextmanager
def using(context: WriteContext) -> Iterator[WriteContext]:
    """Make ``context`` current for the writes inside the ``with`` block."""
    token = _CURRENT.set(context)
    try:
        yield context
    finally:
        _CURRENT.reset(token)
