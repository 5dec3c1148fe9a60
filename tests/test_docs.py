"""The generated references match the code, and every hook is documented."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from hermes_core import hookspecs
from hermes_core.docgen import GENERATED

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_reference_is_current(name: str) -> None:
    committed = (DOCS / name).read_text(encoding="utf-8")
    assert committed == GENERATED[name](), (
        f"docs/{name} is stale; run `python -m hermes_core.docgen`"
    )


def test_every_hook_has_a_policy_and_a_manual_entry() -> None:
    specs = {
        name
        for name, value in vars(hookspecs).items()
        if callable(value) and hasattr(value, "hermes_context_spec")
    }
    assert specs == set(hookspecs.HOOK_POLICIES)
    for name in specs:
        doc = inspect.getdoc(getattr(hookspecs, name)) or ""
        assert "Policy:" in doc, name
