"""RetainDB external memory provider: a REST client over httpx and a SQLite write-behind queue.

No SDK: the ``retaindb`` extra is empty, so this plugin always imports.
"""

from hermes_plugins.retaindb.provider import RetainDBProvider
from hermes_plugins.retaindb.settings import RetainDBSettings

__all__ = ["RetainDBProvider", "RetainDBSettings"]
