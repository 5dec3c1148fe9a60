"""Compaction inside ``prepare()`` with a real loopback summariser LLM: usage is counted,
a failing summariser falls back, overflow and model switches keep the session going."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeLLM, answer, http_error
from host_support import assistant, make_hermes, run_turns, user

import hermes_core as hc
from hermes_core.compression.assemble import is_summary_message

SUMMARY = (
    "## Goal\nFinish the plan.\n## Constraints & Preferences\nNone.\n## Completed Actions\n"
    "Discussed steps.\n## Active State\nMid-way.\n## Blocked\nNothing.\n## Key Decisions\n"
    "None.\n## Resolved Questions\nNone.\n## Historical Pending Asks\nNone."
)
PROSE = " ".join(f"Sentence {k} adds one more detail to the plan." for k in range(40))


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def config(llm: FakeLLM, **compression: Any) -> dict[str, Any]:
    return {
        "model": {"context_length": 8_000, "name": "gpt-4o"},
        "auxiliary": {"compression": {"base_url": llm.base_url, "model": "aux"}},
        "compression": compression,
        # the background review uses the same endpoint; these tests count summary calls
        "memory": {"nudge_interval": 0, "flush_min_turns": 0},
    }


def converse(session: hc.Session, turns: int = 16) -> list[list[dict[str, Any]]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
    steps = [f"step {n}: {PROSE}" for n in range(turns)]
    return run_turns(session, messages, steps, with_tools=False)


def test_the_summariser_llm_runs_inside_prepare_and_its_usage_is_counted(
    tmp_path: Path, llm: FakeLLM
) -> None:
    llm.default = answer(SUMMARY, usage={"prompt_tokens": 3_000, "completion_tokens": 120})
    events: list[hc.SessionEvent] = []
    with make_hermes(tmp_path, config(llm)) as host:
        session = host.session("s1", on_event=events.append)
        sent = converse(session)
        assert llm.requests, "the summariser was never asked"
        assert all(hc.count_tokens(wire) < 8_000 for wire in sent)
        summaries = [m for m in session.view.sent if is_summary_message(m)]
        assert len(summaries) == 1 and "Finish the plan." in summaries[0]["content"]
        record = host.session_store.get_session("s1", user_id=None)  # type: ignore[union-attr]
        assert record is not None
        counters = record.counters
        assert counters["summarizer_calls"] == len(llm.requests)
        assert counters["summarizer_prompt_tokens"] == 3_000 * len(llm.requests)
        assert counters["summarizer_completion_tokens"] == 120 * len(llm.requests)
        assert counters["summarizer_input_chars"] > 0
        finished = [e for e in events if e.kind == "compression_finished"]
        assert finished and finished[-1].data["summarizer_usage"]["calls"] >= 1


def test_a_failing_summariser_falls_back_and_the_compaction_is_still_committed(
    tmp_path: Path, llm: FakeLLM
) -> None:
    llm.default = http_error(500)
    events: list[hc.SessionEvent] = []
    with make_hermes(tmp_path, config(llm)) as host:
        session = host.session("s1", on_event=events.append)
        sent = converse(session)
        assert all(hc.count_tokens(wire) < 8_000 for wire in sent)
        kinds = [e.kind for e in events]
        assert "compression_failed" in kinds and "compaction_committed" in kinds
        rows = host.session_store.messages("s1", include_archived=True)  # type: ignore[union-attr]
        assert all(
            any(f"step {n}:" in str(r.message.get("content")) for r in rows) for n in range(16)
        )


def test_progress_notices_reach_the_host_as_status_events(tmp_path: Path, llm: FakeLLM) -> None:
    llm.default = answer(SUMMARY)
    events: list[hc.SessionEvent] = []
    with make_hermes(tmp_path, config(llm, progress_notices=True)) as host:
        converse(host.session("s1", on_event=events.append))
    texts = [e.data["text"] for e in events if e.kind == "status"]
    assert any(t.startswith("Compressing context") for t in texts)
    assert any(t.startswith("Context compressed") for t in texts)


def test_overflow_compresses_at_once_and_learns_the_window(tmp_path: Path, llm: FakeLLM) -> None:
    llm.default = answer(SUMMARY)
    events: list[hc.SessionEvent] = []
    cfg = config(llm)
    cfg["model"]["context_length"] = 64_000
    with make_hermes(tmp_path, cfg) as host:
        session = host.session("s1", on_event=events.append)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        for n in range(10):
            messages += [user(f"step {n}: {PROSE}"), assistant(f"ok {n}")]
        wire = session.prepare(messages)
        before = hc.count_tokens(wire)
        assert not [e for e in events if e.kind == "compaction_committed"]
        session.on_overflow(400, "This model's maximum context length is 4096 tokens.")
        assert session.compressor.context_length == 4_096
        wire = session.prepare(messages)
        assert hc.count_tokens(wire) < min(before, 4_096)
        assert [e.kind for e in events].count("compaction_committed") == 1
        assert (
            next(e for e in events if e.kind == "overflow").data["learned_context_length"] == 4_096
        )
        session.close()
    with make_hermes(tmp_path, cfg) as host:  # the learned window survives a restart
        assert host.session("s1").compressor.context_length == 4_096


def test_set_model_keeps_the_sessions_state(tmp_path: Path, llm: FakeLLM) -> None:
    llm.default = answer(SUMMARY)
    with make_hermes(tmp_path, config(llm)) as host:
        session = host.session("s1")
        converse(session)
        compactions = session.compressor.compactions
        threshold = session.compressor.threshold_tokens
        session.set_model("gpt-4o-mini", context_length=32_000)
        assert session.compressor.threshold_tokens > threshold
        assert session.compressor.compactions == compactions >= 1
        assert session.info.model == "gpt-4o-mini"
