"""``hermes-context tokens FILE``: where a transcript's tokens go, and which counter said so."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_core.cli.common import EXIT_OK, load, table
from hermes_core.cli.escaped import json_text, say
from hermes_core.cli.formats_option import (
    FILE_HELP,
    add_format_option,
    carried,
    converted,
    read_formatted,
)
from hermes_core.cli.progress import Progress
from hermes_core.cli.text import count
from hermes_core.cli.transcript_rule import refuse_invalid, warn_in_flight
from hermes_core.errors import InvalidMessages
from hermes_core.tokens.costs import REPLY_PRIMING

if TYPE_CHECKING:
    from hermes_core.tokens.costs import MessageCostCache
    from hermes_core.tokens.counters import TokenCounter


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = sub.add_parser(
        "tokens",
        parents=[common],
        help="count a transcript's tokens by role, tool and images",
        description="Count with tiktoken (offline BPE data) or the calibrated estimate, "
        "as model.tokenizer says; the report names the counter used.",
    )
    parser.add_argument("file", metavar="FILE", help=FILE_HELP)
    add_format_option(parser)
    parser.add_argument("--model", metavar="NAME", help="model name (default: model.name)")
    parser.add_argument("--json", action="store_true", help="print the breakdown as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from hermes_core.tokens import get_counter, token_breakdown

    settings = load(args).settings
    model = args.model or settings.model.name or None
    image_tokens = settings.compression.image_tokens
    with Progress() as progress:
        progress.phase(f"reading {args.file}")
        conversion = converted(args.file, read_formatted(args.file, args.format))
        messages = conversion.messages
        refuse_invalid(args.file, messages)
        warn_in_flight(args.file, messages)
        uncounted = carried(conversion)
        counter = get_counter(model, settings.model.tokenizer)
        cache = _counted(messages, counter, image_tokens, progress)
        breakdown = token_breakdown(messages, counter, image_tokens=image_tokens, cache=cache)
    if args.json:
        payload = {
            "file": args.file,
            "format": conversion.format,
            "model": model,
            **breakdown.to_dict(),
            "not_counted": uncounted,
        }
        say(json_text(payload))
        return EXIT_OK
    as_format = ""
    if conversion.format != "openai":  # the OpenAI form counts a system message, tool messages
        noun = "item" if conversion.format == "responses" else "message"
        in_file = count(len(conversion.items), noun)
        as_format = f", read as {conversion.format}: {in_file} in the file"
    say(
        f"{args.file}: {count(breakdown.messages, 'message')}, "
        f"{count(breakdown.total, 'token')} (counter: {breakdown.counter}, "
        f"model: {model or 'default'}{as_format}; every message counted exactly, without "
        f"the {REPLY_PRIMING} reply-priming tokens a request adds)"
    )
    say("")
    role_rows = [
        [role, breakdown.role_messages.get(role, 0), tokens, _share(tokens, breakdown.total)]
        for role, tokens in sorted(breakdown.role_tokens.items(), key=lambda kv: -kv[1])
    ]
    say(table(["role", "messages", "tokens", "share"], role_rows))
    if breakdown.tools:
        say("")
        tool_rows = [
            [name, t.calls, t.call_tokens, t.results, t.result_tokens, t.tokens]
            for name, t in sorted(breakdown.tools.items(), key=lambda kv: -kv[1].tokens)
        ]
        headers = ["tool", "calls", "call tokens", "results", "result tokens", "total"]
        say(table(headers, tool_rows))
    say("")
    say(f"images: {breakdown.images:,} ({count(breakdown.image_tokens, 'token')})")
    if uncounted:
        kinds = ", ".join(f"{kind} {n:,}" for kind, n in uncounted.items())
        say(f"not counted (no OpenAI form, carried untouched): {kinds}")
    return EXIT_OK


def _counted(
    messages: list[dict[str, Any]], counter: TokenCounter, image_tokens: int, progress: Progress
) -> MessageCostCache:
    """A cost cache holding every message's count, filled one message at a time so the
    progress bar moves (counting is the long part: the breakdown then only adds up).
    Malformed lists are left to ``token_breakdown``, which names the bad messages."""
    from hermes_core.tokens.costs import MessageCostCache

    cache = MessageCostCache(maxsize=max(1, len(messages)))
    if not all(isinstance(m, Mapping) for m in messages):
        return cache
    progress.phase("counting tokens", total=len(messages), unit="messages")
    for index, message in enumerate(messages):
        try:
            cache.measure(message, counter, image_tokens)
        except InvalidMessages as exc:  # say which message, as `validate` does
            raise InvalidMessages(f"message {index}: {exc}", exc.problems) from None
        progress.advance()
    return cache


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"
