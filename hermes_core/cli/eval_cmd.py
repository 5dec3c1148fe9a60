"""``hermes-context eval FILE``: what compaction keeps of a transcript, measured offline.

Plants facts of six kinds into a copy of the transcript (or, with ``--no-plant``, reads them
from it), compacts it ``--rounds`` times in a row and prints what survives, per kind, with the
summary's size against its budget (docs/eval.md says how to read it). ``--json`` prints the
report as JSON instead; ``--report`` writes a Markdown report, ``--plot`` a PNG chart.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from hermes_core.cli.common import (
    EXIT_INPUT,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    add_summarizer_option,
    check_summarizer_choice,
    open_host,
    same_file,
)
from hermes_core.cli.escaped import json_text, say, visible
from hermes_core.cli.formats_option import FILE_HELP, add_format_option, converted, read_formatted

MAX_CONTEXT = 10_000_000  # no model has a larger window; past it the figures mean nothing
MIN_CONTEXT = 1_024  # model.context_length's own minimum


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = sub.add_parser(
        "eval",
        parents=[common],
        help="measure what compaction keeps of a transcript (offline)",
        description="Plant (or find) file paths, commands, error lines, user rules, decisions "
        "and numbers, compact the transcript again and again, and report what survives. "
        "With --summarizer fallback (or auto and no LLM configured) nothing leaves the machine.",
    )
    parser.add_argument("file", metavar="FILE", help=FILE_HELP)
    add_format_option(parser)
    add_summarizer_option(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--report", metavar="FILE.md", help="also write a Markdown report")
    parser.add_argument("--plot", metavar="FILE.png", help="also write a PNG chart")
    parser.add_argument(
        "--plant",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="plant synthetic facts (default), or --no-plant: follow the transcript's own",
    )
    parser.add_argument(
        "--rounds", type=int, default=5, metavar="N", help="compactions in a row (default 5)"
    )
    parser.add_argument(
        "--context-length", type=int, metavar="N", help="window in tokens (default model's)"
    )
    parser.add_argument(
        "--recall",
        action="store_true",
        help="also replay the transcript through a throwaway session store and report how many "
        "compacted tool outputs session_recall returns byte-exact, and what references cost",
    )
    parser.set_defaults(handler=run)


def _check_args(args: argparse.Namespace) -> None:
    from hermes_core.evals.measure import MAX_ROUNDS

    if not 1 <= args.rounds <= MAX_ROUNDS:
        raise CommandError(f"--rounds must be 1 to {MAX_ROUNDS}, got {args.rounds}", EXIT_USAGE)
    n = args.context_length
    if n is not None and not MIN_CONTEXT <= n <= MAX_CONTEXT:
        raise CommandError(
            f"--context-length must be {MIN_CONTEXT:,} to {MAX_CONTEXT:,} tokens, got {n:,}",
            EXIT_USAGE,
        )
    for flag, path, suffix in (("--report", args.report, ".md"), ("--plot", args.plot, ".png")):
        if path is None:
            continue
        if path == "-":
            raise CommandError(f"{flag} needs a file name, not -", EXIT_USAGE)
        target = Path(path)
        if target.exists() and not target.is_file():
            raise CommandError(f"{flag} {path}: not a regular file", EXIT_USAGE)
        if not target.parent.is_dir():
            raise CommandError(f"{flag} {path}: no such directory {target.parent}", EXIT_USAGE)
        if not path.lower().endswith(suffix):
            raise CommandError(f"{flag} {path}: the name must end with {suffix}", EXIT_USAGE)
        if args.file != "-" and same_file(path, args.file):
            raise CommandError(
                f"{flag} {path} is the input transcript {args.file}: eval never changes its "
                "input; give another file name",
                EXIT_USAGE,
            )
    if args.report and args.plot and same_file(args.report, args.plot):
        raise CommandError(
            f"--report {args.report} and --plot {args.plot} are the same file: give two names",
            EXIT_USAGE,
        )


class _Aborts:
    """The compactions the summariser's failure aborted. Why: eval then has nothing to
    measure, and its usual hint (a smaller window) is wrong; the cure is the LLM's settings,
    or the offline fallback."""

    def __init__(self) -> None:
        self.reason: str | None = None

    def __call__(self, event: Any) -> None:
        if event.kind == "compression_failed" and event.data.get("layer") == "abort":
            self.reason = str(event.data.get("reason") or "the summary failed")

    def error(self) -> CommandError | None:
        if self.reason is None:
            return None
        return CommandError(
            f"nothing to measure, the summariser LLM failed: {self.reason.rstrip('.')}. Check "
            "auxiliary.compression.base_url, model and api_key_env in the config, or use "
            "--summarizer fallback (offline)",
            EXIT_INPUT,
        )


def _write(path: str, data: bytes) -> None:
    """Whole or not at all: a temporary file beside it, renamed over the name."""
    temp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temp, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    finally:
        if os.path.exists(temp):
            os.unlink(temp)


def run(args: argparse.Namespace) -> int:
    from hermes_core.compression.engine import Compressor
    from hermes_core.compression.hooks import host_hooks
    from hermes_core.evals.measure import EvalError, evaluate
    from hermes_core.evals.plot import retention_png
    from hermes_core.evals.report import to_dict, to_markdown, to_text

    _check_args(args)
    host = open_host(args)
    try:
        settings = host.settings
        check_summarizer_choice(settings, args.summarizer)
        messages = converted(args.file, read_formatted(args.file, args.format)).messages
        if not messages:
            raise CommandError(f"{args.file}: the transcript holds no message", EXIT_INPUT)
        context_length = args.context_length or settings.model.context_length
        aborts = _Aborts()
        compressor = Compressor(
            settings,
            context_length=context_length,
            max_tokens=0,
            hooks=host_hooks(host.plugins, mode=args.summarizer),
            on_event=aborts,
            unreachable_falls_back=args.summarizer == "auto",
        )
        tty = sys.stderr.isatty()

        def note(round_no: int) -> None:
            if tty:
                print(f"\r\033[K… compaction {round_no}/{args.rounds}", end="", file=sys.stderr)

        try:
            evaluation = evaluate(
                messages, compressor, rounds=args.rounds, plant=args.plant, on_round=note
            )
        except EvalError as exc:
            raise aborts.error() or CommandError(str(exc), EXIT_INPUT) from None
        finally:
            if tty:
                print("\r\033[K", end="", file=sys.stderr)
        recall = None
        if args.recall:
            from hermes_core.evals.recall import measure_recall

            recall = measure_recall(
                messages,
                context_length=context_length,
                rounds=args.rounds,
                count_text=compressor.counter.count_text,
            )
    finally:
        host.close()
    report = to_dict(evaluation, file=args.file, summarizer=args.summarizer)
    if recall is not None:
        report["recall"] = recall
    if args.plot:
        series = {kind: entry["retention"] for kind, entry in report["kinds"].items()}
        _write(
            args.plot,
            retention_png(series, title=f"retention per compaction: {Path(args.file).name}"),
        )
    if args.report:
        plot = os.path.relpath(args.plot, Path(args.report).parent) if args.plot else None
        # the report quotes the transcript: a reader may ``cat`` it, so no live controls
        _write(args.report, visible(to_markdown(report, plot=plot)).encode("utf-8"))
    if args.json:
        say(json_text(report))
    else:
        say(to_text(report))
        for flag, path in (("report", args.report), ("plot", args.plot)):
            if path:
                say(f"wrote {flag} {path}")
    return EXIT_OK
