"""``skill_manage`` through its handler, with hermes-agent's argument names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from skill_support import skill_md

from hermes_core.skills import SKILL_MANAGE_SCHEMA, SkillLibrary, SkillTool


@pytest.fixture
def tool(lib: SkillLibrary) -> SkillTool:
    return SkillTool(lib)


def call(tool: SkillTool, arguments: Any) -> dict[str, Any]:
    answer = tool.handle(arguments)
    assert isinstance(answer, str)
    result: dict[str, Any] = json.loads(answer)
    return result


def test_the_schema_uses_hermes_agent_argument_names() -> None:
    function = SKILL_MANAGE_SCHEMA["function"]
    assert SKILL_MANAGE_SCHEMA["type"] == "function" and function["name"] == "skill_manage"
    properties = function["parameters"]["properties"]
    assert {
        "action",
        "name",
        "content",
        "category",
        "old_string",
        "new_string",
        "file_path",
        "file_content",
        "replace_all",
    } == set(properties)
    assert properties["action"]["enum"] == [
        "list",
        "view",
        "create",
        "edit",
        "patch",
        "write_file",
        "remove_file",
        "delete",
    ]
    assert function["parameters"]["required"] == ["action"]
    json.dumps(SKILL_MANAGE_SCHEMA)  # plain JSON


def test_every_action_as_a_hermes_trained_model_calls_it(tool: SkillTool, root: Path) -> None:
    created = call(
        tool,
        json.dumps(
            {
                "action": "create",
                "name": "deploy-staging",
                "category": "devops",
                "content": skill_md("deploy-staging"),
            }
        ),
    )
    assert created["success"] and created["path"] == "devops/deploy-staging"
    listing = call(tool, {"action": "list"})
    assert listing["skills"] == [
        {
            "name": "deploy-staging",
            "category": "devops",
            "description": "Use when deploying the web app to staging.",
        }
    ]
    assert listing["categories"] == ["devops"] and listing["count"] == 1
    assert call(tool, {"action": "list", "category": "web"})["count"] == 0
    patched = call(
        tool,
        {
            "action": "patch",
            "name": "deploy-staging",
            "old_string": "Run `make deploy`.",
            "new_string": "Run `make deploy ENV=staging`.",
            "replace_all": False,
        },
    )
    assert patched["success"], patched
    written = call(
        tool,
        {
            "action": "write_file",
            "name": "deploy-staging",
            "file_path": "references/checklist.md",
            "file_content": "- health page is green\n",
        },
    )
    assert written["success"]
    assert call(
        tool,
        {
            "action": "patch",
            "name": "deploy-staging",
            "file_path": "references/checklist.md",
            "old_string": "green",
            "new_string": "green for 5 minutes",
        },
    )["success"]
    view = call(tool, {"action": "view", "name": "deploy-staging"})
    assert "ENV=staging" in view["content"]
    assert view["linked_files"] == {"references": ["references/checklist.md"]}
    ref = call(
        tool,
        {"action": "view", "name": "deploy-staging", "file_path": "references/checklist.md"},
    )
    assert ref["content"] == "- health page is green for 5 minutes\n"
    edited = call(
        tool,
        {
            "action": "edit",
            "name": "deploy-staging",
            "content": skill_md("deploy-staging", body="# New\n1. Ship.\n"),
        },
    )
    assert edited["success"]
    removed = call(
        tool,
        {"action": "remove_file", "name": "deploy-staging", "file_path": "references/checklist.md"},
    )
    assert removed["success"]
    assert call(tool, {"action": "delete", "name": "deploy-staging"})["success"]
    assert call(tool, {"action": "list"})["count"] == 0
    assert not (root / "devops").exists()


@pytest.mark.parametrize(
    ("arguments", "needle"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ({}, "action must be one of"),
        ({"action": "rename", "name": "x"}, "action must be one of list, view, create"),
        ({"action": "create", "name": "x"}, "create needs content"),
        ({"action": "create", "content": "x"}, "create needs name"),
        ({"action": "create", "name": "", "content": "x"}, "create needs name"),
        ({"action": "edit", "name": "x"}, "edit needs content"),
        ({"action": "patch", "name": "x", "new_string": "b"}, "patch needs old_string"),
        ({"action": "patch", "name": "x", "old_string": "a"}, "patch needs new_string"),
        ({"action": "write_file", "name": "x", "file_content": "a"}, "write_file needs file_path"),
        ({"action": "write_file", "name": "x", "file_path": "assets/a"}, "needs file_content"),
        ({"action": "remove_file", "name": "x"}, "remove_file needs file_path"),
        ({"action": "delete"}, "delete needs name"),
        ({"action": "view"}, "view needs name"),
        ({"action": "view", "name": 5}, "name must be a string"),
        ({"action": "create", "name": "x", "content": ["a"]}, "content must be a string"),
        ({"action": "list", "task_id": "1"}, "unknown argument(s) 'task_id'"),
        (
            {
                "action": "patch",
                "name": "x",
                "old_string": "a",
                "new_string": "b",
                "replace_all": 1,
            },
            "replace_all must be false",
        ),
        ({"action": "view", "name": "nope"}, "no skill called 'nope'"),
    ],
)
def test_bad_calls_get_an_error_the_model_can_act_on(
    tool: SkillTool, root: Path, arguments: Any, needle: str
) -> None:
    result = call(tool, arguments)
    assert result["success"] is False and needle in result["error"], result
    assert not root.exists()


def test_nulls_for_unused_arguments_are_fine(tool: SkillTool) -> None:
    args = {
        "action": "create",
        "name": "n",
        "content": skill_md("n"),
        "category": None,
        "file_path": None,
        "file_content": None,
        "old_string": None,
        "new_string": None,
        "replace_all": None,
    }
    assert call(tool, args)["success"]


def test_category_is_used_only_by_create(tool: SkillTool, root: Path) -> None:
    assert call(tool, {"action": "create", "name": "c", "content": skill_md("c")})["success"]
    edit = {"action": "edit", "name": "c", "content": skill_md("c"), "category": "elsewhere"}
    assert call(tool, edit)["success"]
    assert (root / "c" / "SKILL.md").exists() and not (root / "elsewhere").exists()


def test_an_unexpected_failure_is_an_error_result_not_an_exception(
    lib: SkillLibrary, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(lib, "scan_all", boom)
    result = call(SkillTool(lib), {"action": "list"})
    assert result["success"] is False and "disk on fire" in result["error"]
