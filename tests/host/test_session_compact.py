"""``Session.compact``: a host that decides when to compact (hermes-agent's ``compress``)
hands its list over; the compaction is committed to the store, with its guidance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from host_support import make_hermes

import hermes_core as hc
from hermes_core.compression.assemble import is_summary_message

DATA = Path(__file__).resolve().parent.parent / "data" / "transcripts"
NOTE = {"role": "user", "content": "By the way, the payments rollout waits for the audit sign-off."}
REPLY = {"role": "assistant", "content": "Understood, I will keep that in mind."}


def chat(turns: int | None = None) -> list[dict[str, Any]]:
    """A real coding session, with one remark about the payments rollout early on."""
    messages: list[dict[str, Any]] = json.loads(
        (DATA / "coding-50turns.json").read_text(encoding="utf-8")
    )
    messages = messages if turns is None else messages[: turns * 2]
    at = next((i for i, m in enumerate(messages) if i > 3 and m.get("role") == "user"), 1)
    return [*messages[:at], NOTE, REPLY, *messages[at:]]


def test_forced_compact_commits_with_the_focus(tmp_path: Path) -> None:
    config = {"model": {"context_length": 16_000}}
    with make_hermes(tmp_path, config) as host, host.session("s1", user_id="u1") as session:
        messages = chat()
        out = session.compact(messages, force=True, focus="payments rollout", memory_context="")
        assert len(out) < len(messages) and any(is_summary_message(m) for m in out)
        summary = next(m for m in out if is_summary_message(m))["content"]
        assert "## Focus: payments rollout" in summary and "audit sign-off" in summary
        store = host.session_store
        assert store is not None
        active = store.messages("s1")
        archived = store.messages("s1", include_archived=True)
        assert [r.message["content"] for r in active] == [m["content"] for m in out]
        assert len(archived) > len(active)  # the originals are kept, archived
        assert session.messages == out


def test_compact_when_not_due_changes_nothing_and_stores_the_list(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host, host.session("s2") as session:
        messages = chat(2)
        assert session.compact(messages) == messages
        store = host.session_store
        assert store is not None and len(store.messages("s2")) == len(messages)


def test_the_hosts_real_count_makes_it_due(tmp_path: Path) -> None:
    """Our own count of the list is under the threshold; the host's real prompt count (with
    its system prompt and tool schemas) is over it: that figure decides."""
    messages = chat()
    with make_hermes(tmp_path) as probe:
        ours = probe.session("probe").compressor.count(messages)
    kinds: list[str] = []
    config = {
        "model": {"context_length": 1_000_000},
        "compression": {"threshold_tokens": ours + 2_000},
    }
    with (
        make_hermes(tmp_path / "h", config) as host,
        host.session("s3", on_event=lambda e: kinds.append(e.kind)) as session,
    ):
        assert session.compact(messages) == messages
        assert "compression_started" not in kinds
        out = session.compact(messages, prompt_tokens=ours + 6_000)
        assert "compression_started" in kinds and "compaction_committed" in kinds
        assert out != messages  # pruned or summarised: our policy picks, the host said when


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host, host.session("s4") as session:
        with pytest.raises(hc.InvalidArgument):
            session.compact(chat(2), force="yes")  # type: ignore[arg-type]
        with pytest.raises(hc.InvalidMessages):
            session.compact([object()])  # type: ignore[list-item]
        for bad in ({"focus": 3}, {"memory_context": ["notes"]}):
            with pytest.raises(hc.InvalidArgument, match="must be text"):
                session.compact(chat(2), force=True, **bad)  # type: ignore[arg-type]
        assert session.messages == []  # refused before anything was taken in
