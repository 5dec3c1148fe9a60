"""``hermes-context config show|check``: the effective config and where each value came from."""

from __future__ import annotations

import argparse
import json
from typing import Any

from hermes_core.cli.common import EXIT_OK, EXIT_USAGE, CommandError, load, quiet_plugin_warnings
from hermes_core.cli.escaped import json_text, say
from hermes_core.cli.text import count
from hermes_core.config.loader import LoadedConfig, render_value
from hermes_core.config.values import SECRET_KEY
from hermes_core.host.hermes import (
    diagnosed_plugins,
    effective_threshold,
    load_failures,
    plugin_problem,
)
from hermes_core.redact import redact


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = sub.add_parser("config", parents=[common], help="show or check the configuration")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser(
        "show", parents=[common], help="print the effective config with the source of each value"
    )
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(handler=run_show)
    check = actions.add_parser(
        "check", parents=[common], help="validate the config and load its plugins, run nothing"
    )
    check.set_defaults(handler=run_check)


def run_show(args: argparse.Namespace) -> int:
    loaded = load(args)
    # a value set from the environment skips the secret check (a DSN with its password):
    # never print a secret, whatever its source
    percent, setting, _, reason = effective_threshold(loaded)
    effective = f"; effective {percent:.2f}: {reason}" if reason else ""
    rows = [
        (
            key,
            _shown(value, key.rpartition(".")[2]),
            str(source) + (effective if key == setting else ""),
        )
        for key, value, source in loaded.items()
    ]
    if args.json:
        payload = {
            "home": str(loaded.home),
            "file": str(loaded.path) if loaded.path else None,
            "settings": [{"key": k, "value": v, "source": s} for k, v, s in rows],
            "effective_threshold": percent,
        }
        say(json_text(json.loads(json.dumps(payload, default=str))))
        return EXIT_OK
    # values come from a file or the environment: printed escaped (cli/escaped)
    say(f"# home: {loaded.home}")
    say(f"# file: {loaded.path or '(none: defaults only)'}")
    width = max(len(k) + len(render_value(v)) for k, v, _s in rows) + 2
    for key, value, source in rows:
        text = f"{key}: {render_value(value)}"
        say(f"{text.ljust(width)}  # {source}")
    say("# compression trigger: " + "; ".join(_trigger_provenance(loaded)))
    return EXIT_OK


def _shown(value: object, key: str = "") -> object:
    """``value`` with anything shaped like a secret redacted (strings, lists, mappings), and
    whatever sits under a secret's name (``api_key``, ``token``, ``password``, ...)."""
    if key and SECRET_KEY.search(key) and value not in (None, "", {}, []):
        return "[REDACTED]"
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_shown(v) for v in value]
    if isinstance(value, dict):
        return {k: _shown(v, str(k)) for k, v in value.items()}
    return value


def _trigger_provenance(loaded: LoadedConfig) -> list[str]:
    """How ``threshold_tokens`` follows from these settings, step by step (spec 10 §3)."""
    from hermes_core.compression.policy import for_settings

    try:
        threshold = for_settings(loaded.settings)
    except ValueError as exc:
        return [f"cannot be computed: {exc}"]
    return list(threshold.provenance)


def run_check(args: argparse.Namespace) -> int:
    loaded = load(args)
    quiet_plugin_warnings(args)
    with diagnosed_plugins(loaded) as plugins:  # every failure listed, not the first raised
        failed = load_failures(plugins)
        records = list(plugins.records.values())
        warnings = list(plugins.warnings)
    problems = [plugin_problem(name, status) for name, status in failed] + warnings
    if problems:
        raise CommandError("\n".join(problems), exit_code=EXIT_USAGE)
    counts: dict[str, int] = {}
    for _key, _value, source in loaded.items():
        counts[source.kind] = counts.get(source.kind, 0) + 1
    summary = count(sum(counts.values()), "setting") + ": "
    summary += ", ".join(f"{n:,} {kind}" for kind, n in sorted(counts.items()))
    active = [r.name for r in records if r.status == "active"]
    database = _database_line(loaded)
    say(f"config OK: {loaded.path or 'defaults only'} ({summary})")
    say(f"plugins: {', '.join(active) or 'none'}")
    if database:
        say(database)
    return EXIT_OK


def _database_line(loaded: LoadedConfig) -> str:
    """Connect once to the PostgreSQL database a backend uses (reads nothing, writes nothing);
    an unreachable database is a configuration problem, reported before any host relies on
    it."""
    settings = loaded.settings
    users = [
        key
        for key, value in (
            ("sessions.backend", settings.sessions.backend if settings.sessions.enabled else ""),
            ("memory.backend", settings.memory.backend),
        )
        if value == "postgres"
    ]
    if not users:
        return ""
    from hermes_core.errors import HermesError
    from hermes_plugins.postgres.database import Database, dsn_from

    try:
        database = Database(
            dsn_from(settings.sessions, loaded.environ),
            pool_size=1,
            timeout=settings.sessions.timeout,
            name="hermes-context config check",
        )
    except HermesError as exc:
        raise CommandError(f"{' and '.join(users)}: {exc}", exit_code=EXIT_USAGE) from None
    from hermes_plugins.postgres.memory import schema as memory_schema
    from hermes_plugins.postgres.sessions import schema as sessions_schema

    def inspect(conn: Any) -> str:
        """The server's version, after the read-only schema checks of each backend in use
        (a newer schema, another program's tables)."""
        if "sessions.backend" in users:
            sessions_schema.read_version(conn, database.where)
        if "memory.backend" in users:
            memory_schema.read_version(conn, database.where)
        row = conn.execute("SHOW server_version").fetchone()
        return str(row[0]) if row else "?"

    try:
        server = database.run(inspect, idempotent=True)
    except HermesError as exc:
        raise CommandError(f"{' and '.join(users)}: {exc}", exit_code=EXIT_USAGE) from None
    finally:
        database.release()
    return f"database: PostgreSQL {server} at {database.where} answers ({', '.join(users)})"
