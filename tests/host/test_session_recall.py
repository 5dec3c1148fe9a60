"""``session_recall`` at the session level on real SQLite: the property over any sequence of
appends and forced compactions (tests/support/recall_cases.py), and the issue's "done when":
a model that lost a tool output to pruning gets it back with one tool call."""

from __future__ import annotations

import itertools
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from host_support import make_hermes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from recall_cases import REF, run_and_check, steps, turn

import hermes_core as hc

_ids = itertools.count()


@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(plan=steps, in_place=st.booleans())
def test_everything_archived_comes_back_byte_exact(plan: list[Any], in_place: bool) -> None:
    with tempfile.TemporaryDirectory() as home:
        config = {"model": {"context_length": 8_000}, "compression": {"in_place": in_place}}
        with make_hermes(Path(home), config) as host:
            run_and_check(host, f"prop-{next(_ids)}", plan)


def test_a_pruned_tool_output_comes_back_with_one_call(tmp_path: Path) -> None:
    config = {"model": {"context_length": 8_000}}
    with make_hermes(tmp_path, config) as host, host.session("s1", user_id="u1") as session:
        messages = [m for n in range(8) for m in turn(n, 1, 200, False, False)]
        out = session.compact(messages, force=True)
        stand_in = next(m for m in out if m["role"] == "tool" and "[ref " in m["content"])
        original = next(
            m["content"]
            for m in messages
            if m.get("tool_call_id") == stand_in["tool_call_id"] and m["role"] == "tool"
        )
        ref = REF.search(stand_in["content"])
        assert ref is not None and stand_in["content"].endswith(f" [ref {ref.group(1)}]")
        answer = json.loads(session.handle_tool_call("session_recall", {"ref": ref.group(1)}))
        assert answer["success"] and answer["pages"] == 1
        assert [i["text"] for i in answer["items"]] == [original]
        assert answer["items"][0]["tool_call_id"] == stand_in["tool_call_id"]
        assert "not instructions" in answer["note"]
        # the summary names the span it replaced, after its end marker
        summary = next(m["content"] for m in out if "END OF CONTEXT SUMMARY" in str(m))
        assert re.search(r"---( \[ref [0-9,\-]+\])$", summary)


def test_without_a_store_no_reference_is_written(tmp_path: Path) -> None:
    messages = [m for n in range(8) for m in turn(n, 1, 200, True, True)]
    out = hc.compress(messages, context_length=8_000, force=True, summarizer="fallback")
    assert out.status == "compressed" and "[ref " not in json.dumps(out.messages)
    config = {"model": {"context_length": 8_000}, "sessions": {"enabled": False}}
    with make_hermes(tmp_path, config) as host, host.session("s1") as session:
        compacted = session.compact(messages, force=True)
        assert compacted != messages and "[ref " not in json.dumps(compacted)
        assert "session_recall" not in {t["function"]["name"] for t in session.tools()}
        answer = json.loads(session.handle_tool_call("session_recall", {"ref": "1"}))
        assert answer == {
            "success": False,
            "error": "session_recall is not available in this session",
        }


def test_an_image_stripped_on_overflow_names_its_row(tmp_path: Path) -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 400}}
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "shot", "arguments": "{}"}}
        ],
    }
    messages = [
        {"role": "user", "content": "take a screenshot"},
        call,
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": [{"type": "text", "text": "here"}, image],
        },
        {"role": "user", "content": "what now"},
    ]
    config = {"model": {"context_length": 8_000}}
    with make_hermes(tmp_path, config) as host, host.session("s1", user_id="u1") as session:
        session.prepare(messages)
        session.on_overflow(400, "prompt is too long")
        note = session.prepare(messages)[2]["content"][1]["text"]
        assert note.startswith("[Image removed") and note.endswith(" [ref 3]")
        answer = json.loads(session.handle_tool_call("session_recall", {"ref": "3"}))
        texts = [i["text"] for i in answer["items"]]
        assert texts == [
            "here",
            "[image: image/png, 422 characters of inline data, not shown as text]",
        ]


def test_no_model_input_raises_out_of_handle_tool_call(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Digits that are not ASCII ("²", "①") passed ``isdigit`` and crashed ``int`` (review of
    issue 24, finding 3); anything unexpected below becomes an error the model reads, logged
    without the secret it may carry."""
    config = {"model": {"context_length": 8_000}}
    with make_hermes(tmp_path, config) as host, host.session("s1", user_id="u1") as session:
        session.compact([m for n in range(8) for m in turn(n, 1, 200, False, False)], force=True)
        for ref in ("²:5", "[ref ³:1]", "①:2", "4-²", "٣"):
            answer = json.loads(session.handle_tool_call("session_recall", {"ref": ref}))
            assert answer["success"] is False and "is not a reference" in answer["error"]
        key = "sk-proj-Q7vX2mP9kL4wR8tY1zN6bC3dF5gH0jK2"
        store = session.store
        assert store is not None

        def broken(*_args: Any, **_kwargs: Any) -> Any:
            raise RuntimeError(f"driver fell over near {key}")

        store.messages = broken  # type: ignore[method-assign]  # a fault, injected
        with caplog.at_level("WARNING", logger="hermes_context.session"):
            text = session.handle_tool_call("session_recall", {"query": "anything"})
        answer = json.loads(text)
        assert answer["success"] is False and "RuntimeError" in answer["error"]
        assert key not in text and key not in caplog.text and "RuntimeError" in caplog.text
