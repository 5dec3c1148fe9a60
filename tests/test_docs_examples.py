"""The plugin how-to's code runs: its plugin module and its test pass under real pytest."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from subpytest import run_pytest

ROOT = Path(__file__).resolve().parent.parent


def python_blocks(doc: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), re.DOTALL)


def test_plugin_howto_example_passes_its_own_test(tmp_path: Path) -> None:
    plugin_source, test_source = python_blocks(ROOT / "docs" / "plugins.md")
    package = tmp_path / "my_recall"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "plugin.py").write_text(plugin_source)
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["hermes_core.testing"]\n')
    (tmp_path / "test_keyword_recall.py").write_text(test_source)
    proc = run_pytest(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


def test_compression_page_examples_run(monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = python_blocks(ROOT / "docs" / "compression.md")
    assert len(blocks) == 3  # the third, a plan_compaction plugin, is run below
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {}
    for block in blocks[:2]:
        exec(compile(block, "docs/compression.md", "exec"), namespace)
    result = namespace["result"]
    assert result.status == "compressed" and result.summarizer == "fallback"  # type: ignore[attr-defined]
    assert namespace["originals"]  # the replaced messages came back in `archived`
    assert namespace["compressor"].last_prompt_tokens == 20_000  # type: ignore[attr-defined]


def test_compression_page_plan_plugin_runs(tmp_path: Path) -> None:
    """The example plugin keeps a failing test's output (with its call) verbatim."""
    from hermes_core.compression.engine import Compressor
    from hermes_core.compression.hooks import host_hooks
    from hermes_core.testing import make_host

    namespace: dict[str, Any] = {}
    exec(compile(python_blocks(ROOT / "docs" / "compression.md")[2], "plan", "exec"), namespace)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for n in range(12):
        output = "\n".join(f"test_{k} passed" for k in range(60)) + ("\nFAILED test_x" * (n == 3))
        call = {
            "id": f"c{n}",
            "type": "function",
            "function": {"name": "terminal", "arguments": "{}"},
        }
        messages += [
            {"role": "user", "content": f"Run suite {n}. " + "Context. " * 40},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": output},
            {"role": "assistant", "content": f"Suite {n} done. " + "Ok. " * 30},
        ]
    with make_host(tmp_path) as host:
        host.plugins.register(namespace["KeepFailingTests"](), name="keep-failing")
        compressor = Compressor(
            context_length=8_000, hooks=host_hooks(host.plugins, mode="fallback")
        )
        result = compressor.compress(messages, force=True)
    assert result.status == "compressed" and result.stats["plan"]["kept"] == 2
    assert messages[15] in result.messages and messages[14] in result.messages


def test_memory_page_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (block,) = python_blocks(ROOT / "docs" / "memory.md")
    monkeypatch.setenv("HOME", str(tmp_path))  # the example writes under ~/.hermes
    namespace: dict[str, object] = {}
    exec(compile(block, "docs/memory.md", "exec"), namespace)
    store = namespace["store"]
    assert store.entries("user") == ["Prefers short answers, no preamble"]  # type: ignore[attr-defined]
    assert (tmp_path / ".hermes" / "memories" / "users" / "alice" / "USER.md").is_file()
    assert "USER PROFILE (who the user is)" in store.snapshot()  # type: ignore[attr-defined]
