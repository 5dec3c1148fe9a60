"""``hermes-context hermes-agent install [--home DIR]``: put our memory provider's loader shim
into a hermes-agent home and say which config lines select our engine and memory.

``--home`` here is hermes-agent's home (default ``$HERMES_HOME``, else ``~/.hermes``), the
folder holding its ``config.yaml``; our own state goes in its ``hermes-context`` folder
(docs/integrations.md). Nothing of hermes-agent is imported: the command works without the
``hermes-agent`` extra, and the shim only runs inside hermes-agent.
"""

from __future__ import annotations

import argparse

from hermes_core.cli.common import EXIT_OK, EXIT_USAGE, CommandError
from hermes_core.cli.escaped import say


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = sub.add_parser(
        "hermes-agent",
        help="use hermes-context inside hermes-agent",
        description="Install the hermes-agent memory-provider shim.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    install = actions.add_parser(
        "install",
        help="write $HERMES_HOME/plugins/hermes_context (idempotent)",
        description="Write the memory-provider shim into a hermes-agent home; a folder of "
        "that name that hermes-context did not write is left alone.",
    )
    install.add_argument(
        "--home",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="hermes-agent's home (default: $HERMES_HOME, else ~/.hermes)",
    )
    install.set_defaults(handler=run_install)


def run_install(args: argparse.Namespace) -> int:
    from hermes_plugins.hermes_agent.install import CONFIG_LINES, InstallError, install

    home = getattr(args, "home", None)
    if home is not None and not str(home).strip():  # "$UNSET" must not mean the real home
        raise CommandError(
            "--home is empty (an unset variable?); name hermes-agent's home, or leave "
            "--home out for $HERMES_HOME, else ~/.hermes",
            EXIT_USAGE,
        )
    try:
        done = install(home)
    except InstallError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from exc
    # paths come from $HERMES_HOME or --home: printed escaped (cli/escaped)
    say(f"{done.status}: {done.path}")
    if done.config is not None:
        say(f"wrote our config: {done.config}")
    if done.status != "already installed":
        config = done.path.parent.parent / "config.yaml"
        say(f"\nThen set in {config}:\n\n{CONFIG_LINES}")
        say("(or run `hermes plugins enable hermes-context` for the last one)")
    return EXIT_OK
