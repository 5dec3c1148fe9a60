"""docs/skills.md: its example runs and its index sample is what index() prints."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "skills.md"


def test_the_library_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (block,) = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    monkeypatch.setenv("HOME", str(tmp_path))  # the example writes under ~/.hermes
    namespace: dict[str, object] = {}
    exec(compile(block, "docs/skills.md", "exec"), namespace)
    view = json.loads(str(namespace["answer"]))
    assert view["success"] and "/healthz" in view["content"] and view["category"] == "devops"
    assert (tmp_path / ".hermes" / "skills" / "devops" / "deploy-staging" / "SKILL.md").is_file()
    header = str(namespace["prompt_block"]).splitlines()[0]
    assert header in DOC.read_text(encoding="utf-8")
