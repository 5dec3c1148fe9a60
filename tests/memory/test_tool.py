"""The ``memory`` tool: schema, JSON answers, argument errors, the consolidation stop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from memory_support import toy_scanner

from hermes_core.memory import MemoryStore
from hermes_core.memory.approval import MemoryWriter, PendingWrites
from hermes_core.memory.tool import MAX_CONSOLIDATION_FAILURES, MEMORY_TOOL_SCHEMA, MemoryTool


@pytest.fixture
def tool(memdir: Path, tmp_path: Path) -> MemoryTool:
    store = MemoryStore(memdir, memory_char_limit=40, scanner=toy_scanner)
    return MemoryTool(MemoryWriter(store, PendingWrites(tmp_path / "pending")))


def call(tool: MemoryTool, arguments: Any) -> dict[str, Any]:
    answer = tool.handle(arguments)
    assert isinstance(answer, str)
    result: dict[str, Any] = json.loads(answer)
    return result


def test_schema_is_an_openai_function() -> None:
    function = MEMORY_TOOL_SCHEMA["function"]
    assert MEMORY_TOOL_SCHEMA["type"] == "function" and function["name"] == "memory"
    params = function["parameters"]
    assert set(params["properties"]) == {"action", "target", "content", "old_text", "operations"}
    assert params["properties"]["action"]["enum"] == ["add", "replace", "remove"]
    assert params["properties"]["target"]["enum"] == ["memory", "user"]
    description = function["description"]
    assert "preferences" in description and "task progress" in description
    json.dumps(MEMORY_TOOL_SCHEMA)  # serialisable as sent on the wire


def test_add_replace_remove_through_the_tool(tool: MemoryTool) -> None:
    assert call(tool, {"action": "add", "target": "user", "content": "likes tea"})["success"]
    replaced = call(
        tool,
        json.dumps({"action": "replace", "target": "user", "old_text": "tea", "content": "coffee"}),
    )
    assert replaced["replaced"] == "likes tea"
    removed = call(tool, {"action": "remove", "target": "user", "old_text": "coffee"})
    assert removed["removed"] == "coffee" and removed["done"] is True


def test_batch_through_the_tool(tool: MemoryTool) -> None:
    result = call(
        tool,
        {
            "target": "memory",
            "operations": [{"action": "add", "content": "a"}, {"action": "add", "content": "b"}],
        },
    )
    assert result["success"] and tool.writer.store.entries("memory") == ["a", "b"]


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        (["add"], "JSON object"),
        ({"action": "add", "target": "diary", "content": "x"}, "'memory' or 'user'"),
        ({"action": "add", "content": "x"}, "'memory' or 'user'"),
        ({"action": "delete", "target": "memory"}, "'add', 'replace' or 'remove'"),
        ({"target": "memory"}, "'add', 'replace' or 'remove'"),
        ({"action": "add", "target": "memory"}, "needs content"),
        ({"action": "add", "target": "memory", "content": 7}, "must be a string"),
        ({"action": "replace", "target": "memory", "content": "x"}, "needs old_text"),
        ({"action": "add", "target": "memory", "content": "x", "sudo": True}, "unknown argument"),
        ({"action": "add", "target": "memory", "operations": []}, "either action or operations"),
        ({"target": "memory", "operations": "add x"}, "non-empty list"),
        ({"target": "memory", "operations": [{"action": "add"}]}, "needs content"),
        ({"action": "add", "target": "memory", "content": "EVIL"}, "Blocked: content matches"),
    ],
)
def test_every_invalid_call_gets_an_actionable_error(
    tool: MemoryTool, arguments: Any, words: str
) -> None:
    result = call(tool, arguments)
    assert result["success"] is False and words in result["error"]
    assert not tool.writer.store.path("memory").exists()


def test_no_arguments_at_all(tool: MemoryTool) -> None:
    assert "target" in call(tool, None)["error"]
    assert "target" in call(tool, "")["error"]


def test_three_failed_consolidations_end_with_a_final_answer(tool: MemoryTool) -> None:
    assert call(tool, {"action": "add", "target": "memory", "content": "x" * 30})["success"]
    too_big = {"action": "add", "target": "memory", "content": "y" * 30}
    for _ in range(MAX_CONSOLIDATION_FAILURES - 1):
        result = call(tool, too_big)
        assert result["reason"] == "over_limit" and "Make room" in result["error"]
    final = call(tool, too_big)
    assert final["done"] is True and "Stop retrying" in final["error"]
    # every further call this turn gets the same answer, even one that would succeed
    again = call(tool, {"action": "remove", "target": "memory", "old_text": "x"})
    assert "Stop retrying" in again["error"]
    assert tool.writer.store.entries("memory") == ["x" * 30]
    tool.new_turn()
    assert call(tool, {"action": "remove", "target": "memory", "old_text": "x"})["success"]


def test_an_internal_failure_is_an_answer_not_an_exception(tool: MemoryTool) -> None:
    def boom(text: str) -> list[Any]:
        raise RuntimeError("scanner exploded")

    tool.writer.store.scan = boom
    result = call(tool, {"action": "add", "target": "memory", "content": "x"})
    assert result["success"] is False and "scanner exploded" in result["error"]
