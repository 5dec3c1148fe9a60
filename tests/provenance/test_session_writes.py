"""Issue 26, provenance on every write, through ``Session`` and the real memory tool: words a
tool result, an attachment or recalled text brought in do not reach a later system prompt
without a person's approval; the user's own words still land at once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from prov_support import (
    IBAN,
    OBEYED,
    PAGE,
    QUIET_PAGE,
    fetched,
    fresh_prompt,
    make_hermes,
    memory,
)

from hermes_core.markers import hookimpl
from hermes_core.types import SessionInfo

COMPACT_IBAN = IBAN.replace(" ", "")


def memory_file(home: Path) -> str:
    found = [p.read_text() for p in home.rglob("MEMORY.md")]
    return "\n".join(found)


@pytest.mark.parametrize("user_id", [None, "alice"], ids=["single-user", "multi-user"])
def test_a_fetched_page_cannot_put_its_iban_into_memory(
    tmp_path: Path, user_id: str | None
) -> None:
    with make_hermes(tmp_path) as host:
        session = host.session("s1", user_id=user_id)
        session.system_prompt("base")
        session.prepare(
            [{"role": "user", "content": "What does the billing page say?"}, *fetched(PAGE)]
        )
        result = memory(session, OBEYED)
        assert result["success"] and result["staged"] is True
        assert "tool:web_fetch" in result["message"]
        session.close()
        assert IBAN not in memory_file(tmp_path) and COMPACT_IBAN not in memory_file(tmp_path)
        assert IBAN not in fresh_prompt(host, user_id=user_id)
        record = json.loads(next((tmp_path / "pending" / "memory").glob("*.json")).read_text())
        assert record["format"] == 2
        assert record["provenance"]["source"] == "tool"
        assert record["provenance"]["sources"][0] == {
            "kind": "tool",
            "tool": "web_fetch",
            "overlap": 1.0,
        }
        assert record["provenance"]["decided"] == "staged"
        assert record["provenance"]["session_id"] == "s1"


def test_the_users_own_words_land_at_once(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        session = host.session("s1")
        said = f"Our company account for invoices is {IBAN}, please remember it."
        session.prepare([{"role": "user", "content": said}, *fetched(PAGE)])
        result = memory(session, f"The company's invoice account is {IBAN}.")
        assert result["success"] and not result.get("staged")
        session.close()
        assert IBAN in fresh_prompt(host)


def test_a_note_in_the_models_own_words_lands(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        session = host.session("s1")
        session.prepare([{"role": "user", "content": "Read the billing page."}, *fetched(PAGE)])
        result = memory(
            session, "The billing page asks to change the payment account; unconfirmed."
        )
        assert result["success"] and not result.get("staged")


def test_refuse_refuses_and_changes_nothing(tmp_path: Path) -> None:
    with make_hermes(tmp_path, {"memory": {"untrusted_writes": "refuse"}}) as host:
        session = host.session("s1")
        session.prepare([{"role": "user", "content": "Read the billing page."}, *fetched(PAGE)])
        result = memory(session, OBEYED)
        assert result["success"] is False and result["reason"] == "untrusted"
        assert "ask the user" in result["error"]
        session.close()
        assert not (tmp_path / "pending" / "memory").exists() or not any(
            (tmp_path / "pending" / "memory").iterdir()
        )
        assert IBAN not in memory_file(tmp_path)


def test_allow_lands_and_records_the_provenance(tmp_path: Path) -> None:
    seen: list[tuple[str, Any]] = []
    from hermes_core.provenance import add_sink

    def sink(event: str, **kw: Any) -> None:
        seen.append((event, kw["provenance"]))

    remove = add_sink(sink)
    try:
        with make_hermes(tmp_path, {"memory": {"untrusted_writes": "allow"}}) as host:
            session = host.session("s1")
            session.prepare([{"role": "user", "content": "Read the page."}, *fetched(PAGE)])
            result = memory(session, OBEYED)
            assert result["success"] and not result.get("staged")
            session.close()
            assert IBAN in fresh_prompt(host)
    finally:
        remove()
    landed = [p for event, p in seen if event == "landed"]
    assert landed and landed[0].source == "tool" and landed[0].policy == "allow"
    assert landed[0].sources[0].tool == "web_fetch" and landed[0].decided == "landed"


def test_write_approval_block_still_blocks(tmp_path: Path) -> None:
    with make_hermes(tmp_path, {"memory": {"write_approval": "block"}}) as host:
        session = host.session("s1")
        session.prepare([{"role": "user", "content": "Read the page."}, *fetched(PAGE)])
        assert memory(session, OBEYED)["reason"] == "read_only"


def test_an_attached_file_is_untrusted(tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    (workspace / "billing.md").write_text(QUIET_PAGE + "\n")
    with make_hermes(tmp_path / "home") as host:
        session = host.session("s1", workspace=workspace)
        session.prepare([{"role": "user", "content": "Summarise @file:billing.md"}])
        result = memory(session, OBEYED)
        assert result["staged"] is True and "attachment" in result["message"]
        session.close()
        assert IBAN not in fresh_prompt(host)


class Recall:
    @hookimpl
    def memory_prefetch(self, query: str, session: SessionInfo) -> str | None:
        return QUIET_PAGE


def test_recalled_provider_text_is_untrusted(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        host.plugins.register(Recall(), name="recall")
        session = host.session("s1")
        sent = session.prepare([{"role": "user", "content": "How do we pay invoices?"}])
        assert "<memory-context>" in json.dumps(sent)
        result = memory(session, OBEYED)
        assert result["staged"] is True and "recalled" in result["message"]


@pytest.mark.parametrize("tool", ["session_search", "session_recall"])
def test_session_search_and_recall_results_are_recalled_text(tmp_path: Path, tool: str) -> None:
    with make_hermes(tmp_path) as host:
        session = host.session("s1")
        session.prepare([{"role": "user", "content": "What did we say?"}, *fetched(PAGE, tool)])
        result = memory(session, OBEYED)
        assert result["staged"] is True and "recalled" in result["message"]


def test_a_resumed_session_still_knows_what_it_read(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        first = host.session("s1")
        first.prepare([{"role": "user", "content": "Read the page."}, *fetched(PAGE)])
        first.close()
    with make_hermes(tmp_path) as host:
        again = host.session("s1")
        assert memory(again, OBEYED)["staged"] is True


def test_a_write_outside_any_session_lands_as_before(tmp_path: Path) -> None:
    from hermes_core.memory.approval import WriteRequest
    from hermes_core.memory.home import open_writer

    with make_hermes(tmp_path) as host:
        writer = open_writer(host.home, host.settings)
        assert writer.write(WriteRequest("add", "memory", OBEYED), "cli")["success"]
        assert IBAN in fresh_prompt(host)


def test_what_another_host_read_into_the_session_counts_too(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as one, make_hermes(tmp_path) as two:
        late = two.session("s1")  # opened before the other host stored the page
        early = one.session("s1")
        early.prepare([{"role": "user", "content": "Read the page."}, *fetched(PAGE)])
        late.prepare([{"role": "user", "content": "And now?"}])  # reloads the session first
        assert PAGE in json.dumps(late.messages)
        assert memory(late, OBEYED)["staged"] is True
