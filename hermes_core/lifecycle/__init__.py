"""A user's data over its whole life: export and import (``bundle*``), and its siblings.

Why a floor above the stores: these operations read and write sessions, memory and skills
together, through the stores' own APIs, for one user at a time.
"""

from __future__ import annotations

__all__: list[str] = []
