"""docs/review.md's example runs against the loopback LLM and saves the quoted preference."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fake_openai import FakeLLM, answer
from review_support import call, tool_calls

ROOT = Path(__file__).resolve().parents[2]


def test_the_review_page_example_runs(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (ROOT / "docs" / "review.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    block = block.replace("http://localhost:8000/v1", fake_llm.base_url)
    monkeypatch.setenv("HOME", str(tmp_path))  # the example writes under ~/.hermes
    fact = {
        "action": "add",
        "target": "user",
        "content": "Wants short answers, no preamble",
        "quote": "keep answers short, no preamble",
    }
    fake_llm.script(tool_calls(call("memory", fact)), answer("Saved one preference."))
    namespace: dict[str, object] = {}
    exec(compile(block, "docs/review.md", "exec"), namespace)
    store = namespace["store"]
    assert store.entries("user") == ["Wants short answers, no preamble"]  # type: ignore[attr-defined]
    kinds = [kind for kind, _ in namespace["events"]]  # type: ignore[attr-defined]
    assert kinds == ["review_started", "review_action", "review_finished"]
