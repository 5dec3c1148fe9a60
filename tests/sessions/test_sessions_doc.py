"""The example in docs/sessions.md runs as written."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "sessions.md"


def test_sessions_page_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (block,) = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # its mkdtemp() lands here
    namespace: dict[str, object] = {}
    exec(compile(block, str(DOC), "exec"), namespace)
    assert namespace["hits"]
    assert [p.name for p in tmp_path.glob("*/state.db")] == ["state.db"]
