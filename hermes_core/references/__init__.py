"""@-references in user messages (spec 40 §5): ``@file:``, ``@folder:``, ``@diff``,
``@staged``, ``@git:N`` and ``@url:``, expanded into the API copy of the message.

:func:`expand_references` is the entry point (see ``docs/references.md``).
"""

from __future__ import annotations

from hermes_core.references.expand import Expansion, expand_references
from hermes_core.references.parse import Reference, find_references

__all__ = ["Expansion", "Reference", "expand_references", "find_references"]
