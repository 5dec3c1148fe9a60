"""Issue 16 §3: staged writes approved from many shells at once are each applied once.

Eight processes (spawned, real files) run the command line's ``memory approve all`` on one
home: every write lands once, each is reported applied by exactly one process, and the
others skip it (exit 0, nothing on stdout about it) instead of failing half-way. And an
approval racing a rejection of the same record: exactly one of them succeeds.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import re
from pathlib import Path
from typing import Any

import pytest

from hermes_core.cli import main

PROCESSES = 3  # three shells already overlap on the lock; more only add start-up time
WRITES = 10
APPLIED = re.compile(r"^([0-9a-f]{8}): Pending write \1 applied\.$", re.M)


def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _approve_all(home: str, barrier: Any, results: Any) -> None:
    barrier.wait()  # all start together, for the most overlap
    results.put(_cli(["memory", "approve", "all", "--yes", "--home", home]))


def _stage(home: Path, count: int) -> list[str]:
    (home / "config.yaml").write_text("memory:\n  write_approval: stage\n", encoding="utf-8")
    ids = []
    for n in range(count):
        code, out, err = _cli(["memory", "add", f"fact number {n}", "--home", str(home)])
        assert code == 0, err
        ids.append(re.search(r"staged as ([0-9a-f]{8})", out).group(1))  # type: ignore[union-attr]
    return ids


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("HERMES__"):
            monkeypatch.delenv(name)
    path = tmp_path / "home"
    path.mkdir()
    return path


def test_three_shells_approving_all_apply_each_write_exactly_once(home: Path) -> None:
    ids = _stage(home, WRITES)
    for pending_id in ids:  # each shown in full: what `approve all --yes` may apply
        assert _cli(["memory", "pending", pending_id, "--home", str(home)])[0] == 0
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(PROCESSES), ctx.Queue()
    workers = [
        ctx.Process(target=_approve_all, args=(str(home), barrier, results))
        for _ in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=300) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    assert [w.exitcode for w in workers] == [0] * PROCESSES
    applied = [pending_id for _code, out, _err in outcomes for pending_id in APPLIED.findall(out)]
    assert sorted(applied) == sorted(ids), outcomes  # each id once: no more, no fewer
    assert [code for code, _out, _err in outcomes] == [0] * PROCESSES, outcomes
    assert not any("error" in err for _code, _out, err in outcomes), outcomes
    text = (home / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    assert sorted(re.findall(r"fact number \d+", text)) == sorted(
        f"fact number {n}" for n in range(WRITES)
    )
    assert list((home / "pending" / "memory").glob("*.json")) == []


def _reject_in_another_process(home: str, pending_id: str, results: Any) -> None:
    from hermes_core.memory import files

    files.LOCK_TIMEOUT = 0.5  # the approval holds the lock until it is done: do not wait
    results.put(_cli(["memory", "reject", pending_id, "--home", home]))


def _approve_racing_a_reject(home: str, pending_id: str, results: Any) -> None:
    """Approve; in the middle of the write (the record checked, not yet consumed), another
    process rejects the same record."""
    import hermes_core.memory.file_documents as documents

    real_write = documents.atomic_write
    ctx = multiprocessing.get_context("spawn")

    def write_while_rejected(path: Path, text: str, check: Any = None) -> None:
        if path.name == "MEMORY.md":
            inner: Any = ctx.Queue()
            rejecter = ctx.Process(
                target=_reject_in_another_process, args=(home, pending_id, inner)
            )
            rejecter.start()
            results.put(("reject", *inner.get(timeout=120)))
            rejecter.join(timeout=60)
        real_write(path, text, check)

    documents.atomic_write = write_while_rejected  # type: ignore[assignment]
    results.put(("approve", *_cli(["memory", "approve", pending_id, "--home", home])))


def test_an_approval_and_a_rejection_of_one_record_cannot_both_succeed(home: Path) -> None:
    (pending_id,) = _stage(home, 1)
    ctx = multiprocessing.get_context("spawn")
    results: Any = ctx.Queue()
    approver = ctx.Process(target=_approve_racing_a_reject, args=(str(home), pending_id, results))
    approver.start()
    outcomes = {
        verb: (code, out, err)
        for verb, code, out, err in (results.get(timeout=300), results.get(timeout=300))
    }
    approver.join(timeout=60)
    succeeded = [verb for verb, (code, _out, _err) in outcomes.items() if code == 0]
    assert succeeded == ["approve"], outcomes
    assert "applied" in outcomes["approve"][1]
    assert "rejected" not in outcomes["reject"][1]
    text = (home / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    assert text.count("fact number 0") == 1
    assert list((home / "pending" / "memory").glob("*.json")) == []
