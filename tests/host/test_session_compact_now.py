"""``Session.compact_now(focus)``: hermes-agent's ``/compress <focus>`` on the active view,
committed to the store at once, with a ``plan_compaction`` plugin steering it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from host_support import make_hermes
from test_session_compact import chat

import hermes_core as hc
from hermes_core import hookimpl
from hermes_core.compression.assemble import is_summary_message
from hermes_core.types import SessionInfo

#: a window where the 20-turn chat (about 30,000 tokens) is under the threshold: only a
#: forced compaction compacts it
CONFIG = {"model": {"context_length": 64_000}}


def summary_text(messages: list[dict[str, Any]]) -> str:
    return str(next(m for m in messages if is_summary_message(m))["content"])


def test_compact_now_commits_and_returns_the_transcript(tmp_path: Path) -> None:
    events: list[str] = []
    with (
        make_hermes(tmp_path, CONFIG) as host,
        host.session("s1", user_id="u1", on_event=lambda e: events.append(e.kind)) as session,
    ):
        messages = chat(20)
        assert len(session.prepare(messages)) == len(messages)  # not due
        assert "compaction_committed" not in events
        out = session.compact_now(focus="payments rollout")
        assert len(out) < len(messages) and "compaction_committed" in events
        text = summary_text(out)
        assert "## Focus: payments rollout" in text and "audit sign-off" in text
        assert session.messages == out
        store = host.session_store
        assert store is not None
        assert [r.message["content"] for r in store.messages("s1")] == [m["content"] for m in out]
        assert len(store.messages("s1", include_archived=True)) > len(out)


def test_compact_now_without_focus_and_with_nothing_to_compact(tmp_path: Path) -> None:
    with make_hermes(tmp_path, CONFIG) as host, host.session("s2") as session:
        short = chat(2)
        session.prepare(short)
        assert session.compact_now() == short  # all of it is the protected tail
        session.prepare(chat(20))
        out = session.compact_now()
        assert "## Focus" not in summary_text(out)


def test_bad_focus_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    with make_hermes(tmp_path, CONFIG) as host, host.session("s3") as session:
        session.prepare(chat(20))
        before = session.messages
        for bad in (3, ["topic"], b"topic"):
            with pytest.raises(hc.InvalidArgument, match="focus must be text or None"):
                session.compact_now(focus=bad)  # type: ignore[arg-type]
        assert session.messages == before
        session.close()
        with pytest.raises(hc.SessionError, match="closed"):
            session.compact_now()


def test_the_async_twin(tmp_path: Path) -> None:
    with make_hermes(tmp_path, CONFIG) as host, host.session("s4") as session:
        session.prepare(chat(20))
        out = asyncio.run(session.acompact_now(focus="payments rollout"))
        assert "## Focus: payments rollout" in summary_text(out) and session.messages == out


class KeepTheNote:
    """Keeps the remark about the payments rollout verbatim; records what it was shown."""

    def __init__(self) -> None:
        self.shown: list[tuple[str, str | None, SessionInfo | None]] = []

    @hookimpl
    def plan_compaction(
        self, messages: list[dict[str, Any]], task: str, focus: str | None, session: Any
    ) -> dict[int, str]:
        self.shown.append((task, focus, session))
        at = next(i for i, m in enumerate(messages) if "audit sign-off" in str(m.get("content")))
        return {at: "keep", at + 1: "keep"}  # the remark and the reply to it


def test_a_plan_plugin_steers_the_sessions_compaction(tmp_path: Path) -> None:
    with make_hermes(tmp_path, CONFIG) as host:
        planner = KeepTheNote()
        host.plugins.register(planner, name="keep-the-note")
        with host.session("s5", user_id="u5") as session:
            messages = chat(20)
            session.prepare(messages)
            out = session.compact_now(focus="payments rollout")
    task, focus, info = planner.shown[0]
    assert focus == "payments rollout" and info is not None and info.user_id == "u5"
    newest = next(m for m in reversed(messages) if m.get("role") == "user")
    assert task == newest["content"]
    summary = next(i for i, m in enumerate(out) if is_summary_message(m))
    remark = next(m for m in messages if "audit sign-off" in str(m.get("content")))
    assert out[summary + 1]["content"] == remark["content"]  # verbatim, right after
