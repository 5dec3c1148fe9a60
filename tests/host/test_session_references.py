"""Issue 14: @-references through ``Hermes.session()``: the API copy of the user's message gets
the attachment, the stored message keeps the user's words, refusals are warnings (events)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from host_support import make_hermes

import hermes_core as hc

SECRET = "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"the loopback page says hello"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def page() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "notes.md").write_text("line one\nline two\nline three\n", encoding="utf-8")
    (root / ".env").write_text(SECRET + "\n", encoding="utf-8")
    return root


def ask(
    tmp_path: Path, workspace: Path, text: str, **references: Any
) -> tuple[dict[str, Any], list[hc.SessionEvent], hc.Hermes]:
    events: list[hc.SessionEvent] = []
    config = {"model": {"context_length": 128_000}, "references": references}
    host = make_hermes(tmp_path / f"home{sum(1 for _ in tmp_path.glob('home*'))}", config)
    session = host.session("s1", workspace=workspace, on_event=events.append)
    wire = session.prepare(
        [{"role": "system", "content": "sys"}, {"role": "user", "content": text}]
    )
    session.close()
    return wire[-1], events, host


def warnings(events: list[hc.SessionEvent]) -> list[str]:
    return [e.data["warning"] for e in events if e.kind == "reference_warning"]


def test_a_workspace_file_is_attached_to_the_api_copy_only(tmp_path: Path, workspace: Path) -> None:
    sent, events, host = ask(tmp_path, workspace, "What does @file:notes.md:2-3 say?")
    assert "--- Attached Context ---" in sent["content"]
    assert "line two\nline three" in sent["content"] and "line one" not in sent["content"]
    assert not warnings(events)
    with host:
        assert host.session_store is not None
        stored = host.session_store.messages("s1")
        assert stored[-1].message["content"] == "What does @file:notes.md:2-3 say?"


def test_an_env_file_is_refused_with_a_warning_and_never_sent(
    tmp_path: Path, workspace: Path
) -> None:
    sent, events, host = ask(tmp_path, workspace, "Use the key in @file:.env please")
    host.close()
    assert "sk-proj" not in str(sent) and "OPENAI_API_KEY" not in str(sent)
    assert any(".env" in w for w in warnings(events))


def test_a_loopback_url_is_refused_by_default_and_fetched_when_allowed(
    tmp_path: Path, workspace: Path, page: str
) -> None:
    sent, events, host = ask(tmp_path, workspace, f"Summarise @url:{page}")
    host.close()
    assert "the loopback page says hello" not in sent["content"]
    assert warnings(events)
    sent, events, host = ask(tmp_path, workspace, f"Summarise @url:{page}", allow_private_urls=True)
    host.close()
    assert "the loopback page says hello" in sent["content"]
    assert not warnings(events)


def test_references_disabled_attach_nothing(tmp_path: Path, workspace: Path) -> None:
    sent, events, host = ask(tmp_path, workspace, "What does @file:notes.md say?", enabled=False)
    host.close()
    assert sent["content"] == "What does @file:notes.md say?"
    assert not warnings(events)


def test_without_a_workspace_file_references_are_refused(tmp_path: Path) -> None:
    events: list[hc.SessionEvent] = []
    with make_hermes(tmp_path / "home", {"model": {"context_length": 128_000}}) as host:
        session = host.session("s1", on_event=events.append)
        wire = session.prepare([{"role": "user", "content": "see @file:notes.md"}])
        session.close()
    assert "line one" not in str(wire)
    assert any("workspace" in w for w in warnings(events))


def test_an_email_address_is_not_a_reference(tmp_path: Path, workspace: Path) -> None:
    sent, events, host = ask(tmp_path, workspace, "Mail ops@example.com or ping @alice")
    host.close()
    assert sent["content"] == "Mail ops@example.com or ping @alice"
    assert not warnings(events)


def test_a_rewritten_history_keeps_attachments_and_expands_the_new_ask(
    tmp_path: Path, workspace: Path
) -> None:
    events: list[hc.SessionEvent] = []
    config = {"model": {"context_length": 128_000}}
    with make_hermes(tmp_path / "home", config) as host:
        session = host.session("s1", workspace=workspace, on_event=events.append)
        first = {"role": "user", "content": "Read @file:notes.md:1"}
        reply = {"role": "assistant", "content": "It says line one."}
        session.prepare([first])
        session.end_turn([first, reply])
        session.prepare([first, reply, {"role": "user", "content": "and the rest?"}])
        # the host edits its last message and regenerates: a rewrite, not an extension
        edited = {"role": "user", "content": "and @file:notes.md:3 ?"}
        wire = session.prepare([first, reply, edited])
        session.close()
        assert "transcript_replaced" in [e.kind for e in events]
        assert "line one" in wire[0]["content"]  # the kept message keeps its attachment
        assert "line three" in wire[-1]["content"]  # the new ask is expanded
        assert host.session_store is not None
        stored = [r.message["content"] for r in host.session_store.messages("s1")]
        assert stored[-1] == "and @file:notes.md:3 ?"  # the store keeps the user's words
