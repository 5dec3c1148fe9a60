"""Context compression: keep a transcript under its token budget without breaking it.

The pipeline (spec 10): prune old tool results, protect the head and the tail by whole turn
groups, summarise the middle (LLM, with a layered fallback), assemble, check the invariants.
Each phase is a pure module; :mod:`~hermes_core.compression.engine` ties them together.
"""
