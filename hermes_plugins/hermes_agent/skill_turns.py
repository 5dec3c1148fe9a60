"""What the user typed in a hermes-agent ``/skill`` turn.

Both observers need it (the tool-result one and the request one); it lives apart from both so
neither imports the other for it.
"""

from __future__ import annotations

__all__ = ["user_instruction"]


def user_instruction(message: str) -> str | None:
    """What the user typed in a ``/skill`` turn's message, as hermes-agent's own helper finds
    it (None: a bare ``/skill``); any other message as it is."""
    try:  # hermes-agent is there whenever it calls us
        from agent.skill_commands import extract_user_instruction_from_skill_message
    except ImportError:  # an older hermes-agent: no skill scaffolding to tell apart
        return message
    found = extract_user_instruction_from_skill_message(message)
    return found if isinstance(found, str) or found is None else message
