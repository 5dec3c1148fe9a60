"""``validate_messages``: every reason a chat-completions provider would reject a transcript.

One pass over the messages, never raises, whatever the input; each problem is one line that
names the message index, what is wrong and what to do.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from hermes_core.transcript.objects import as_message_list
from hermes_core.transcript.parts import kind_of, type_problem

__all__ = [
    "KNOWN_ROLES",
    "MAX_NESTING",
    "kind_of",
    "nesting_exceeds",
    "role_of",
    "validate_appended",
    "validate_messages",
]

KNOWN_ROLES: Final = ("system", "developer", "user", "assistant", "tool")
_SYSTEM_ROLES: Final = frozenset({"system", "developer"})
_KNOWN_TEXT: Final = ", ".join(KNOWN_ROLES)
#: How deeply lists and objects may nest in one field of a message (the field's own value is
#: level 1: ``"content": [{"type": "text"}]`` is 2), and inside a tool call's arguments JSON.
#: Real tool arguments and content parts nest a handful of levels; 64 leaves room for any
#: schema while keeping every recursive walk (JSON encoding, hashing, copying) far from
#: Python's recursion limit. Deeper values are reported by `validate_messages`, refused with
#: `InvalidMessages` by the counters and the compressor.
MAX_NESTING: Final = 64
# Fields that make an assistant message meaningful even without content.
_ASSISTANT_PAYLOADS: Final = ("tool_calls", "refusal", "function_call", "audio")


def nesting_exceeds(value: object, limit: int = MAX_NESTING) -> bool:
    """Whether lists, tuples and dicts nest more than ``limit`` levels in ``value`` (a
    container is level 1). Iterative, and it stops at the first level past the limit, so
    a value nested thousands deep (or a cycle) costs no more than ``limit`` levels of it."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend(
            (child, depth + 1) for child in children if isinstance(child, (dict, list, tuple))
        )
    return False


def _too_deep_fields(msg: Mapping[Any, Any]) -> list[str]:
    """The fields of ``msg`` whose values nest deeper than `MAX_NESTING`, in order."""
    return [
        key if isinstance(key, str) else repr(key)
        for key, value in msg.items()
        if isinstance(value, (dict, list, tuple)) and nesting_exceeds(value)
    ]


def _show(text: str, limit: int = 60) -> str:
    """Quote a string on one line, cut short so a huge id cannot flood the report."""
    if len(text) > limit:
        text = text[:limit] + "..."
    return json.dumps(text, ensure_ascii=False)


def role_of(msg: object) -> str | None:
    role = msg.get("role") if isinstance(msg, dict) else None
    return role if isinstance(role, str) else None


def _part_problem(part: object, k: int) -> str | None:
    """Check one content part; only the part types a provider documents are checked in depth."""
    where = f"content[{k}]"
    if not isinstance(part, dict):
        return (
            f'{where} must be an object like {{"type": "text", "text": "..."}}, got {kind_of(part)}'
        )
    if problem := type_problem(part, where):
        return problem
    kind = part.get("type")
    if not isinstance(kind, str) or not kind:
        return f'{where} has no "type" (a string such as "text" or "image_url")'
    if kind == "text" and not isinstance(part.get("text"), str):
        return f'{where} is a text part without a string "text"'
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else None
        if not isinstance(url, str) or not url:
            return f'{where} is an image_url part without "image_url": {{"url": "..."}}'
    if kind == "refusal" and not isinstance(part.get("refusal"), str):
        return f'{where} is a refusal part without a string "refusal"'
    if kind in ("input_audio", "file") and not isinstance(part.get(kind), dict):
        return f'{where} is an {kind} part without an "{kind}" object'
    return None


def _arguments_problem(args: object) -> str | None:
    if not isinstance(args, str):
        return f"must be a JSON string, got {kind_of(args)}; encode it with json.dumps"
    try:
        parsed = json.loads(args)
    except json.JSONDecodeError as exc:
        return (
            f"is not valid JSON ({exc.msg} at column {exc.colno}); "
            'it must be a JSON object string such as "{}"'
        )
    except RecursionError:
        return (
            f"is not valid JSON here: it nests deeper than {MAX_NESTING} levels (too deep to "
            "parse); flatten the arguments"
        )
    except ValueError as exc:
        return f"is not valid JSON ({type(exc).__name__}); it must be a JSON object string"
    if not isinstance(parsed, dict):
        return f'must be a JSON object, got {kind_of(parsed)}; wrap the values in "{{...}}"'
    if nesting_exceeds(parsed):
        return f"nests deeper than {MAX_NESTING} levels; flatten the arguments"
    return None


class _Block:
    """An assistant message whose results may follow now, and its calls still unanswered."""

    __slots__ = ("answered", "open", "owner")

    def __init__(self, owner: int) -> None:
        self.owner = owner
        self.open: dict[str, str] = {}  # call id -> function name, in call order
        self.answered: dict[str, int] = {}  # call id -> the tool message answering it


