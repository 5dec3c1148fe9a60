"""The one exception of the references package: a reference that is not attached, and why."""

from __future__ import annotations

__all__ = ["Refused"]


class Refused(Exception):
    """``reason`` says what is wrong and what to do; it becomes the user's warning."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
