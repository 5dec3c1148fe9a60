"""The output checks of spec 10 §1, run on every compression before it is returned.

A violation means a bug in a phase; the engine then returns the input unchanged with the
reason, rather than a transcript a provider would reject.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.compression.assemble import (
    SYSTEM_ROLES,
    is_summary_message,
    newest_real_user_index,
)
from hermes_core.compression.in_flight import in_flight_problems
from hermes_core.transcript.validation import validate_messages


def _same_role_pairs(messages: Sequence[Mapping[str, Any]]) -> int:
    pairs = 0
    for previous, current in itertools.pairwise(messages):
        role = current.get("role")
        if role in ("user", "assistant") and previous.get("role") == role:
            pairs += 1
    return pairs


def check_invariants(
    before: Sequence[Mapping[str, Any]],
    after: Sequence[Mapping[str, Any]],
    *,
    before_valid: bool | None = None,
    archived: Sequence[Mapping[str, Any]] | None = None,
) -> list[str]:
    """Every way ``after`` breaks a promise made about ``before``; [] when it keeps them all.

    ``before_valid`` saves re-validating an input the caller has just validated."""
    problems: list[str] = []
    if before_valid is None:
        before_valid = not validate_messages(before, allow_pending_tool_calls=True)
    if before_valid:
        found = validate_messages(after, allow_pending_tool_calls=True)
        problems += [f"output not valid: {p}" for p in found[:5]]
    if before and before[0].get("role") in SYSTEM_ROLES:
        original = before[0].get("content")
        same_role = after and after[0].get("role") == before[0].get("role")
        kept = after[0].get("content") if same_role else None
        if not _extends(original, kept):
            problems.append("the system message did not stay at index 0 unchanged")
    newest = newest_real_user_index(before)
    if newest is not None:
        wanted = before[newest]
        if not any(m.get("role") == "user" and _content_kept(wanted, m) for m in after):
            problems.append("the newest user message is not kept verbatim")
    problems += in_flight_problems(before, after)
    if _same_role_pairs(before) == 0 and _same_role_pairs(after) > 0:
        problems.append("two consecutive user or assistant messages were created")
    before_ids = {id(m) for m in before}
    new_summaries = [m for m in after if id(m) not in before_ids and is_summary_message(m)]
    if len(new_summaries) != 1:
        problems.append(f"expected exactly one new summary, found {len(new_summaries)}")
    if archived is not None:
        kept_ids = {id(m) for m in after} | {id(m) for m in archived}
        missing = [m for m in before if id(m) not in kept_ids]
        if missing:  # equal copies count as kept; compare by content only for these few
            kept = {_key(m) for m in after} | {_key(m) for m in archived}
            lost = sum(1 for m in missing if _key(m) not in kept)
            if lost:
                problems.append(f"{lost} input messages are neither in the output nor archived")
    return problems


def _key(message: Mapping[str, Any]) -> str:
    return json.dumps(message, sort_keys=True, default=str, ensure_ascii=False)


def _extends(original: Any, kept: Any) -> bool:
    if isinstance(original, str) and isinstance(kept, str):
        return kept.startswith(original)
    if isinstance(original, list) and isinstance(kept, list):
        return kept[: len(original)] == original
    return original == kept or (original is None and isinstance(kept, str))


def _content_kept(original: Mapping[str, Any], candidate: Mapping[str, Any]) -> bool:
    """Verbatim, or verbatim after a summary merged in front of it."""
    want, got = original.get("content"), candidate.get("content")
    if want == got:
        return True
    if isinstance(want, str) and isinstance(got, str):
        return got.endswith(want)
    if isinstance(want, list) and isinstance(got, list):
        return got[-len(want) :] == want if want else True
    return False
