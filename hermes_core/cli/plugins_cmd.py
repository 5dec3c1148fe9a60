"""``hermes-context plugins``: what is loaded, from where, and in what state."""

from __future__ import annotations

import argparse
import json

from hermes_core.cli.common import EXIT_OK, open_host, table


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = sub.add_parser(
        "plugins",
        parents=[common],
        help="list plugins with their hooks and status",
        description="Plugins of this home: built-ins and the ones the config names. "
        "--all adds installed plugins that are not enabled.",
    )
    parser.add_argument("--all", action="store_true", help="include installed, not enabled")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    host = open_host(args)
    try:
        records = list(host.plugins.records.values())
        if args.all:
            records += host.plugins.available()
    finally:
        host.close()
    if args.json:
        print(json.dumps([r.to_dict() for r in records], indent=2))
        return EXIT_OK
    if not records:
        print("no plugins loaded (see `hermes-context plugins --all` for installed ones)")
        return EXIT_OK
    rows = [
        [
            r.name + (" (external)" if r.external_provider else ""),
            r.version or "-",
            r.distribution or "-",
            r.status,
            ", ".join(r.hooks) or "-",
        ]
        for r in records
    ]
    print(table(["name", "version", "distribution", "status", "hooks"], rows))
    return EXIT_OK
