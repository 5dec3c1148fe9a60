"""``hermes-context skills ...``: list and show the skills library, review staged writes.

The library is the home's (``$HERMES_HOME/skills``), scanned with every loaded
``scan_threat`` plugin. ``show`` prints a skill as it is on disk, for a person to read,
even when it matches a threat pattern (the model is refused it; a warning names the
patterns here); control characters, bidirectional overrides and other invisible
characters (zero-width spaces, direction marks, tag characters) are printed as visible
escapes (``\\x1b``, ``\\u200f``), in ``--json`` output too, so nothing in a skill can hide
text from the person reading it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes_core.cli.audit_cmd import add_audit_parser
from hermes_core.cli.common import EXIT_INPUT, EXIT_OK, CommandError, open_host, table
from hermes_core.cli.consolidate_cmd import add_skills_consolidate
from hermes_core.cli.escaped import err as _err
from hermes_core.cli.escaped import say as _say
from hermes_core.cli.escaped import short as _short
from hermes_core.cli.pending_view import SeenRecords, skill_lines
from hermes_core.cli.staged import command, escaped_handler, review_staged, source_label
from hermes_core.memory.dates import dates_object, short_dates
from hermes_core.skills.frontmatter import ParsedSkill
from hermes_core.skills.layout import escape_invisible
from hermes_core.skills.library import SkillLibrary
from hermes_core.skills.pending import PendingSkillWrite
from hermes_core.skills.screening import findings
from hermes_core.types import Finding


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = sub.add_parser(
        "skills",
        parents=[common],
        help="list or show skills, review staged skill writes",
        description="The skills library ($HERMES_HOME/skills).",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", parents=[common], help="every skill, by path")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.add_argument(
        "--dates", action="store_true", help="when each skill was added, changed, last viewed"
    )
    listing.set_defaults(handler=escaped_handler(run_list))
    show = actions.add_parser("show", parents=[common], help="print one skill's SKILL.md")
    show.add_argument("name", metavar="NAME", help="the skill's name (or category/name)")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.add_argument("--dates", action="store_true", help="a line with the skill's dates first")
    show.set_defaults(handler=escaped_handler(run_show))
    pending = actions.add_parser(
        "pending", parents=[common], help="list staged skill writes, or show one in full"
    )
    pending.add_argument("pending_id", metavar="ID", nargs="?", help="show this one in full")
    pending.add_argument("--json", action="store_true", help="print JSON")
    pending.set_defaults(handler=escaped_handler(run_pending))
    for name, verb in (("approve", "apply"), ("reject", "drop")):
        review = actions.add_parser(name, parents=[common], help=f"{verb} staged skill writes")
        review.add_argument("pending_id", metavar="ID|all", help="a pending id, or all")
        review.add_argument("--json", action="store_true", help="print JSON")
        if name == "approve":
            review.add_argument(
                "--yes",
                action="store_true",
                help="with all: apply the writes shown in full before, without asking",
            )
        review.set_defaults(handler=escaped_handler(run_review), review=name)
    add_audit_parser(actions, common, "skills")
    add_skills_consolidate(actions, [common])


@contextlib.contextmanager
def _library(args: argparse.Namespace) -> Iterator[SkillLibrary]:
    from hermes_core.skills.home import open_library

    with open_host(args) as host:

        def strict(text: str) -> list[Finding]:
            return host.plugins.scan_threat(text, "strict")

        yield open_library(host.home, host.settings, scan=strict)


def _json(value: object) -> None:
    """JSON with every control and invisible character as a ``\\u`` escape (json.dumps
    escapes C0 controls itself; DEL, C1 and the invisible ones are escaped after it), the
    rest of the text readable as it is."""
    print(escape_invisible(json.dumps(value, ensure_ascii=False, indent=1, default=_plain)))


def _show(text: str) -> None:
    """Print text from a skill with invisible characters and controls made visible."""
    _say(escape_invisible(text))


def _plain(value: object) -> str:
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    raise TypeError(f"not JSON: {type(value).__name__}")


def run_list(args: argparse.Namespace) -> int:
    with _library(args) as library:
        skills, problems = library.scan_all()
        dates = library.dates.read()
    if args.json:
        _json(
            {
                "skills": [
                    s.to_dict() | {"dates": dates_object(dates.get(s.path))} for s in skills
                ],
                "skipped": [{"path": p.path, "reason": p.reason} for p in problems],
            }
        )
        return EXIT_OK
    for problem in problems:
        _err(f"hermes-context: skipped {problem.path}: {problem.reason}")
    if not skills:
        _err(f"no skills in {library.root}")
        return EXIT_OK
    rows = [
        (s.name, s.category or "-", _short(escape_invisible(s.description), 70)) for s in skills
    ]
    if args.dates:
        now = time.time()
        dated = [
            (*row, short_dates(dates.get(s.path), now)) for row, s in zip(rows, skills, strict=True)
        ]
        _say(table(("name", "category", "description", "dates"), dated))
        return EXIT_OK
    _say(table(("name", "category", "description"), rows))
    return EXIT_OK


def run_show(args: argparse.Namespace) -> int:
    with _library(args) as library:
        try:
            path, text, parsed = library.read(args.name)
        except KeyError as exc:
            message = str(exc.args[0] if exc.args else exc)
            message = message.replace("Use action 'list'", "Run `hermes-context skills list`")
            raise CommandError(message, EXIT_INPUT) from None
        threats = [f.pattern_id for f in findings(library.scan, [text])]
        when = library.dates.read().get(path)
    if args.json:
        result: dict[str, Any] = {"path": path, "content": text, "threats": threats}
        result["dates"] = dates_object(when)
        if isinstance(parsed, ParsedSkill):
            result |= {
                **parsed.meta.to_dict(),
                "path": path,
                "front_matter": dict(parsed.front_matter),
                "body": parsed.body,
            }
        else:
            result["problem"] = parsed
        _json(result)
    else:
        _say(f"# {library.root / path / 'SKILL.md'}")
        if args.dates:
            _say(f"# {short_dates(when, time.time())}")
        _show(text.removeprefix("\ufeff").rstrip("\n"))
    if not isinstance(parsed, ParsedSkill):
        _err(f"hermes-context: warning: {path} is not a valid skill: {parsed}")
    if threats:
        _err(
            f"hermes-context: warning: {path} matches threat pattern(s) {', '.join(threats)}; "
            "the model is not shown it"
        )
    return EXIT_OK


def run_pending(args: argparse.Namespace) -> int:
    if args.pending_id is not None:
        return _pending_one(args)
    with _library(args) as library:
        records, broken = library.pending.all()
    if args.json:  # for scripts: not noted as shown (nobody may have read it)
        _json({"pending": [dataclasses.asdict(r) for r in records], "unreadable": broken})
        return EXIT_OK
    for pending_id in broken:
        _err(f"hermes-context: pending skill write {pending_id} cannot be read; reject it")
    if not records:
        _err("no pending skill writes")
        return EXIT_OK
    now = time.time()
    rows = [
        (
            r.id,
            r.origin,
            _short(source_label(r.provenance), 30),
            _age(now - r.created),
            _short(r.summary(), 70),
        )
        for r in records
    ]
    _say(table(("id", "origin", "source", "age", "what"), rows))
    _err(
        f"each is cut to a line: `{command(args, 'skills', 'pending', 'ID')}` shows one in "
        f"full; `{command(args, 'skills', 'approve', 'all')}` shows each before it applies them"
    )
    return EXIT_OK


def _home_of(library: SkillLibrary) -> Path:
    return library.pending.directory.parent.parent  # <home>/pending/skills


def _pending_one(args: argparse.Namespace) -> int:
    """One staged skill write in full, with a diff against the files there now (noted as
    shown: ``approve all --yes`` may then apply it)."""
    with _library(args) as library:
        try:
            record = library.pending.get(args.pending_id)
        except KeyError as exc:
            raise CommandError(str(exc.args[0] if exc.args else exc), EXIT_INPUT) from None
        lines = skill_lines(record, library.root)
        SeenRecords(_home_of(library), "skills").add([record])
    if args.json:
        _json({**dataclasses.asdict(record), "shown": lines})
        return EXIT_OK
    for line in lines:
        _say(line)
    return EXIT_OK


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{max(0, int(seconds))}s"
    if seconds < 7200:
        return f"{int(seconds // 60)}m"
    return f"{int(seconds // 3600)}h"


def run_review(args: argparse.Namespace) -> int:
    with _library(args) as library:
        seen = SeenRecords(_home_of(library), "skills")

        def show(record: PendingSkillWrite) -> list[str]:
            return skill_lines(record, library.root)

        return review_staged(args, library, "skill", show=show, seen=seen)
