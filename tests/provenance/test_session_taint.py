"""How a session's messages feed the index: by role, appended blocks, summaries; the audit seam
sees every decision; the model cannot claim a provenance through the tool's arguments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prov_support import IBAN, OBEYED, PAGE, fetched, make_hermes, memory

from hermes_core.compression.assemble import END_MARKER, SUMMARY_PREFIX
from hermes_core.host.session_taint import SessionTaint, WatchedView
from hermes_core.provenance import add_sink, judge
from hermes_core.transcript.appended import ATTACHED_HEADER


def kinds(taint: SessionTaint, text: str) -> list[str]:
    return [f.kind for f in judge([text], taint.index).sources]


def test_a_summary_is_untrusted_and_the_user_text_merged_after_it_is_the_users() -> None:
    taint = SessionTaint()
    merged = f"{SUMMARY_PREFIX}\n{PAGE}\n{END_MARKER}\nplease pay vendor account 445566778899"
    taint.absorb([{"role": "user", "content": merged}])
    assert kinds(taint, OBEYED) == ["summary"]
    assert not judge(["the vendor account is 445566778899"], taint.index).tainted


def test_an_attachment_after_the_users_words_is_untrusted_and_the_words_are_not() -> None:
    taint = SessionTaint()
    text = f"Our help line is +49 30 1234 5678\n{ATTACHED_HEADER}\n{PAGE}"
    taint.absorb([{"role": "user", "content": text}])
    assert kinds(taint, OBEYED) == ["attachment"]
    assert not judge(["The help line is +49 30 1234 5678."], taint.index).tainted


def test_assistant_text_is_the_models_own() -> None:
    taint = SessionTaint()
    taint.absorb([{"role": "assistant", "content": PAGE}])
    assert not judge([OBEYED], taint.index).tainted


def test_the_model_cannot_claim_a_provenance(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        session = host.session("s1")
        session.prepare([{"role": "user", "content": "Read it."}, *fetched(PAGE)])
        arguments = {"action": "add", "target": "memory", "content": OBEYED, "source": "user"}
        result = json.loads(session.handle_tool_call("memory", arguments))
        assert result["success"] is False
        assert memory(session, OBEYED)["staged"] is True


def test_the_audit_seam_sees_staging_approval_and_rejection(tmp_path: Path) -> None:
    from hermes_core.cli import main

    seen: list[tuple[str, str, Any]] = []

    def sink(event: str, *, store: str, provenance: Any, pending_id: Any, detail: Any) -> None:
        seen.append((event, store, provenance and provenance.label()))

    remove = add_sink(sink)
    try:
        with make_hermes(tmp_path) as host:
            session = host.session("s1")
            session.prepare([{"role": "user", "content": "Read it."}, *fetched(PAGE)])
            first = memory(session, OBEYED)["pending_id"]
            second = memory(session, f"The Acme account is {IBAN}.")["pending_id"]
            session.close()
        assert main(["--home", str(tmp_path), "memory", "approve", first]) == 0
        assert main(["--home", str(tmp_path), "memory", "reject", second]) == 0
    finally:
        remove()
    assert seen == [
        ("staged", "memory", "tool:web_fetch"),
        ("staged", "memory", "tool:web_fetch"),
        ("approved", "memory", "tool:web_fetch"),
        ("rejected", "memory", "tool:web_fetch"),
    ]


def test_a_failing_sink_never_fails_the_write(tmp_path: Path) -> None:
    def broken(event: str, **_: Any) -> None:
        raise RuntimeError("disk full")

    remove = add_sink(broken)
    try:
        with make_hermes(tmp_path) as host:
            session = host.session("s1")
            session.prepare([{"role": "user", "content": "Remember that I like tabs."}])
            assert memory(session, "The user likes tabs.")["success"]
    finally:
        remove()


def test_a_view_rewritten_without_the_page_keeps_its_words_in_the_index() -> None:
    """A compaction (or a host's rewritten history) replaces the view; the index keeps what
    the model read before, and indexes the new messages (the summary) too."""
    taint = SessionTaint()
    view = WatchedView(taint)
    page = fetched(PAGE)
    view.extend(page, [1, 2])
    summary = {
        "role": "user",
        "content": f"{SUMMARY_PREFIX}\nthe vendor asked for 99887766554433\n",
    }
    view.replace([summary], [3])
    assert kinds(taint, OBEYED) == ["tool"]
    assert kinds(taint, "account 99887766554433") == ["summary"]


def test_a_full_index_holds_every_write_and_says_so(tmp_path: Path) -> None:
    events: list[str] = []
    with make_hermes(tmp_path) as host:
        session = host.session("s1", on_event=lambda e: events.append(e.kind))
        session.taint.index.cap = 20
        session.prepare([{"role": "user", "content": "Read it."}, *fetched(PAGE)])
        assert memory(session, "The user likes tabs.")["staged"] is True
        assert events.count("taint_index_full") == 1
        memory(session, "The user likes spaces.")
        assert events.count("taint_index_full") == 1  # told once