class _Validator:
    """One pass over the transcript; problems are bucketed by message so they print in order."""

    def __init__(
        self,
        messages: Sequence[object],
        offset: int = 0,
        before: Mapping[str, int] | None = None,
    ) -> None:
        self.messages = messages
        self.offset = offset  # index of messages[0] in the whole transcript
        self.before = before or {}  # call id -> message (whole index) before ``messages`` using it
        self.problems: list[list[str]] = [[] for _ in messages]
        self.block: _Block | None = None
        self.first_call: dict[str, int] = {}  # call id -> first assistant message making it
        self.last_call: dict[str, int] = {}  # call id -> latest assistant message so far
        self.answered_at: dict[str, int] = {}  # call id -> tool message that answered it
        self.closed_by: dict[int, int] = {}  # assistant index -> message that ended its block
        for i, msg in enumerate(messages):
            if isinstance(msg, dict) and msg.get("role") == "assistant":
                for cid in tool_call_ids(msg):
                    self.first_call.setdefault(cid, i)

    def add(self, i: int, text: str) -> None:
        self.problems[i].append(f"message {i + self.offset}: {text}")

    def run(self, allow_pending: bool) -> list[str]:
        for i, msg in enumerate(self.messages):
            self.check(i, msg)
        if self.block is not None and not allow_pending:
            self.close(None)
        return [line for bucket in self.problems for line in bucket]

    def check(self, i: int, msg: object) -> None:
        if not isinstance(msg, dict):
            json_kind = msg is None or isinstance(msg, (str, int, float, list, tuple))
            hint = "" if json_kind else "; pass a dict, or the SDK's object (with .model_dump())"
            self.add(i, f"expected a message object with a role, got {kind_of(msg)}{hint}")
            self.close(i)
            return
        for field in _too_deep_fields(msg):
            self.add(
                i,
                f"{_show(field)} nests lists or objects deeper than {MAX_NESTING} levels; "
                "flatten it",
            )
        role = msg.get("role")
        if role != "tool":
            self.close(i)
        if "role" not in msg:
            self.add(i, f'has no "role"; use one of {_KNOWN_TEXT}')
        elif not isinstance(role, str):
            self.add(i, f'"role" must be a string, got {kind_of(role)}; use one of {_KNOWN_TEXT}')
        elif role not in KNOWN_ROLES:
            self.add(i, f"unknown role {_show(role)}; known roles are {_KNOWN_TEXT}")
        elif role == "assistant":
            self.assistant(i, msg)
        elif role == "tool":
            self.tool(i, msg)
        else:
            self.content(i, msg, role)

    def close(self, at: int | None) -> None:
        """End the current result block: every call still open there has no result."""
        block, self.block = self.block, None
        if block is None:
            return
        if at is not None:
            self.closed_by[block.owner] = at
        for cid, name in block.open.items():
            label = f"tool call {_show(cid)} ({name})" if name else f"tool call {_show(cid)}"
            if at is None:
                where = "(the transcript ends first); add a tool message with this tool_call_id"
            else:
                where = (
                    f"before message {at + self.offset}; "
                    "add a tool message with this tool_call_id before it"
                )
            self.add(block.owner, f"{label} has no result {where}, or remove the call")

    def content(self, i: int, msg: dict[Any, Any], role: str) -> None:
        content = msg.get("content")
        if content is None:
            # spec 10: content is a string, None or a list of parts, for every role; only an
            # assistant message needs something else to say then
            if role == "assistant" and not any(msg.get(key) for key in _ASSISTANT_PAYLOADS):
                self.add(i, "assistant message has neither content nor tool_calls")
        elif isinstance(content, list):
            for k, part in enumerate(content):
                problem = _part_problem(part, k)
                if problem is not None:
                    self.add(i, problem)
        elif not isinstance(content, str):
            self.add(
                i,
                f"content must be a string or a list of content parts, got {kind_of(content)}",
            )

    def assistant(self, i: int, msg: dict[Any, Any]) -> None:
        self.content(i, msg, "assistant")
        calls = msg.get("tool_calls")
        if calls is None:
            return
        if not isinstance(calls, list):
            self.add(i, f"tool_calls must be a list, got {kind_of(calls)}")
            return
        if not calls:
            self.add(i, "tool_calls is an empty list; remove the key when there are no calls")
            return
        block = _Block(i)
        here: dict[str, int] = {}
        for k, call in enumerate(calls):
            found = self.call(i, k, call)
            if found is None:
                continue
            cid, name = found
            if cid in here:
                self.add(i, f"tool_calls[{k}] repeats id {_show(cid)} of tool_calls[{here[cid]}]")
                continue
            here[cid] = k
            earlier = self.last_call.get(cid)
            whole = earlier + self.offset if earlier is not None else self.before.get(cid)
            if whole is not None:
                self.add(
                    i,
                    f"tool_calls[{k}] id {_show(cid)} is already used by message {whole}; "
                    "tool call ids must be unique in a transcript",
                )
            self.last_call[cid] = i
            block.open[cid] = name
        self.block = block

    def call(self, i: int, k: int, call: object) -> tuple[str, str] | None:
        """Check one tool call's shape; return its id and name when the id is usable."""
        where = f"tool_calls[{k}]"
        if not isinstance(call, dict):
            self.add(
                i,
                f"{where} must be an object with id, type and function, got {kind_of(call)}",
            )
            return None
        cid = call.get("id")
        if "id" not in call:
            self.add(i, f'{where} has no "id"')
        elif not isinstance(cid, str) or not cid:
            self.add(i, f"{where}.id must be a non-empty string, got {kind_of(cid)}")
        kind = call.get("type")
        if kind != "function":
            got = f"got {_show(kind) if isinstance(kind, str) else kind_of(kind)}"
            got = got if "type" in call else "it is missing"
            self.add(i, f'{where}.type must be "function" ({got})')
        function = call.get("function")
        name = ""
        if not isinstance(function, dict):
            self.add(i, f'{where} has no "function" object with name and arguments')
        else:
            raw_name = function.get("name")
            if isinstance(raw_name, str) and raw_name:
                name = raw_name
            else:
                self.add(i, f"{where}.function.name must be a non-empty string")
            if "arguments" not in function:
                self.add(i, f'{where}.function.arguments is missing; use "{{}}" for no arguments')
            else:
                problem = _arguments_problem(function.get("arguments"))
                if problem is not None:
                    self.add(i, f"{where}.function.arguments {problem}")
        if isinstance(cid, str) and cid:
            return cid, name
        return None

    def tool(self, i: int, msg: dict[Any, Any]) -> None:
        self.content(i, msg, "tool")
        if "tool_call_id" not in msg:
            self.add(i, "tool message has no tool_call_id; set it to the id of the call it answers")
            return
        cid = msg.get("tool_call_id")
        if not isinstance(cid, str) or not cid:
            self.add(i, f"tool_call_id must be a non-empty string, got {kind_of(cid)}")
            return
        block = self.block
        if block is not None and cid in block.open:
            del block.open[cid]
            block.answered[cid] = self.answered_at[cid] = i
            return
        self.add(i, self.misplaced(cid, block))

    def misplaced(self, cid: str, block: _Block | None) -> str:
        """Say why a result with a well-formed id does not answer an open call."""
        shown = _show(cid)
        if block is not None and cid in block.answered:
            first = block.answered[cid] + self.offset
            return f"tool call {shown} is answered twice (also by message {first}); remove one"
        owner = self.last_call.get(cid)
        if owner is not None and cid in self.answered_at:
            first = self.answered_at[cid] + self.offset
            return f"tool call {shown} was already answered by message {first}; remove this"
        if owner is not None:
            between = self.closed_by.get(owner, owner + 1)
            role = role_of(self.messages[between]) or "not a tool result"
            return (
                f"tool_call_id {shown} answers a call in message {owner + self.offset}, "
                f"but message {between + self.offset} "
                f"({role}) comes between them; results must directly follow their assistant message"
            )
        if cid in self.first_call:
            return (
                f"tool_call_id {shown} answers a call made later, in message "
                f"{self.first_call[cid]}; a result must come after its call"
            )
        return (
            f"tool_call_id {shown} answers no earlier tool call; remove this message "
            "or add the call to the assistant message before it"
        )


