"""What the test suite needs from the machine, and how it says so (docs/testing.md).

The PostgreSQL tests talk to a real server: the maintenance connection comes from
``HERMES_TEST_PG_ADMIN``, which tox must pass through; without a server they are left out with
one line, unless ``HERMES_POSTGRES_REQUIRED=1`` (CI) makes that a failure.
"""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEAD = "postgresql://postgres@127.0.0.1:1/postgres"  # port 1: nothing listens there


def _tox() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "tox.ini", encoding="utf-8")
    return parser


def _listed(value: str) -> set[str]:
    return {part.strip() for line in value.splitlines() for part in line.split(",") if part.strip()}


def test_tox_passes_the_admin_connection_to_every_environment_that_runs_pytest() -> None:
    tox = _tox()
    base = _listed(tox.get("testenv", "pass_env", fallback=""))
    for section in tox.sections():
        if not section.startswith("testenv"):
            continue
        commands = tox.get(section, "commands", fallback=tox.get("testenv", "commands"))
        if "pytest" not in commands:
            continue
        passed = _listed(tox.get(section, "pass_env", fallback="")) or base
        assert "HERMES_TEST_PG_ADMIN" in passed, section


def _pytest(*args: str, required: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES")}
    env["HERMES_TEST_PG_ADMIN"] = DEAD
    if required:
        env["HERMES_POSTGRES_REQUIRED"] = "1"
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            *args,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_without_a_server_the_postgres_tests_are_left_out_with_one_line(
    workers: list[str],
) -> None:
    pytest.importorskip("psycopg")
    done = _pytest(
        *workers,
        "tests/postgres/test_pg_database.py",
        "tests/test_architecture.py::test_the_cycle_finder_finds_one",
        required=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if "tests not run" in line]
    assert len(lines) == 1, done.stdout
    assert DEAD in lines[0] and "HERMES_TEST_PG_ADMIN" in lines[0]
    assert "SKIPPED" not in done.stdout


def test_where_they_must_run_a_missing_server_fails_them() -> None:
    pytest.importorskip("psycopg")
    done = _pytest("tests/postgres/test_pg_database.py", required=True)
    assert done.returncode != 0
    assert "HERMES_POSTGRES_REQUIRED=1" in done.stdout


def test_ci_requires_the_postgres_tests_and_a_developer_run_does_not() -> None:
    tox = _tox()
    assert "HERMES_POSTGRES_REQUIRED = {env:HERMES_POSTGRES_REQUIRED:0}" in tox.get(
        "testenv:py3-all", "setenv"
    )
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "export HERMES_POSTGRES_REQUIRED=1" in ci
    assert ci.index("export HERMES_POSTGRES_REQUIRED=1") < ci.index("tox run")
