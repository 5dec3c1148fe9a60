"""Mem0 external memory provider for hermes-context (the ``mem0`` extra:
``pip install '/path/to/hermes-context[mem0]'``).

Mem0 reads ``MEM0_TELEMETRY`` once, when it is imported; a memory library should not send
usage events unless the operator asks for it, so it defaults to off here (export
``MEM0_TELEMETRY=True`` to opt in). This runs before any submodule imports the SDK.
"""

import os

os.environ.setdefault("MEM0_TELEMETRY", "False")

from hermes_plugins.mem0.provider import Mem0Provider

__all__ = ["Mem0Provider"]
