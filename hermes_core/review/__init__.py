"""Background review: after a reply, an auxiliary model keeps what is worth keeping.

``nudges`` says when a review is due, ``prompt`` is what the review model is told, ``quotes``
checks that a user-profile fact quotes the user, ``gate`` decides which tool calls may run,
``runner`` runs reviews on a daemon thread. See ``docs/review.md``.
"""

from __future__ import annotations

from hermes_core.review.gate import KIND_TOOLS, REVIEW_TOOLS, review_schema
from hermes_core.review.nudges import ReviewCounters, tool_iterations, tools_used
from hermes_core.review.prompt import NOTHING_TO_SAVE, review_prompt
from hermes_core.review.quotes import QuoteBook
from hermes_core.review.runner import BackgroundReview, ReviewOutcome

__all__ = [
    "KIND_TOOLS",
    "NOTHING_TO_SAVE",
    "REVIEW_TOOLS",
    "BackgroundReview",
    "QuoteBook",
    "ReviewCounters",
    "ReviewOutcome",
    "review_prompt",
    "review_schema",
    "tool_iterations",
    "tools_used",
]
