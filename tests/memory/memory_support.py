"""The toy scanner the store tests use (its own module: ``from conftest import`` is ambiguous
once several test folders have a conftest.py)."""

from __future__ import annotations

from hermes_core.types import Finding


def toy_scanner(text: str) -> list[Finding]:
    """Flags the word ``EVIL``, so store behaviour is tested apart from the real patterns."""
    if "EVIL" in text:
        return [Finding("toy_evil", "override", "the toy pattern")]
    return []
