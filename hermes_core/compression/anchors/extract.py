"""The walk over a compacted middle: which messages are read in full, which only for their
tool calls, and where an early stop still searches for what the render always keeps.

The ledger as a whole is described in :mod:`hermes_core.compression.anchors`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.compression.anchors.ledger import (
    ANCHOR_HEADER,
    AnchorLedger,
)
from hermes_core.compression.anchors.message import (
    _WRITE_TOOL,
    _blocks,
    _call_anchors,
    _carry,
    _exit_code_shows,
    _key_sentences,
    _result_anchors,
    _scan,
    _scan_light,
    _window,
    ask_text,
)
from hermes_core.compression.anchors.recognisers import (
    _Collector,
    _NewestFirst,
    split_summary,
)
from hermes_core.compression.assemble import is_summary_message
from hermes_core.redact import redact
from hermes_core.transcript.messages import (
    is_real_user_message,
    message_text,
    tool_name_for_results,
)

__all__ = ["extract_anchors"]


# --- the walk over a middle ----------------------------------------------------------------


def extract_anchors(
    messages: Sequence[Mapping[str, Any]], *, max_chars: int | None = None
) -> AnchorLedger:
    """The ledger of a transcript slice (the compacted middle), items oldest first; an item
    seen more than once sits where it was last seen.

    Paths and commands come from tool-call arguments and the user's text; errors from tool
    results (and errors users paste); URLs and identifiers from text and short arguments;
    asks are the real user messages. A summary found in the slice hands on its own ledger.

    Written files (``edited``, also in ``paths``) come from the path arguments of tools that
    write; a failed command (``failures``) is a shell call whose result has a non-zero exit
    code, with its first error line.

    The walk runs newest first. With ``max_chars`` (the bound the ledger will be rendered
    with) it reads every message in full until the items found would crowd every older path
    and command out of a one-per-line render; from there on only tool calls (paths,
    commands, written files; a result only when its exit code is non-zero); it stops once
    they crowd older paths and commands out of the grouped render too
    (:meth:`AnchorLedger.crowds_out_older`), so a long middle costs what its newest stretch
    costs. The rest is then still searched for what the render always keeps: written files
    and failed commands (tool calls of writing tools, results with a non-zero exit code,
    ledgers of earlier summaries), the user's rules and the assistant's decisions (a marker
    search over user and assistant text), and the newest user ask (user messages only). URLs,
    errors, identifiers and paths only named in text come from the stretch read in full.
    """
    msgs = [m for m in messages if isinstance(m, Mapping)]
    names = tool_name_for_results(msgs)
    found = _NewestFirst()
    new_items = 0  # paths and commands found; stop tests run as this grows by 25% (light 50%)
    next_check = 16
    blocks = _blocks(msgs)
    light = False  # past the stretch a one-per-line render can show: tool calls only
    read_from: int | None = None  # where the stretch read in full begins, once light
    for at in range(len(blocks) - 1, -1, -1):
        acc, commands = _Collector(), dict[str, str]()
        scan = _scan_light if light else _scan
        for index in blocks[at]:
            scan(acc, msgs[index], names, commands)
        new_items += found.fold(acc)
        if max_chars is not None and new_items >= next_check:
            next_check = new_items + max(16, new_items // (2 if light else 4))
            if not light and found.crowds_out_older(max_chars, compact=False):
                light, read_from = True, blocks[at].start
            if light and found.crowds_out_older(max_chars):
                _kept_always(found, msgs, blocks[:at], names)
                break
    if read_from is not None and not found.chunks["asks"]:
        _newest_ask(found, msgs[:read_from])
    return found.collector().ledger()


def _kept_always(
    found: _NewestFirst,
    msgs: Sequence[Mapping[str, Any]],
    blocks: Sequence[range],
    names: Mapping[str, str],
) -> None:
    """Fold in the written files and failed commands of ``blocks`` (the part an early stop did
    not read), newest first, and the user's rules and the assistant's decisions. Only tool
    calls of writing tools are read, a shell call only when its result holds a non-zero exit
    code (one regex search finds it), summaries, and user and assistant text where a marker
    search finds a rule or a decision."""
    acc, calls = _Collector(), dict[str, Any]()
    for block in reversed(blocks):
        calls.clear()
        for index in block:
            msg = msgs[index]
            if msg.get("role") == "tool":
                cid = msg.get("tool_call_id")
                call = calls.get(cid) if isinstance(cid, str) else None
                text = message_text(msg) if call is not None else ""
                if isinstance(cid, str) and call is not None and _exit_code_shows(text):
                    scratch, commands = _Collector(), dict[str, str]()
                    _call_anchors(scratch, call, commands, light=True)
                    tool = names.get(cid) or msg.get("name") or "tool"
                    _result_anchors(scratch, str(tool), _window(text), commands.get(cid))
                    _carry(acc, scratch.ledger())
                continue
            text = message_text(msg)
            if ANCHOR_HEADER in text and is_summary_message(msg):
                _carry(acc, split_summary(redact(_window(text)))[1])
            else:
                _key_sentences(acc, msg, text, summary=False)
            tool_calls = msg.get("tool_calls")
            for call in tool_calls[:500] if isinstance(tool_calls, list) else ():
                function = call.get("function") if isinstance(call, Mapping) else None
                name = function.get("name") if isinstance(function, Mapping) else None
                if isinstance(name, str) and _WRITE_TOOL.search(name.lower()):
                    scratch = _Collector()
                    _call_anchors(scratch, call, {}, light=True)
                    _carry(acc, scratch.ledger())
                if isinstance(call, Mapping) and isinstance(call.get("id"), str):
                    calls[call["id"]] = call
        if any(acc.items.values()):
            found.fold(acc)
            acc = _Collector()


def _newest_ask(found: _NewestFirst, older: Sequence[Mapping[str, Any]]) -> None:
    """Fold in the newest real user ask of ``older`` (the part an early stop did not read)."""
    for msg in reversed(older):
        real = msg.get("role") == "user" and is_real_user_message(msg)
        if real and (ask := ask_text(redact(_window(message_text(msg))))):
            acc = _Collector()
            acc.add("asks", ask)
            found.fold(acc)
            return
