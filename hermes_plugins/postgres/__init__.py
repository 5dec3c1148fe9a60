"""The ``postgres`` storage backend: sessions and memory in one PostgreSQL database.

Loaded when ``sessions.backend`` or ``memory.backend`` is ``postgres`` (the ``postgres`` extra:
``pip install '/path/to/hermes-context[postgres]'``). Every host process with the same
``sessions.dsn`` sees one state: a user's next turn may land on any of them.
"""

from __future__ import annotations

from hermes_plugins.postgres.plugin import PostgresBackend

__all__ = ["PostgresBackend"]
