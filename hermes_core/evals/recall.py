"""Recall figures: a transcript replayed through a session with forced compactions, then what
``session_recall`` gives back (docs/recall.md).

Why a replay and not one compaction: references must survive a chain of compactions (a
summary of a summary names the earlier summary's row, whose own reference still resolves).
Two figures: the share of the tool outputs no longer in the context that one
``tool_call_id`` call (all pages) returns byte-exact, and the tokens the ``[ref ...]`` tags
add to each compaction's stand-ins.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from hermes_core.host.hermes import Hermes
from hermes_core.host.session import Session
from hermes_core.transcript.messages import turn_groups

__all__ = ["RecallFigures", "measure_recall", "recall_lines", "recalled_text", "replay_recall"]

Message = dict[str, Any]
_TAG: Final = re.compile(r" \[ref [0-9:,\-]+\]")


@dataclass
class RecallFigures:
    """What :func:`replay_recall` measured."""

    compactions: int = 0
    stand_ins: int = 0  # stand-in texts carrying a reference, over every compaction
    ref_tokens: int = 0  # tokens of those references
    archived_outputs: int = 0  # tool outputs no longer in the context at the end
    recalled_outputs: int = 0  # of those, returned byte-exact by one tool_call_id call
    withheld_outputs: int = 0  # of the rest, withheld by the threat scanner (by design)

    @property
    def recall_share(self) -> float:
        return self.recalled_outputs / self.archived_outputs if self.archived_outputs else 1.0

    @property
    def lost(self) -> int:
        """Outputs neither returned byte-exact nor withheld by the scanner: must be 0."""
        return self.archived_outputs - self.recalled_outputs - self.withheld_outputs

    @property
    def tokens_per_compaction(self) -> float:
        return self.ref_tokens / self.compactions if self.compactions else 0.0

    @property
    def tokens_per_stand_in(self) -> float:
        return self.ref_tokens / self.stand_ins if self.stand_ins else 0.0


def recalled_text(session: Session, tool_call_id: str) -> tuple[list[str], int]:
    """Every result text ``session_recall`` returns for a call id, its pages joined, and how
    many fields the threat scanner withheld."""
    texts: dict[tuple[str, str], str] = {}
    page, pages, withheld = 1, 1, 0
    while page <= pages:
        answer = json.loads(
            session.handle_tool_call("session_recall", {"tool_call_id": tool_call_id, "page": page})
        )
        if not answer.get("success"):
            return [], 0
        pages, withheld = answer["pages"], answer.get("withheld", 0)
        for item in answer["items"]:
            if item["role"] == "tool":
                key = (item["ref"], item["field"])
                texts[key] = texts.get(key, "") + item["text"]
        page += 1
    return list(texts.values()), withheld


def _tags(messages: Sequence[Message], known: set[int]) -> list[str]:
    """The reference tags of the messages that are new since the last compaction."""
    found: list[str] = []
    for message in messages:
        if id(message) not in known:
            found.extend(_TAG.findall(json.dumps(message, ensure_ascii=False)))
    return found


def replay_recall(
    host: Hermes,
    session_id: str,
    messages: Sequence[Message],
    *,
    every: int,
    count_text: Callable[[str], int],
    user_id: str | None = "eval",
) -> RecallFigures:
    """Replay ``messages`` ``every`` turn groups at a time, each step a forced compaction,
    then ask the tool for every original tool output no longer in the context."""
    figures = RecallFigures()
    groups = turn_groups(list(messages))
    with host.session(session_id, user_id=user_id) as session:
        history: list[Message] = []
        for first in range(0, len(groups), every):
            last = groups[min(first + every, len(groups)) - 1]
            new = messages[groups[first].start : last.end]
            before = {id(m) for m in session.view.sent}
            committed = session.compact([*history, *new], force=True)
            if len(committed) < len(history) + len(new) or committed != [*history, *new]:
                figures.compactions += 1
                tags = _tags(session.view.sent, before)
                figures.stand_ins += len(tags)
                figures.ref_tokens += sum(count_text(t) for t in tags)
            history = committed
        present = {json.dumps(m, sort_keys=True) for m in history}
        for message in messages:
            if message.get("role") != "tool" or json.dumps(message, sort_keys=True) in present:
                continue
            figures.archived_outputs += 1
            call_id = message.get("tool_call_id")
            content = message.get("content")
            texts, withheld = (
                recalled_text(session, call_id) if isinstance(call_id, str) else ([], 0)
            )
            if content in texts:
                figures.recalled_outputs += 1
            elif withheld:
                figures.withheld_outputs += 1
    return figures


def measure_recall(
    messages: Sequence[Message],
    *,
    context_length: int,
    rounds: int,
    count_text: Callable[[str], int],
) -> dict[str, Any]:
    """``hermes-context eval --recall``: the replay in a throwaway home (its own store, the
    offline fallback summary: references and the tool do not depend on the summariser), about
    ``rounds`` compactions; the figures as the JSON report's ``recall`` entry."""
    import tempfile
    from pathlib import Path

    from hermes_core.config.loader import load_config

    every = max(1, -(-len(turn_groups(list(messages))) // max(1, rounds)))
    with tempfile.TemporaryDirectory(prefix="hermes-eval-recall-") as home:
        config = {"model": {"context_length": context_length}}
        with Hermes(load_config(config, home=Path(home), environ={})) as host:
            figures = replay_recall(host, "eval", messages, every=every, count_text=count_text)
    return {
        "every_groups": every,
        "compactions": figures.compactions,
        "archived_outputs": figures.archived_outputs,
        "recalled_outputs": figures.recalled_outputs,
        "withheld_outputs": figures.withheld_outputs,
        "lost_outputs": figures.lost,
        "recall_share": round(figures.recall_share, 4),
        "ref_tokens_per_compaction": round(figures.tokens_per_compaction, 1),
        "ref_tokens_per_stand_in": round(figures.tokens_per_stand_in, 1),
    }


def recall_lines(recall: dict[str, Any]) -> list[str]:
    """The report's lines for :func:`measure_recall`'s figures."""
    return [
        f"{recall['compactions']} compactions (one every {recall['every_groups']} turn groups); "
        f"{recall['archived_outputs']} tool outputs left the context, "
        f"{recall['recalled_outputs']} came back byte-exact through session_recall "
        f"({recall['recall_share']:.1%}), {recall['withheld_outputs']} withheld by the threat "
        f"scanner, {recall['lost_outputs']} lost",
        f"references cost {recall['ref_tokens_per_compaction']:g} tokens a compaction, "
        f"{recall['ref_tokens_per_stand_in']:g} a stand-in",
    ]
