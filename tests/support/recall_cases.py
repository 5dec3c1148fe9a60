"""The recall property, shared by the SQLite (tests/host) and PostgreSQL (tests/postgres) runs:
after any sequence of appends and forced compactions, every original ever archived comes back
byte-exact through ``session_recall``, and another user gets nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

import hermes_core as hc
from hermes_core.compression.references import format_ref
from hermes_core.sessions.lineage import ancestry

Message = dict[str, Any]
REF = re.compile(r"\[ref ([0-9:,\-]+)\]")

#: one step: ("turn", tool rounds, result lines, duplicate?, long arguments?) or ("compact",)
steps = st.lists(
    st.one_of(
        st.tuples(
            st.just("turn"),
            st.integers(0, 3),
            st.integers(1, 120),
            st.booleans(),
            st.booleans(),
        ),
        st.just(("compact",)),
    ),
    min_size=2,
    max_size=9,
)


def turn(n: int, rounds: int, lines: int, duplicate: bool, long_args: bool) -> list[Message]:
    """A user message, ``rounds`` tool calls with results, and a reply; every text unique to
    turn ``n`` unless ``duplicate`` (then the results repeat turn 0's body)."""
    out: list[Message] = [{"role": "user", "content": f"task {n}: look at module{n}"}]
    for r in range(rounds):
        cid = f"call_{n}_{r}"
        args: dict[str, Any] = {"path": f"src/module{n}_{r}.py"}
        if long_args:
            args["content"] = f"# patch {n}.{r}\n" + "x = 1\n" * 150
        body = "".join(f"module{n}_{r} line {i}: value = {i * 7}\n" for i in range(lines))
        if duplicate:
            body = "".join(f"shared line {i}: same output\n" for i in range(lines + 40))
        out.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": "read_file", "arguments": json.dumps(args)},
                    }
                ],
            }
        )
        out.append({"role": "tool", "tool_call_id": cid, "content": body})
    out.append({"role": "assistant", "content": f"done with task {n}"})
    return out


def recall_all(session: hc.Session, **arguments: Any) -> tuple[dict[str, Any], dict[Any, str]]:
    """The first page's answer, and every (ref, field) -> text, its pages concatenated."""
    first = json.loads(session.handle_tool_call("session_recall", arguments))
    texts: dict[Any, str] = {}
    if not first["success"]:
        return first, texts
    for page in range(1, first["pages"] + 1):
        answer = json.loads(session.handle_tool_call("session_recall", {**arguments, "page": page}))
        assert answer["success"] and answer["page"] == page
        for item in answer["items"]:
            key = (item["ref"], item["field"])
            assert item.get("offset", 0) == len(texts.get(key, ""))  # pages continue each other
            texts[key] = texts.get(key, "") + item["text"]
    return first, texts


def fields(message: Message) -> Iterator[tuple[str, str]]:
    if isinstance(message.get("content"), str):
        yield "content", message["content"]
    for k, call in enumerate(message.get("tool_calls") or []):
        yield f"tool_calls[{k}].arguments", call["function"]["arguments"]


def run_and_check(host: hc.Hermes, session_id: str, plan: list[Any]) -> None:
    """Play ``plan`` as user ``u1``, then check the property; ``u2`` must get nothing."""
    originals: list[Message] = []
    store = host.session_store
    assert store is not None
    with host.session(session_id, user_id="u1") as session:
        history: list[Message] = []
        for n, step in enumerate(plan):
            if step[0] == "turn":
                new = turn(n, *step[1:])
                originals.extend(new)
                history = session.compact([*history, *new])
            elif history:
                history = session.compact(history, force=True)
        # 1. every row this conversation archived comes back byte-exact by its own ref
        chain = ancestry(store, session.session_id, user_id="u1")
        active = {r.seq for r in store.messages(session.session_id)}
        archived = 0
        for depth, sid in enumerate(chain):
            for row in store.messages(sid, include_archived=True):
                if sid == session.session_id and row.seq in active:
                    continue
                archived += 1
                ref = format_ref([row.seq], depth)
                answer, texts = recall_all(session, ref=ref)
                assert answer["success"], answer
                for field, text in fields(dict(row.message)):
                    assert texts[(ref, field)] == text
        # 2. every original message is in the context or comes back through the tool
        in_context = {json.dumps(m, sort_keys=True) for m in history}
        for message in originals:
            if json.dumps(message, sort_keys=True) in in_context:
                continue
            if message["role"] == "tool":
                _answer, texts = recall_all(session, tool_call_id=message["tool_call_id"])
                assert message["content"] in texts.values()
        # 3. every reference the model can see resolves: nothing dangles
        refs = REF.findall(json.dumps(history, ensure_ascii=False))
        for ref in refs:
            assert json.loads(session.handle_tool_call("session_recall", {"ref": ref}))["success"]
        assert not any("[ref " in json.dumps(m) for m in originals)
    # 4. another user, even with the same session id's refs, gets nothing
    with host.session(f"{session_id}-other", user_id="u2") as other:
        for ref in refs[:3] or ["1"]:
            answer = json.loads(other.handle_tool_call("session_recall", {"ref": ref}))
            assert not answer["success"] and "not found" in answer["error"]
        leaked = json.loads(other.handle_tool_call("session_recall", {"query": "module0"}))
        assert not leaked["success"]
        if archived:
            answer = json.loads(
                other.handle_tool_call("session_recall", {"tool_call_id": "call_0_0"})
            )
            assert not answer["success"]
