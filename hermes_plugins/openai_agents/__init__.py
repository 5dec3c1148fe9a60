"""hermes-context for the OpenAI Agents SDK (the ``openai-agents`` extra:
``pip install '/path/to/hermes-context[openai-agents]'``).

``Runner.run(agent, input, session=HermesSession(id, user_id=...))``: the SDK's history lives in
our session store and is compacted by our compressor; ``session.run_config()`` prepares every
request (long tool loops stay under the window too) and ``session.tools()`` gives the agent our
memory tools. See docs/integrations.md.
"""

from __future__ import annotations

from hermes_plugins.openai_agents.session import HermesSession
from hermes_plugins.openai_agents.tools import hermes_tools

__all__ = ["HermesSession", "hermes_tools"]
