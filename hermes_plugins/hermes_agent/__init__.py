"""hermes-context inside hermes-agent (the ``hermes-agent`` extra).

Two plugins, as hermes-agent 0.19 takes them: a context engine (the ``hermes_agent.plugins``
entry point ``hermes-context``, whose ``register(ctx)`` calls ``ctx.register_context_engine``;
chosen by ``context.engine: hermes-context``) and a memory provider (loaded from the shim
``hermes-context hermes-agent install`` writes to ``$HERMES_HOME/plugins/hermes_context``;
chosen by ``memory.provider: hermes_context``). Modules: ``engine``, ``provider``, ``runtime``
(what both share in a process), ``tools`` (names and the error guard), ``observer`` (tool
results into our taint index as they arrive), ``request_observer`` (what each model request
carries), ``carry`` (a parent's taint index into the session a compaction moves to),
``install`` (the shim).

hermes-agent is imported only by ``engine`` and ``provider``, and only when hermes-agent
loads them (``observer`` asks it to find a ``/skill`` turn's instruction, inside a call
hermes-agent makes); ``install`` works without it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["memory_provider", "register", "register_memory"]


def register(ctx: Any) -> None:
    """hermes-agent's plugin entry: our context engine, and the ``post_tool_call`` observer
    that shows our sessions each tool result as it arrives (``observer``)."""
    from hermes_plugins.hermes_agent.engine import HermesContextEngine
    from hermes_plugins.hermes_agent.observer import register_observer

    ctx.register_context_engine(HermesContextEngine())
    register_observer(ctx)


def memory_provider() -> Any:
    """A fresh memory provider (hermes-agent makes one per agent)."""
    from hermes_plugins.hermes_agent.provider import HermesContextMemory

    return HermesContextMemory()


def register_memory(ctx: Any) -> None:
    """The memory-provider loader's entry (the installed shim calls it)."""
    ctx.register_memory_provider(memory_provider())
