"""``hermes-context compress FILE``: the main job, offline by default.

The compressed messages go to ``--out`` (default stdout) as JSON; a one-screen report goes to
stderr, or to stdout as JSON with ``--json`` (then ``--out FILE`` is required: one stream
cannot carry both). A result still at or over the threshold is written all the same, but
its status says ``..._over_limit`` and the command exits 3, so a script cannot take it for a
transcript that fits. ``--format anthropic|responses`` (or such a file, detected) reads and
writes the host's own request shape: blocks and items the compaction kept come back as given.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from typing import Any

from hermes_core.cli.common import (
    EXIT_INPUT,
    EXIT_OK,
    EXIT_OVER_LIMIT,
    EXIT_USAGE,
    MAX_TOKENS_OPTION,
    CommandError,
    add_summarizer_option,
    bounded_int,
    check_summarizer_choice,
    open_host,
)
from hermes_core.cli.escaped import err, json_text
from hermes_core.cli.formats_option import (
    FILE_HELP,
    add_format_option,
    converted,
    read_formatted,
)
from hermes_core.cli.progress import Progress
from hermes_core.cli.text import count
from hermes_core.cli.transcript_rule import warn_in_flight

OVER_LIMIT_HINT = (
    "a larger --context-length fits it, or fewer protected messages "
    "(compression.protect_first_n, compression.protect_last_n)"
)
EPILOG = (
    "status: compressed, pruned (old tool output cut, no summary), unchanged, or aborted "
    "(the input is kept); _over_limit is appended (compressed_over_limit, ...) when the "
    "result is still at or over the threshold. Exit codes: 0 done, 1 aborted or bad input, "
    "2 usage or configuration error, 3 written but still over the threshold: "
    + OVER_LIMIT_HINT
    + "."
)


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = sub.add_parser(
        "compress",
        parents=[common],
        help="compress a transcript under its token budget",
        description="Prune old tool output, protect head and tail, summarise the middle. "
        "With --summarizer fallback (or auto and no LLM configured) nothing leaves the machine.",
        epilog=EPILOG,
    )
    parser.add_argument("file", metavar="FILE", help=FILE_HELP)
    add_format_option(parser)
    parser.add_argument(
        "--out",
        metavar="FILE",
        help="write the messages here, in the input's format (default stdout)",
    )
    parser.add_argument(
        "--context-length",
        type=bounded_int(1, MAX_TOKENS_OPTION),
        metavar="N",
        help=f"window in tokens (1 to {MAX_TOKENS_OPTION:,}; default: model.context_length)",
    )
    parser.add_argument(
        "--max-tokens",
        type=bounded_int(0, MAX_TOKENS_OPTION),
        metavar="N",
        help="output reservation in tokens, less than the window (default: model.max_tokens)",
    )
    parser.add_argument("--model", metavar="NAME", help="model name (default: model.name)")
    add_summarizer_option(parser)
    parser.add_argument("--force", action="store_true", help="compress even under the threshold")
    parser.add_argument(
        "--focus",
        metavar="TEXT",
        help="what the summary must keep in full (a topic, at most 300 characters used), "
        "like hermes-agent's /compress <topic>",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the report as JSON to stdout (needs --out FILE, a file that is not stdout)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from hermes_core.compression.engine import Compressor
    from hermes_core.compression.guidance import Guidance
    from hermes_core.compression.hooks import host_hooks
    from hermes_core.formats import dump_payload
    from hermes_core.transcript.files import write_payload

    if args.json and (not args.out or args.out == "-"):
        raise CommandError(
            "--json prints the report to stdout, so the messages cannot go there too: "
            "give --out FILE for the messages",
            EXIT_USAGE,
        )
    if args.out:
        _check_out(args.out, report_on_stdout=args.json)
    host = open_host(args)
    with Progress() as progress:
        try:
            settings = host.settings
            check_summarizer_choice(settings, args.summarizer)
            context_length = args.context_length or settings.model.context_length
            max_tokens = settings.model.max_tokens if args.max_tokens is None else args.max_tokens
            if max_tokens >= context_length:
                raise CommandError(
                    f"--max-tokens ({max_tokens:,}) must be less than the context length "
                    f"({context_length:,})",
                    EXIT_USAGE,
                )
            progress.phase(f"reading {args.file}")
            conversion = converted(args.file, read_formatted(args.file, args.format))
            messages = conversion.messages
            warn_in_flight(args.file, messages)  # the compressor refuses the rest
            events = _Events(progress, count(len(messages), "message"))
            compressor = Compressor(
                settings,
                context_length=context_length,
                max_tokens=max_tokens,
                model=args.model,
                hooks=host_hooks(host.plugins, mode=args.summarizer),
                on_event=events,
                # auto: "the configured LLM when reachable, else the fallback" (00-product.md)
                unreachable_falls_back=args.summarizer == "auto",
            )
            progress.start_ticker()  # the compressor reports nothing between its events
            result = compressor.compress(messages, force=args.force, guidance=Guidance(args.focus))
        finally:
            host.close()
        report = result.report()
        over = over_limit(report)
        if over:
            report["status"] = f"{report['status']}_over_limit"
        provenance = result.stats.get("threshold_provenance") or []
        report["format"] = conversion.format
        if "plan" in result.stats:  # a plan_compaction plugin steered the summary
            report["plan"] = result.stats["plan"]
        # OpenAI: the message list, as always; another format: the host's request shape
        output = (
            result.messages
            if conversion.format == "openai"
            else dump_payload(result.messages, conversion)
        )
        if args.out:
            progress.phase(f"writing {args.out}")
            write_payload(output, args.out)
        else:
            progress.done()  # stdout may be the same terminal: the line goes first
            write_payload(output, sys.stdout)
            sys.stdout.write("\n")
    # the report holds text others wrote (a provider's error body in the reason, a plan's
    # warnings): escaped, so no terminal control in it can act (review 2, defect 7)
    if args.json:
        print(json_text(report))
    else:
        err(_report_text(report, args.out, provenance, over=over))
    if result.status == "aborted":
        return EXIT_INPUT
    return EXIT_OVER_LIMIT if over else EXIT_OK


def over_limit(report: dict[str, Any]) -> bool:
    """Whether the transcript that was written is still at or over the threshold (the trigger
    the compressor works to: ``tokens >= threshold_tokens`` is what starts a compaction).
    An aborted run kept its input and says so in its own status."""
    threshold = report.get("threshold_tokens")
    if report["status"] == "aborted" or not isinstance(threshold, int):
        return False
    return bool(report["tokens_after"] >= threshold)


def _check_out(path: str, *, report_on_stdout: bool) -> None:
    """Refuse an --out that must not be replaced (a device, FIFO, socket, directory, or a link
    to one) before any work, so nothing is read, compressed or written. Under ``--json`` an
    --out that is stdout under another name (``/dev/stdout``, the file stdout is redirected
    to) is refused too: replacing that file would lose the report printed to it. Without
    ``--json`` nothing else goes to stdout, so writing the messages there is fine."""
    from hermes_core.errors import TranscriptError
    from hermes_core.transcript.files import check_output_path

    try:
        check_output_path(path)
    except TranscriptError as exc:
        raise CommandError(f"--out {exc}", EXIT_USAGE) from None
    if report_on_stdout and _is_stdout(path):
        raise CommandError(
            f"--out {path} is standard output, where --json prints the report: give --out "
            "another file for the messages",
            EXIT_USAGE,
        )


def _is_stdout(path: str) -> bool:
    """Whether ``path`` names the file stdout writes to (same device and inode)."""
    try:
        out, std = os.stat(path), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False  # a path not there yet, or stdout that is no file (a test's capture)
    return (out.st_dev, out.st_ino) == (std.st_dev, std.st_ino)


#: what each pruning pass counts, in words (the JSON report keeps the short keys)
PASS_LABELS = {
    "dedup": "duplicate results replaced",
    "summaries": "old tool results cut to one line",
    "arguments": "tool-call arguments shortened",
    "tail": "tail results cut to one line",
    "images": "old images removed",
}


SUMMARY_LABELS = {"llm": "by the LLM", "fallback": "the deterministic fallback (no LLM)"}


def _report_text(
    report: dict[str, Any], out: str | None, provenance: list[str], *, over: bool
) -> str:
    passes = ", ".join(
        f"{PASS_LABELS.get(name, name)} {n:,}" for name, n in report["passes"].items() if n
    )
    summary = SUMMARY_LABELS.get(report["summarizer"], "none (no summary was written)")
    lines = [
        f"{report['status']}: {report['messages_before']:,} -> {report['messages_after']:,} "
        f"messages, {report['tokens_before']:,} -> {report['tokens_after']:,} tokens "
        f"(threshold {report['threshold_tokens']:,})",
        f"summary of the middle: {summary}",
        f"pruning (no LLM): {passes or 'nothing pruned'}",
        f"counter: {report['token_counter']} ({_totals_note(report['token_counter'])}); "
        f"{report['duration_ms']:,.0f} ms",
    ]
    if provenance:
        lines.append("threshold: " + "; ".join(provenance))
    plan = report.get("plan")
    if plan:
        lines.append(
            f"plan (plan_compaction): kept {plan['kept']:,}, shortened {plan['shortened']:,}, "
            f"dropped {plan['dropped']:,}" + "".join(f"; warning: {w}" for w in plan["warnings"])
        )
    if report["reason"]:
        lines.append(f"reason: {report['reason']}")
    if over:
        lines.append(
            f"over the limit: {count(report['tokens_after'], 'token')} left, the threshold is "
            f"{report['threshold_tokens']:,} (exit 3); {OVER_LIMIT_HINT}"
        )
    if out:
        lines.append(f"wrote {out}")
    return "\n".join(lines)


class _Events:
    """The compressor's events as steps of the progress line (it runs as one long call)."""

    def __init__(self, progress: Progress, what: str) -> None:
        self.progress = progress
        progress.phase(f"counting {what}")

    def __call__(self, event: Any) -> None:
        if event.kind == "compression_started":
            tokens = event.data.get("tokens")
            size = count(tokens, "token") if isinstance(tokens, int) else "the transcript"
            self.progress.phase(f"compressing {size}")
        elif event.kind == "compression_failed":
            self.progress.phase("the summary failed, falling back")
        elif event.kind == "compression_blocked":
            self.progress.phase("blocked")


def _totals_note(counter: str) -> str:
    """What the two totals of the first line are, so they can be compared with ``tokens``
    (every message counted, no reply priming) and ``eval`` (counted, with priming)."""
    before = (
        "the prompt estimated from the messages' sizes and a counted sample, counted exactly "
        "where a decision needs it"
        if counter.endswith("o200k_base")
        else "counted exactly"
    )
    return (
        f"tokens before: {before}; after: counted exactly; both with reply priming; "
        "`hermes-context tokens` counts every message of a file"
    )
