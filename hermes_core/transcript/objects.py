"""The objects a host's SDK hands us, read as the plain dicts its API sent.

Why: a host written with the official ``openai`` or ``anthropic`` client holds pydantic
models (``ChatCompletionMessage``, content blocks, Responses output items, usage records),
not dicts. Every public call that takes messages, items or usage reads them through here,
at the edge, so the rest of the library keeps working on plain JSON.

Why duck typing: importing the SDKs would make them dependencies (and cost their import
time). An SDK object is anything with a callable ``model_dump`` (pydantic v2), else
``to_dict``; ``vars()`` and ``__dict__`` are never read (they hold private state, not the
wire form). ``model_dump`` is called the way both SDKs serialise a model into a request
(``mode="json", exclude_unset=True, by_alias=True`` and the model's ``__api_exclude__``):
so an object parsed from a response gives back exactly the dict the API sent, without the
``None`` of every field it left out (``tool_calls``, ``refusal``, ``audio``...).

A whole response where a message is expected is read as its message: a ``ChatCompletion``
as ``choices[0].message`` (refused with several choices), an Anthropic ``Message`` as its
``role`` and ``content``, a Responses ``Response`` as its ``output`` items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from hermes_core.errors import InvalidArgument, NotAMessage

__all__ = [
    "MAX_DEPTH",
    "as_message_list",
    "has_objects",
    "is_sdk_object",
    "plain",
    "plain_object",
    "plain_payload",
]

#: how deep :func:`plain` looks for objects (as ``validation.MAX_NESTING``: deeper values are
#: refused by the checks anyway, and the walk stays far from the recursion limit)
MAX_DEPTH: Final = 64
_LEAVES: Final = (str, int, float, bool, type(None))
_LEAF_TYPES: Final = frozenset(_LEAVES)


def is_sdk_object(value: object) -> bool:
    """Whether ``value`` looks like an SDK model: a callable ``model_dump`` or ``to_dict``
    (a class itself, a mapping or a plain value is not one)."""
    if isinstance(value, (*_LEAVES, Mapping, list, tuple, type)):
        return False
    return callable(getattr(value, "model_dump", None)) or callable(getattr(value, "to_dict", None))


def plain_object(value: Any, what: str = "the object", depth: int = 0) -> dict[str, Any]:
    """The wire dict of an SDK object (objects nested in it made plain too);
    :class:`InvalidArgument` when it dumps to something that is not a mapping, or fails."""
    dump = getattr(value, "model_dump", None)
    kind = type(value).__name__
    try:
        data = _dumped(value, dump)
    except RecursionError as exc:
        raise InvalidArgument(f"{what}: {kind} nests itself; pass a dict") from exc
    except Exception as exc:  # a dump of its own that fails: say whose, never a bare trace
        raise InvalidArgument(
            f"{what}: {kind}'s {'model_dump' if callable(dump) else 'to_dict'}() failed "
            f"({type(exc).__name__}: {exc}); pass a dict"
        ) from exc
    if not isinstance(data, Mapping):
        kind = type(value).__name__
        raise InvalidArgument(
            f"{what}: {kind}'s {'model_dump' if callable(dump) else 'to_dict'}() gave "
            f"{type(data).__name__}, not a mapping; pass a dict"
        )
    out = plain(data, depth + 1)
    return out if isinstance(out, dict) else dict(out)


def _dumped(value: Any, dump: Any) -> Any:
    if not callable(dump):
        return value.to_dict()
    exclude = getattr(value, "__api_exclude__", None)
    options: dict[str, Any] = {"mode": "json", "exclude_unset": True, "by_alias": True}
    if exclude:
        options["exclude"] = exclude
    try:
        return dump(**options)
    except TypeError:  # a model_dump of its own, without pydantic's options
        return dump()


def has_objects(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` holds anything but dicts, lists and JSON leaves (exact types: the
    fast test every message of a host's list goes through on each call)."""
    kind = type(value)
    if kind is dict:
        children: Any = value.values()
    elif kind is list or kind is tuple:
        children = value
    else:
        return kind not in _LEAF_TYPES
    if depth > MAX_DEPTH:
        return False  # left for the nesting checks to refuse
    for child in children:  # a loop, not any(): this runs on every message of every call
        if type(child) not in _LEAF_TYPES and has_objects(child, depth + 1):
            return True
    return False


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` with every SDK object in it (at any depth up to :data:`MAX_DEPTH`) replaced
    by its wire dict. The same object when there was none, so a host's own dicts keep their
    identity (the format adapters give kept messages back as the host's objects)."""
    if not has_objects(value):
        return value
    if depth > MAX_DEPTH:  # objects that dump into objects, on and on
        raise InvalidArgument(
            f"an object nested more than {MAX_DEPTH} levels deep; pass plain dicts"
        )
    if isinstance(value, dict):
        return {key: plain(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item, depth + 1) for item in value]
    if is_sdk_object(value):
        return plain_object(value, depth=depth)
    return value


def as_message_list(messages: Any, *, lenient: bool = False) -> Any:
    """A list of messages or input items with each SDK object as its wire dict (whole
    responses as their message or items, see the module docstring), mappings with objects
    nested in them made plain. The same list when nothing changed; anything that is not a
    sequence comes back as it is, and so does an item that is neither a mapping nor an
    SDK object: the caller's own checks name them. An object that cannot be read is a
    :class:`NotAMessage`, or (``lenient``, for the checks that report instead of raising)
    left as it is."""
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        return messages
    given = messages if isinstance(messages, (list, tuple)) else list(messages)
    out: list[Any] | None = None
    for index, item in enumerate(given):
        new: list[Any] = [item]
        if has_objects(item):
            try:
                new = _read(item, index)
            except InvalidArgument as exc:  # lenient: left for the checks to report
                if not lenient:
                    raise NotAMessage(str(exc), [str(exc)]) from None
            except Exception:  # a model_dump that fails in its own way
                if not lenient:
                    raise
        if out is None and (len(new) != 1 or new[0] is not item):
            out = list(given[:index])
        if out is not None:
            out.extend(new)
    return messages if out is None else out


def _read(item: Any, index: int) -> list[Any]:
    """One item of a host's list as the message(s) it stands for."""
    if isinstance(item, Mapping):
        return [plain(item)]
    if is_sdk_object(item):
        return _message_of(plain_object(item, f"message {index}"), index)
    return [item]


def _message_of(data: dict[str, Any], index: int) -> list[dict[str, Any]]:
    """A dumped object as the message(s) it stands for: itself, or a whole response's."""
    if data.get("object") == "chat.completion" and isinstance(data.get("choices"), list):
        choices = data["choices"]
        if len(choices) != 1 or not isinstance(choices[0], Mapping):
            raise InvalidArgument(
                f"message {index}: a ChatCompletion with {len(choices)} choices; pass the "
                "one you keep, response.choices[i].message"
            )
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise InvalidArgument(f"message {index}: the ChatCompletion's choice has no message")
        return [message]
    if data.get("object") == "response" and isinstance(data.get("output"), list):
        return [dict(item) if isinstance(item, Mapping) else item for item in data["output"]]
    if data.get("type") == "message" and "model" in data and "content" in data:
        return [{"role": data.get("role", "assistant"), "content": data["content"]}]
    return [data]


def plain_payload(payload: Any, *, lenient: bool = False) -> Any:
    """A request payload (a list of messages or items, or an object holding them under
    ``messages`` or ``input``) with its SDK objects read as dicts; the same object when it
    holds none. A Python object in its list that is neither a mapping nor an SDK object is a
    :class:`NotAMessage` (``lenient``: left for the format's checks to report, as they report
    a number or a string, which a JSON file can hold)."""
    if isinstance(payload, Mapping):
        read = {
            key: _items(value, lenient) if key in ("messages", "input") else plain(value)
            for key, value in payload.items()
        }
        return payload if all(read[key] is payload[key] for key in payload) else read
    return _items(payload, lenient)


def _items(value: Any, lenient: bool) -> Any:
    out = as_message_list(value, lenient=lenient)
    if not lenient and isinstance(out, (list, tuple)):
        for index, item in enumerate(out):
            if not isinstance(item, (Mapping, list, tuple, *_LEAVES)):
                problem = f"message {index}: expected a message dict, got {type(item).__name__}"
                raise NotAMessage(problem, [problem])
    return out
