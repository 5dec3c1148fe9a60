"""Shared fixtures; the plugin-author fixtures come from hermes_core.testing itself."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

pytest_plugins = ["hermes_core.testing"]

# Property tests assert what happened, never how fast: no per-example deadline and no "too
# slow" health check, which fail on a busy machine without any behaviour having changed.
settings.register_profile("hermes", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("hermes")

DATA = Path(__file__).parent / "data"


def pytest_report_header() -> str:
    """One line on what the PostgreSQL tests will meet, so a skip is never a surprise."""
    from pg import ADMIN_DSN, server_problem

    problem = server_problem()
    return f"postgresql: {ADMIN_DSN} answers" if problem is None else f"postgresql: {problem}"


_NOT_RUN = pytest.StashKey[tuple[int, str]]()


def _needs_postgres(item: pytest.Item) -> bool:
    return "postgres" in item.path.parts or "pg_dsn" in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without a server, the PostgreSQL tests are left out with one line of summary instead of
    a skip each; where they must run (``HERMES_POSTGRES_REQUIRED=1``, CI) they stay and fail."""
    if os.environ.get("HERMES_POSTGRES_REQUIRED") == "1":
        return
    needing = [item for item in items if _needs_postgres(item)]
    if not needing:
        return
    from pg import server_problem

    problem = server_problem()
    if problem is None:
        return
    items[:] = [item for item in items if not _needs_postgres(item)]
    config.hook.pytest_deselected(items=needing)
    config.stash[_NOT_RUN] = (len(needing), problem)
    worker_output = getattr(config, "workeroutput", None)  # an xdist worker: tell the controller
    if worker_output is not None:
        worker_output["postgres_not_run"] = [len(needing), problem]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist's controller collects nothing itself: each worker reports what it left out (every
    worker collects the whole run, so the largest count is the run's)."""
    reported = getattr(node, "workeroutput", {}).get("postgres_not_run")
    if reported:
        count, problem = reported
        previous = node.config.stash.get(_NOT_RUN, (0, problem))
        node.config.stash[_NOT_RUN] = (max(count, previous[0]), problem)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    not_run = terminalreporter.config.stash.get(_NOT_RUN, None)
    if not_run is not None:
        count, problem = not_run
        terminalreporter.write_line(f"postgresql: {count} tests not run: {problem}", yellow=True)


@pytest.fixture
def transcripts_dir() -> Path:
    return DATA / "transcripts"


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh $HERMES_HOME with no HERMES__ overrides leaking in from the environment."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    for name in list(os.environ):
        if name.startswith("HERMES__"):
            monkeypatch.delenv(name)
    return home


@pytest.fixture(autouse=True)
def _restore_logger_levels() -> Iterator[None]:
    """The command line quietens plugin-load warnings by raising a logger's level for its one
    run; in a test process that would leak into later tests' ``caplog``."""
    import logging

    names = ["hermes_context", "hermes_context.plugins", "hermes_context.memory"]
    levels = {name: logging.getLogger(name).level for name in names}
    yield
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)
