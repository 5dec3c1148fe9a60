"""Review E, 2: a rotating compaction (``compression.in_place: false``) moves the live
conversation to a child session id mid-turn, the page the model read still in its context.
The child's taint index starts with the parent's, in the memory provider and in the engine
(called as hermes-agent's ``conversation_compression`` calls them); only a reset starts clean."""

from __future__ import annotations

from pathlib import Path

from hermes_agent_support import need_hermes_agent

need_hermes_agent()

from test_hermes_agent_observer import IBAN, PAGE, Context, add, home, memory_for  # noqa: E402

from hermes_plugins.hermes_agent import observer  # noqa: E402
from hermes_plugins.hermes_agent.engine import HermesContextEngine  # noqa: E402

__all__ = ["home"]  # the fixture


def memory_text(root: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in root.rglob("MEMORY.md"))


def test_a_compaction_switch_keeps_the_page_in_the_providers_index(home: Path) -> None:
    ctx = Context()
    assert observer.register_observer(ctx)
    memory = memory_for("chat-p")
    ctx.fire("post_tool_call", tool_name="web_fetch", result=PAGE, session_id="chat-p")
    memory.on_session_switch(
        "chat-c", parent_session_id="chat-p", reset=False, reason="compression"
    )
    assert add(memory, f"Invoices go to IBAN {IBAN}.").get("staged") is True
    assert add(memory, "The project uses tox.").get("staged") is None  # the model's own words
    assert "DE89" not in memory_text(home)
    memory.shutdown()


def test_a_reset_starts_a_clean_index(home: Path) -> None:
    ctx = Context()
    observer.register_observer(ctx)
    memory = memory_for("chat-p")
    ctx.fire("post_tool_call", tool_name="web_fetch", result=PAGE, session_id="chat-p")
    memory.on_session_switch("chat-new", parent_session_id="chat-p", reset=True)
    assert add(memory, f"Invoices go to IBAN {IBAN}.").get("staged") is None
    memory.shutdown()


def test_the_engine_carries_the_index_into_the_compactions_child(home: Path) -> None:
    ctx = Context()
    observer.register_observer(ctx)
    engine = HermesContextEngine()
    engine.update_model("agent-model", 65_536)
    engine.on_session_start("chat-e", platform="cli", model="agent-model")
    assert engine.should_compress(10) is False  # opens our session for chat-e
    ctx.fire("post_tool_call", tool_name="web_fetch", result=PAGE, session_id="chat-e")
    # hermes-agent's rotation: the engine hears first, the memory provider opens the child
    engine.on_session_start(
        "chat-e2", boundary_reason="compression", old_session_id="chat-e", platform="cli"
    )
    assert engine.should_compress(10) is False  # the child opens here, index carried
    memory = memory_for("chat-e2")
    assert add(memory, f"Invoices go to IBAN {IBAN}.").get("staged") is True
    assert "DE89" not in memory_text(home)
    memory.shutdown()
    engine.on_session_end("chat-e2", [])


def test_the_engine_carries_the_providers_index_when_its_own_was_never_opened(
    home: Path,
) -> None:
    ctx = Context()
    observer.register_observer(ctx)
    parent = memory_for("chat-f")  # the provider holds the parent; the engine never used it
    ctx.fire("post_tool_call", tool_name="web_fetch", result=PAGE, session_id="chat-f")
    engine = HermesContextEngine()
    engine.update_model("agent-model", 65_536)
    engine.on_session_start("chat-f", platform="cli", model="agent-model")
    engine.on_session_start(
        "chat-f2", boundary_reason="compression", old_session_id="chat-f", platform="cli"
    )
    parent.shutdown()  # the parent closes before the child opens
    assert engine.should_compress(10) is False
    child = memory_for("chat-f2")
    assert add(child, f"Invoices go to IBAN {IBAN}.").get("staged") is True
    child.shutdown()
    engine.on_session_end("chat-f2", [])
