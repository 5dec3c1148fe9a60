"""One rule for invalid transcripts on the command line, as on every other path
(docs/formats.md, "Invalid transcripts"): what a provider would reject is refused, exit 1 and
nothing written; a trailing turn in flight (tool calls still without results) is kept as it
is, with a warning here, where no host will append the results."""

from __future__ import annotations

from typing import Any

from hermes_core.cli.common import EXIT_INPUT, CommandError
from hermes_core.cli.escaped import err


def refuse_invalid(path: str, messages: list[dict[str, Any]]) -> None:
    """Exit 1 naming the first problem (``compress`` gets the same from the compressor)."""
    from hermes_core.transcript.validation import validate_messages

    problems = validate_messages(messages, allow_pending_tool_calls=True)
    if problems:
        many = f"{len(problems):,} problem{'' if len(problems) == 1 else 's'}"
        raise CommandError(
            f"{path}: invalid transcript ({many}): {problems[0]}; "
            f"`hermes-context validate {path}` lists every problem",
            EXIT_INPUT,
        )


def warn_in_flight(path: str, messages: list[dict[str, Any]]) -> None:
    """One stderr line when the transcript ends with tool calls that have no result yet.
    O(size of that last batch)."""
    from hermes_core.compression.in_flight import in_flight_start
    from hermes_core.transcript.validation import tool_call_ids

    start = in_flight_start(messages)
    if start >= len(messages):
        return
    answered = {m.get("tool_call_id") for m in messages[start + 1 :]}
    open_ids = [cid for cid in tool_call_ids(messages[start]) if cid not in answered]
    err(
        f"hermes-context: warning: {path}: message {start} (0-based) ends the transcript with "
        f"{len(open_ids):,} tool call(s) still without a result ({', '.join(open_ids)}): a turn "
        "in flight, kept verbatim at the end; a provider refuses the file until their results "
        "are appended (`hermes-context validate` reports them)"
    )
