"""``hermes-context compress FILE``: the main job, offline by default.

The compressed messages go to ``--out`` (default stdout) as JSON; a one-screen report goes to
stderr, or to stdout as JSON with ``--json`` (then ``--out`` is required).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hermes_core.cli.common import EXIT_INPUT, EXIT_OK, EXIT_USAGE, CommandError, open_host


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = sub.add_parser(
        "compress",
        parents=[common],
        help="compress a transcript under its token budget",
        description="Prune old tool output, protect head and tail, summarise the middle. "
        "With --summarizer fallback (or auto and no LLM configured) nothing leaves the machine.",
    )
    parser.add_argument(
        "file", metavar="FILE", help='JSON list, {"messages": [...]}, JSON Lines, or -'
    )
    parser.add_argument("--out", metavar="FILE", help="write the messages here (default stdout)")
    parser.add_argument("--context-length", type=int, metavar="N", help="window in tokens")
    parser.add_argument("--max-tokens", type=int, metavar="N", help="output reservation")
    parser.add_argument("--model", metavar="NAME", help="model name (default: model.name)")
    parser.add_argument(
        "--summarizer",
        choices=("auto", "llm", "fallback"),
        default="auto",
        help="auto: the configured LLM if any, else the deterministic fallback",
    )
    parser.add_argument("--force", action="store_true", help="compress even under the threshold")
    parser.add_argument("--json", action="store_true", help="print the report as JSON to stdout")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from hermes_core.compression.engine import Compressor
    from hermes_core.compression.hooks import host_hooks, llm_summarize_fn
    from hermes_core.transcript.files import read_transcript, write_transcript

    if args.json and not args.out:
        raise CommandError(
            "--json prints the report to stdout; give --out FILE for the messages", EXIT_USAGE
        )
    if args.out:
        _check_out(args.out)
    for flag in ("context_length", "max_tokens"):
        value = getattr(args, flag)
        if value is not None and value < (1 if flag == "context_length" else 0):
            raise CommandError(f"--{flag.replace('_', '-')} must be positive", EXIT_USAGE)
    host = open_host(args)
    try:
        settings = host.settings
        if args.summarizer == "llm" and llm_summarize_fn(settings) is None:
            raise CommandError(
                "--summarizer llm needs a summariser LLM: set auxiliary.compression.base_url "
                "(and model) in the config",
                EXIT_USAGE,
            )
        messages = read_transcript(args.file)
        progress = _Progress(enabled=sys.stderr.isatty())
        progress.note(f"read {len(messages):,} messages")
        context_length = args.context_length or settings.model.context_length
        max_tokens = settings.model.max_tokens if args.max_tokens is None else args.max_tokens
        if max_tokens >= context_length:
            raise CommandError("--max-tokens must be less than the context length", EXIT_USAGE)
        compressor = Compressor(
            settings,
            context_length=context_length,
            max_tokens=max_tokens,
            model=args.model,
            hooks=host_hooks(host.plugins, mode=args.summarizer),
            on_event=progress.event,
            # auto: "the configured LLM when reachable, else the fallback" (00-product.md)
            unreachable_falls_back=args.summarizer == "auto",
        )
        result = compressor.compress(messages, force=args.force)
    finally:
        host.close()
    progress.done()
    report = result.report()
    provenance = result.stats.get("threshold_provenance") or []
    if args.out:
        write_transcript(result.messages, args.out)
    else:
        write_transcript(result.messages, sys.stdout)
        sys.stdout.write("\n")
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(_report_text(report, args.out, provenance), file=sys.stderr)
    return EXIT_INPUT if result.status == "aborted" else EXIT_OK


def _check_out(path: str) -> None:
    """Refuse an --out that must not be replaced (a device, FIFO, socket, directory, or a link
    to one) before any work, so nothing is read, compressed or written."""
    from hermes_core.errors import TranscriptError
    from hermes_core.transcript.files import check_output_path

    try:
        check_output_path(path)
    except TranscriptError as exc:
        raise CommandError(f"--out {exc}", EXIT_USAGE) from None


#: what each pruning pass counts, in words (the JSON report keeps the short keys)
PASS_LABELS = {
    "dedup": "duplicate results replaced",
    "summaries": "old tool results cut to one line",
    "arguments": "tool-call arguments shortened",
    "tail": "tail results cut to one line",
    "images": "old images removed",
}


SUMMARY_LABELS = {"llm": "by the LLM", "fallback": "the deterministic fallback (no LLM)"}


def _report_text(report: dict[str, Any], out: str | None, provenance: list[str]) -> str:
    passes = ", ".join(
        f"{PASS_LABELS.get(name, name)} {count:,}"
        for name, count in report["passes"].items()
        if count
    )
    summary = SUMMARY_LABELS.get(report["summarizer"], "none (no summary was written)")
    lines = [
        f"{report['status']}: {report['messages_before']:,} -> {report['messages_after']:,} "
        f"messages, {report['tokens_before']:,} -> {report['tokens_after']:,} tokens "
        f"(threshold {report['threshold_tokens']:,})",
        f"summary of the middle: {summary}",
        f"pruning (no LLM): {passes or 'nothing pruned'}",
        f"counter: {report['token_counter']}; {report['duration_ms']:,.0f} ms",
    ]
    if provenance:
        lines.append("threshold: " + "; ".join(provenance))
    if report["reason"]:
        lines.append(f"reason: {report['reason']}")
    if out:
        lines.append(f"wrote {out}")
    return "\n".join(lines)


class _Progress:
    """Phase notes on a terminal; silent when stderr is a pipe or a file."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled

    def note(self, text: str) -> None:
        if self.enabled:
            print(f"\r\033[K… {text}", end="", file=sys.stderr, flush=True)

    def event(self, event: Any) -> None:
        names = {
            "compression_started": "compressing",
            "compression_failed": "summary failed, falling back",
            "compression_blocked": "blocked",
        }
        if event.kind in names:
            self.note(names[event.kind])

    def done(self) -> None:
        if self.enabled:
            print("\r\033[K", end="", file=sys.stderr, flush=True)
