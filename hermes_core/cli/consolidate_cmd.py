"""``hermes-context memory consolidate`` and ``skills consolidate``: the consolidation plan on
demand (issue 28 item 2).

``--dry-run`` prints the plan and changes nothing. Without it the plan goes through the same
writer as ``memory remove`` (origin ``cli``): under ``write_approval: allow`` it lands, under
``stage`` it waits for ``memory approve``; a skill merge is written as two changes (the kept
skill gains the other's steps, the other is deleted). Every text from a block or a skill is
printed with controls and invisible characters escaped.
"""

from __future__ import annotations

import argparse
from typing import Any

from hermes_core.cli.common import EXIT_INPUT, EXIT_OK, EXIT_USAGE, CommandError, open_host
from hermes_core.cli.escaped import say as _say
from hermes_core.cli.escaped import short as _short
from hermes_core.cli.staged import escaped_handler, print_json
from hermes_core.types import Finding

__all__ = ["add_memory_consolidate", "add_skills_consolidate"]

_TARGETS = ("all", "memory", "user")


def _flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    parser.add_argument("--json", action="store_true", help="print JSON")


def add_memory_consolidate(
    actions: argparse._SubParsersAction[argparse.ArgumentParser],
    parents: list[argparse.ArgumentParser],
) -> None:
    """Register ``memory consolidate`` (``parents``: the common options and ``--user``)."""
    parser = actions.add_parser(
        "consolidate",
        parents=parents,
        help="remove duplicate entries and entries the user took back (--dry-run: plan only)",
    )
    parser.add_argument("--target", choices=_TARGETS, default="all", help="default: all")
    _flags(parser)
    parser.set_defaults(handler=escaped_handler(run_memory))


def add_skills_consolidate(
    actions: argparse._SubParsersAction[argparse.ArgumentParser],
    parents: list[argparse.ArgumentParser],
) -> None:
    """Register ``skills consolidate``."""
    parser = actions.add_parser(
        "consolidate", parents=parents, help="merge near-duplicate skills (--dry-run: plan only)"
    )
    _flags(parser)
    parser.set_defaults(handler=escaped_handler(run_skills))


def run_memory(args: argparse.Namespace) -> int:
    from hermes_core.host.consolidate import consolidate_memory
    from hermes_core.memory.home import open_writer

    targets = ("memory", "user") if args.target == "all" else (args.target,)
    with open_host(args) as host:

        def strict(text: str) -> list[Finding]:
            return host.plugins.scan_threat(text, "strict")

        try:
            writer = open_writer(
                host.home,
                host.settings,
                user_id=getattr(args, "user", None),
                scanner=strict,
                documents=host.memory_documents(),
            )
        except ValueError as exc:  # a user id that cannot name a directory
            raise CommandError(f"--user: {exc}", EXIT_USAGE) from None
        done = [
            consolidate_memory(writer, target, origin="cli", dry_run=args.dry_run)
            for target in targets
        ]
    failed = [d for d in done if d.result is not None and not d.result.get("success")]
    if args.json:
        print_json({"dry_run": args.dry_run, "blocks": [d.to_json() for d in done]})
        return EXIT_INPUT if failed else EXIT_OK
    for outcome in done:
        plan = outcome.plan
        if not plan.steps:
            _say(f"{plan.target}: nothing to consolidate")
        for step in plan.steps:
            _say(f"{plan.target}: remove ({step.reason}) {_short(step.entry, 90)}")
            _say(f"    stands for it: {_short(step.kept, 90)}")
        for first, second in plan.similar:
            pair = f"{_short(first, 60)} | {_short(second, 60)}"
            _say(f"{plan.target}: similar, left as they are: {pair}")
        for first, second in plan.conflicts:
            pair = f"{_short(first, 60)} | {_short(second, 60)}"
            _say(f"{plan.target}: opposite, which is newer is unknown, left for you: {pair}")
        said = _memory_outcome(outcome.result, outcome.already_staged)
        if said:
            _say(said)
    if args.dry_run:
        _say("(dry run: nothing changed)")
    return EXIT_INPUT if failed else EXIT_OK


def _memory_outcome(result: dict[str, Any] | None, already: str | None) -> str:
    if already is not None:
        return f"    already staged as {already} (hermes-context memory pending {already})"
    if result is None:
        return ""
    if not result.get("success"):
        return f"    refused: {result.get('error', 'refused')}"
    if result.get("staged"):
        return f"    staged as {result['pending_id']} (memory.write_approval: stage)"
    return f"    done [{result.get('usage', '')}]"


def run_skills(args: argparse.Namespace) -> int:
    from hermes_core.host.consolidate import consolidate_skills
    from hermes_core.skills.home import open_library

    with open_host(args) as host:

        def strict(text: str) -> list[Finding]:
            return host.plugins.scan_threat(text, "strict")

        library = open_library(host.home, host.settings, scan=strict)
        done = consolidate_skills(library, origin="cli", dry_run=args.dry_run)
    failed = [
        r
        for r in done.results
        if any(not r[step].get("success") for step in ("edit", "delete") if step in r)
    ]
    if args.json:
        print_json({"dry_run": args.dry_run, **done.to_json()})
        return EXIT_INPUT if failed else EXIT_OK
    if not done.merges:
        _say("skills: nothing to consolidate")
    for merge in done.merges:
        _say(f"merge {merge.fold} into {merge.keep} ({merge.basis} overlap {merge.overlap:.2f})")
    for name, why in sorted(done.left.items()):
        _say(f"left as it is: {name}: {why}")
    for result in done.results:
        for step in ("edit", "delete"):
            if step in result:
                _say(f"    {step}: {_state(result[step])}")
        if "delete" not in result and result.get("edit", {}).get("success"):
            _say("    delete: once the merged text has landed (run skills consolidate again)")
    if args.dry_run:
        _say("(dry run: nothing changed)")
    return EXIT_INPUT if failed else EXIT_OK


def _state(answer: dict[str, Any]) -> str:
    if answer.get("already_staged"):
        return "already staged"
    if answer.get("staged"):
        return f"staged as {answer.get('pending_id')}"
    if answer.get("success"):
        return "done"
    return f"refused: {answer.get('error', 'refused')}"
