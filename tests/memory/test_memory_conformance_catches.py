"""The memory conformance kit catches broken backends: each wrapper below around the file
documents breaks one promise, and the kit's checks for that promise must fail against it
(while the same checks pass against the plain wrapper, so the failure is the breakage's).

The checks are called directly (fresh documents each), not through a nested pytest run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import pytest

from hermes_core.memory.documents import Claim, Decision, MemoryDocuments, Removed, Scope, Updated
from hermes_core.memory.file_documents import FileMemoryDocuments
from hermes_core.memory.staged import PendingWrites
from hermes_core.testing import MemoryDocumentsConformance
from hermes_core.testing.memory_conformance import MemoryKit

T = TypeVar("T")
KIT = MemoryDocumentsConformance()


class Wrapper:
    """Passes everything to the file documents of a home (the unbroken variant)."""

    kind = "wrapped-files"

    def __init__(self, home: Path) -> None:
        self.inner = FileMemoryDocuments.for_home(home)

    @property
    def pending(self) -> PendingWrites:
        return self.inner.pending

    def where(self, target: str, scope: Scope) -> str:
        return self.inner.where(target, scope)

    def read(self, target: str, scope: Scope) -> str | None:
        return self.inner.read(target, scope)

    def update(
        self,
        target: str,
        scope: Scope,
        decide: Callable[[str | None], Decision[T]],
        *,
        claim: Claim | None = None,
    ) -> Updated[T] | None:
        return self.inner.update(target, scope, decide, claim=claim)

    def reset_preview(self, target: str, scope: Scope) -> str | None:
        return self.inner.reset_preview(target, scope)

    def reset(self, target: str, scope: Scope) -> Removed | None:
        return self.inner.reset(target, scope)

    def close(self) -> None:
        self.inner.close()


class DropsTheClaim(Wrapper):
    """Stores an approved write without consuming its staged record."""

    def update(self, target: str, scope: Scope, decide: Any, *, claim: Claim | None = None) -> Any:
        return self.inner.update(target, scope, decide)


class IgnoresTheVersion(Wrapper):
    """Decides on the text this instance read last and stores over whatever is there now
    (a backend without a version check, or one that caches)."""

    def __init__(self, home: Path) -> None:
        super().__init__(home)
        self.seen: dict[tuple[str, Scope], str | None] = {}

    def update(self, target: str, scope: Scope, decide: Any, *, claim: Claim | None = None) -> Any:
        key = (target, scope)
        if key not in self.seen:
            self.seen[key] = self.inner.read(target, scope)
        decision = decide(self.seen[key])
        if decision.text is not None:
            self.seen[key] = decision.text
        return self.inner.update(target, scope, lambda _now: decision, claim=claim)


class IgnoresTheScope(Wrapper):
    """Keeps every user's text in the shared one."""

    def read(self, target: str, scope: Scope) -> str | None:
        return self.inner.read(target, None)

    def update(self, target: str, scope: Scope, decide: Any, *, claim: Claim | None = None) -> Any:
        return self.inner.update(target, None, decide, claim=claim)


class KeepsNoDriftCopy(Wrapper):
    def update(self, target: str, scope: Scope, decide: Any, *, claim: Claim | None = None) -> Any:
        def without_copy(text: str | None) -> Decision[Any]:
            decision = decide(text)
            return Decision(decision.value, decision.text, False, decision.succeeded)

        return self.inner.update(target, scope, without_copy, claim=claim)


class Case(NamedTuple):
    """A broken variant, a kit check that must fail against it, and how it must fail."""

    kind: type[Wrapper]
    check: str
    reason: str  # a regex the failure's message matches: the check fails for the breakage
    params: Mapping[str, Any] = {}


CAUGHT = [
    Case(DropsTheClaim, "staged_writes_wait_and_approval_applies_each_once", "DID NOT RAISE"),
    Case(
        DropsTheClaim,
        "a_staged_write_approved_by_many_instances_at_once_lands_once",
        "8 of 8 approvals applied it",
    ),
    Case(IgnoresTheVersion, "writes_through_several_instances_in_turn_all_land", "sees host one"),
    Case(IgnoresTheScope, "each_user_reads_only_their_own_profile", "bob read another profile"),
    Case(
        IgnoresTheScope,
        "close_user_ids_have_separate_profiles",
        "'Alice' read the profile of 'alice'",
        {"owner": "alice", "other": "Alice"},
    ),
    Case(
        KeepsNoDriftCopy,
        "drift_refuses_rewrites_keeps_one_copy_and_add_keeps_the_foreign_text",
        "no copy was kept",
    ),
]


def run_check(name: str, kind: type[Wrapper], home: Path, params: Mapping[str, Any]) -> None:
    """Call one kit check as pytest would, with a kit over ``kind`` on ``home``."""
    opened: list[MemoryDocuments] = []

    def open_documents() -> MemoryDocuments:
        opened.append(kind(home))
        return opened[-1]

    try:
        getattr(KIT, f"test_{name}")(memory=MemoryKit(open_documents), **params)
    finally:
        for documents in opened:
            documents.close()


def case_id(case: Case) -> str:
    return "-".join([case.kind.__name__, case.check, *map(repr, case.params.values())])


@pytest.mark.parametrize("case", CAUGHT, ids=[case_id(c) for c in CAUGHT])
def test_the_kit_catches_the_broken_backend(tmp_path: Path, case: Case) -> None:
    run_check(case.check, Wrapper, tmp_path / "good", case.params)
    with pytest.raises((AssertionError, pytest.fail.Exception), match=case.reason):
        run_check(case.check, case.kind, tmp_path / "broken", case.params)


def test_each_broken_variant_still_passes_what_it_does_not_break(tmp_path: Path) -> None:
    """So the checks above fail because of the breakage, not because a variant is unusable."""
    kinds = sorted({case.kind for case in CAUGHT}, key=lambda kind: kind.__name__)
    for kind in kinds:
        for check in (
            "add_keeps_the_seed_format_and_a_duplicate_writes_nothing",
            "batch_is_all_or_nothing",
        ):
            run_check(check, kind, tmp_path / f"{kind.__name__}-{check[:5]}", {})
