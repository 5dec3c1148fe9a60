"""Whether a compacted transcript still holds a fact: verbatim, normalised, or in the ledger.

Why: a fact survives when a model reading the compacted transcript could still see it. That
is its text anywhere in the messages (contents and tool-call arguments), compared with
whitespace collapsed (numbers also without thousands commas or the space before the unit),
or an item of an anchor ledger read back by the ledger's own documented parser
(``- dir/{a, b}`` is ``dir/a`` and ``dir/b``; ``- prog`` then ``· args`` is ``prog args``).
Nothing looser counts: a paraphrase is not kept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.compression.anchors import ANCHOR_HEADER, parse_anchor_section
from hermes_core.evals.facts import Fact, collapse, normal_number
from hermes_core.transcript.messages import message_text

__all__ = ["Holdings"]


def _call_text(call: Any) -> str:
    """A tool call's name and argument values (decoded, so quotes are not escaped)."""
    function = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping):
        return ""
    raw = function.get("arguments")
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        args = raw
    values = args.values() if isinstance(args, Mapping) else [args]
    parts = [str(function.get("name") or "")]
    parts += [v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for v in values]
    return "\n".join(parts)


class Holdings:
    """What one transcript holds, indexed once so each fact is a few substring tests."""

    def __init__(self, messages: Sequence[Mapping[str, Any]]) -> None:
        parts: list[str] = []
        self.ledger_items: set[str] = set()
        for msg in messages:
            text = message_text(msg)
            parts.append(text)
            parts.extend(_call_text(call) for call in msg.get("tool_calls") or [])
            if ANCHOR_HEADER in text:
                ledger = parse_anchor_section(text)
                for items in (ledger.paths, ledger.edited, ledger.commands, ledger.errors):
                    self.ledger_items.update(collapse(x) for x in items)
                self.ledger_items.update(collapse(x) for x in ledger.failures)
        self.text = collapse("\n".join(parts))
        self.numbers = normal_number(self.text)

    def holds(self, fact: Fact) -> bool:
        needle = collapse(fact.text)
        if fact.kind == "numbers":
            number = re.escape(normal_number(needle))
            return re.search(rf"(?<![\d.]){number}(?![\w%])", self.numbers) is not None
        if needle in self.text:
            return True
        if fact.kind in ("paths", "commands"):
            return needle in self.ledger_items
        if fact.kind == "errors":
            return any(needle in item for item in self.ledger_items)
        return False
