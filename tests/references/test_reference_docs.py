"""docs/references.md: its example runs, and the warning it shows is the one produced."""

from __future__ import annotations

import re
from pathlib import Path

from reference_support import tokens_by_length

from hermes_core.config.settings import ReferencesSettings
from hermes_core.references import expand_references

DOC = Path(__file__).resolve().parents[2] / "docs" / "references.md"


def test_the_python_example_runs() -> None:
    python_section = DOC.read_text(encoding="utf-8").split("\n## Python\n", 1)[1]
    (block,) = re.findall(r"```python\n(.*?)```", python_section, re.DOTALL)
    exec(compile(block, str(DOC), "exec"), {})


def test_the_shown_warning_is_real(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("K=1")
    result = expand_references(
        "@file:.env",
        workspace=tmp_path,
        context_length=1000,
        count_tokens=tokens_by_length,
        settings=ReferencesSettings(),
    )
    assert f"- {result.warnings[0]}\n" in DOC.read_text(encoding="utf-8")
