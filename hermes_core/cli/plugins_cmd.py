"""``hermes-context plugins``: what is loaded, from where, and in what state."""

from __future__ import annotations

import argparse

from hermes_core.cli.common import EXIT_OK, load, quiet_plugin_warnings, table
from hermes_core.cli.escaped import json_text, say, visible


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
    from hermes_core.host.hermes import diagnosed_plugins

    quiet_plugin_warnings(args)
    with diagnosed_plugins(load(args)) as plugins:  # a provider that fails is a row here
        records = list(plugins.records.values())
        if args.all:
            records += plugins.available()
    if args.json:
        print(json_text([r.to_dict() for r in records]))
        return EXIT_OK
    if not records:
        say("no plugins loaded (see `hermes-context plugins --all` for installed ones)")
        return EXIT_OK
    # names, versions and failure messages come from installed packages: each cell escaped
    # before the columns are padded, so they stay aligned
    rows = [
        [
            visible(cell)
            for cell in (
                r.name + (" (external)" if r.external_provider else ""),
                r.version or "-",
                r.distribution or "-",
                r.status,
                ", ".join(r.hooks) or "-",
            )
        ]
        for r in records
    ]
    say(table(["name", "version", "distribution", "status", "hooks"], rows))
    return EXIT_OK
