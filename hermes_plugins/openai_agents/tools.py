"""Our memory tools (``memory``, ``session_search``, ``skill_manage``, a provider's tools) as
the Agents SDK's ``FunctionTool`` objects, and the run hooks that hand us each response's usage.

Why a function tool per schema rather than decorated Python functions: the schemas are ours
(the same the OpenAI and Anthropic hosts get), and every call goes through the session's
``handle_tool_call``, which answers JSON text for errors too, so a tool call of ours never
raises into the SDK's run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

__all__ = ["agents_sdk", "hermes_tools", "usage_hooks"]


class HermesSession(Protocol):
    """What the tools and hooks use of :class:`~hermes_plugins.openai_agents.session.HermesSession`
    (named here, not imported: the session imports this module)."""

    hermes: Any

    async def call_tool(self, name: str, arguments: str | Mapping[str, Any]) -> str: ...

    async def on_llm_end(self, usage: object) -> None: ...


_EMPTY = {"type": "object", "properties": {}}


def agents_sdk() -> Any:
    """The ``agents`` package, or the pip line that installs it."""
    try:
        import agents
    except ImportError as exc:
        from hermes_core.errors import MissingExtraError
        from hermes_core.plugins.loading import own_install_line

        hint = own_install_line("openai-agents")
        raise MissingExtraError(
            f"the OpenAI Agents SDK is not installed ({exc}); {hint}", install_hint=hint
        ) from exc
    return agents


def hermes_tools(session: HermesSession) -> list[Any]:
    """The session's tools as ``FunctionTool`` objects (non-strict schemas: ours have optional
    arguments), each bound to ``session``."""
    function_tool = agents_sdk().FunctionTool
    tools = []
    for schema in session.hermes.tools():
        function = schema.get("function") or {}
        name = str(function.get("name") or "")
        if not name:
            continue
        tools.append(
            function_tool(
                name=name,
                description=str(function.get("description") or ""),
                params_json_schema=dict(function.get("parameters") or _EMPTY),
                on_invoke_tool=_invoker(session, name),
                strict_json_schema=False,
            )
        )
    return tools


def _invoker(session: HermesSession, name: str) -> Any:
    async def invoke(context: Any, arguments: str) -> str:
        return await session.call_tool(name, arguments)

    return invoke


def usage_hooks(session: HermesSession) -> Any:
    """``RunHooks`` whose ``on_llm_end`` hands each response's usage to ``session``."""
    run_hooks: Any = agents_sdk().RunHooks

    class UsageHooks(run_hooks):  # type: ignore[misc]
        async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
            await session.on_llm_end(getattr(response, "usage", None))

    return UsageHooks()
