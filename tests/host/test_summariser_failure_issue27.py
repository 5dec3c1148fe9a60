"""Issue 27 item 5: what a summariser failure does in a real session, on a hand-moved clock.

docs/compression.md, "When the summariser fails": the compaction that met the failure is
finished at once with the fallback summary; then no automatic compaction for 60 s; the next
ones ask the LLM again, and after two fallbacks in a row it is left alone for 300 s. Every
compaction reports why it ran or why the fallback stood in (never ``reason: null``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeLLM, answer, http_error
from host_support import assistant, make_hermes, user
from manual_clock import Clock

import hermes_core as hc
from hermes_core.compression.assemble import SYSTEM_NOTE

SUMMARY = (
    "## Goal\nFinish the plan.\n## Constraints & Preferences\nNone.\n## Completed Actions\n"
    "Discussed steps.\n## Active State\nMid-way.\n## Blocked\nNothing."
)
PROSE = " ".join(f"Sentence {k} adds one more detail to the plan." for k in range(40))


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def config(llm: FakeLLM) -> dict[str, Any]:
    return {
        "model": {"context_length": 8_000, "name": "gpt-4o"},
        "auxiliary": {"compression": {"base_url": llm.base_url, "model": "aux"}},
        "compression": {"schedule": "threshold"},
        "memory": {"nudge_interval": 0, "flush_min_turns": 0},
    }


def finished(events: list[hc.SessionEvent]) -> list[dict[str, Any]]:
    return [e.data for e in events if e.kind == "compression_finished"]


class Host:
    """A host loop: one user turn a call, the reply appended, usage reported."""

    def __init__(self, session: hc.Session) -> None:
        self.session = session
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        self.n = 0

    def turn(self) -> None:
        self.messages.append(user(f"step {self.n}: {PROSE}"))
        wire = self.session.prepare(self.messages)
        self.session.record_usage({"prompt_tokens": hc.count_tokens(wire)})
        self.messages.append(assistant(f"answer {self.n}"))
        self.session.end_turn(self.messages)
        self.n += 1

    def until(self, events: list[hc.SessionEvent], kind: str, limit: int = 40) -> None:
        before = sum(1 for e in events if e.kind == kind)
        for _ in range(limit):
            self.turn()
            if sum(1 for e in events if e.kind == kind) > before:
                return
        raise AssertionError(f"no {kind} in {limit} turns")


def test_a_failure_finishes_with_the_fallback_then_holds_for_the_cooldown(
    tmp_path: Path, llm: FakeLLM
) -> None:
    llm.default = http_error(500)
    clock = Clock()
    events: list[hc.SessionEvent] = []
    with make_hermes(tmp_path, config(llm)) as host:
        session = host.session("s1", on_event=events.append)
        session.compressor.use_clock(clock)
        loop = Host(session)
        loop.until(events, "compression_finished")
        first = finished(events)[-1]
        assert first["status"] == "compressed" and first["summarizer"] == "fallback"
        assert "the LLM summary failed (server)" in first["reason"]
        guard = session.compressor.export_state()["guard"]
        assert guard["cooldown_kind"] == "other" and guard["cooldown_s"] == 60
        # the clock stands still: over the threshold again, the cooldown holds
        loop.until(events, "compression_blocked")
        blocked = [e.data for e in events if e.kind == "compression_blocked"][-1]
        assert blocked["reason"].startswith("summary cooldown: 60 s left")
        assert len(finished(events)) == 1
        calls = len(llm.requests)
        clock.now += 61  # the cooldown is over: the next compaction asks the LLM again
        loop.until(events, "compression_finished")
        second = finished(events)[-1]
        assert len(llm.requests) > calls
        assert second["summarizer"] == "fallback" and "failed (server)" in second["reason"]
        # two fallbacks in a row: after the next cooldown the LLM is not asked, and the
        # compaction says why the fallback stood in (it said nothing before issue 27)
        calls = len(llm.requests)
        clock.now += 61
        loop.until(events, "compression_finished")
        third = finished(events)[-1]
        assert len(llm.requests) == calls
        assert third["summarizer"] == "fallback"
        assert third["reason"] and "two fallback summaries in a row" in third["reason"]


def test_every_compaction_carries_a_reason_and_the_system_note_is_recognisable(
    tmp_path: Path, llm: FakeLLM
) -> None:
    llm.default = answer(SUMMARY)
    events: list[hc.SessionEvent] = []
    with make_hermes(tmp_path, config(llm)) as host:
        session = host.session("s1", on_event=events.append)
        session.compressor.use_clock(Clock())
        loop = Host(session)
        loop.until(events, "compression_finished")
        loop.turn()
        session.compact_now()
        reports = finished(events)
        assert [r["summarizer"] for r in reports] == ["llm", "llm"]
        assert reports[0]["reason"].startswith("at or over the threshold (")
        assert reports[1]["reason"].startswith("forced")
        first = session.messages[0]
    # after a restart the session's first message is the system prompt with the note the
    # compaction appended once (docs/compression.md, "The system note")
    with make_hermes(tmp_path, config(llm)) as host:
        again = host.session("s1").messages[0]
    assert again == first
    assert again["role"] == "system" and again["content"].endswith(SYSTEM_NOTE)
    assert again["content"].count(SYSTEM_NOTE) == 1