def validate_messages(messages: object, *, allow_pending_tool_calls: bool = False) -> list[str]:
    """Return every problem a provider would reject, one line each; [] means it will accept it.

    Never raises, whatever the input. Tool results must follow their assistant message directly
    (any non-tool message ends the block; parallel results may come in any order). A system or
    developer message anywhere is fine. With ``allow_pending_tool_calls`` the calls of a trailing
    assistant message may still lack results (an in-flight turn); by default they are reported,
    since a provider rejects such a request. SDK objects are read as their dicts.
    """
    if not isinstance(messages, (list, tuple)):
        return [f"transcript: expected a list of messages, got {kind_of(messages)}"]
    if not messages:
        return ["transcript: no messages; a request needs at least one user message"]
    return _Validator(as_message_list(messages, lenient=True)).run(allow_pending_tool_calls)


def validate_appended(messages: Sequence[Any], start: int) -> list[str]:
    """The problems ``messages[start:]`` bring to ``messages[:start]`` (checked before), indexed
    in the whole list; a trailing turn in flight is fine. Only the tool-call block they continue
    is validated again; earlier messages lend only their call ids (no id is used twice)."""
    begin = max(0, min(start, len(messages)))
    while begin > 0 and role_of(messages[begin - 1]) == "tool":
        begin -= 1
    if begin > 0 and role_of(messages[begin - 1]) == "assistant":
        begin -= 1
    if begin >= len(messages):
        return []
    earlier = [(i, m) for i, m in enumerate(messages[:begin]) if role_of(m) == "assistant"]
    before = {cid: i for i, m in earlier for cid in tool_call_ids(m)}  # id -> last user of it
    new = as_message_list(messages[begin:], lenient=True)
    return _Validator(new, begin, before).run(True)


def tool_call_ids(msg: Mapping[str, Any]) -> list[str]:
    """Ids of the message's well-formed tool calls, in order; [] when it makes none."""
    calls = msg.get("tool_calls") if isinstance(msg, Mapping) else None
    ids = [c.get("id") for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
    return [cid for cid in ids if isinstance(cid, str) and cid]
