"""Type checks at the boundary of the compression API (``compress``, ``Compressor``).

Why: a wrong type passed from Python (``context_length="32000"``, ``messages="x"``,
``update_from_usage(None)``) used to surface deep inside as a bare ``TypeError`` or
``AttributeError`` about ``'<='`` or ``.get``; here it becomes a
:class:`~hermes_core.errors.HermesError` that says what was expected and what was given.
Values (a negative window, an unknown summariser name) are still judged where they are used.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from hermes_core.errors import InvalidArgument, NotAMessage
from hermes_core.tokens.reported import prompt_usage
from hermes_core.transcript.objects import as_message_list, is_sdk_object

__all__ = [
    "check_compressor_arguments",
    "check_flag",
    "check_messages",
    "check_usage",
    "check_whole",
    "checked_methods",
]

_C = TypeVar("_C", bound=type)

_MESSAGES = "a list of message dicts (OpenAI chat format)"


def check_whole(name: str, value: object, *, optional: bool = False) -> None:
    """``value`` must be an int (a bool is not one); ``optional``: None is allowed."""
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument.of(name, "an int" + (" or None" if optional else ""), value)


def check_compressor_arguments(
    *,
    config: object,
    context_length: object,
    max_tokens: object,
    summarizer: object,
    model: object = None,
) -> None:
    """The arguments ``compress`` and ``Compressor`` share."""
    from hermes_core.config.settings import Settings

    check_whole("context_length", context_length)
    check_whole("max_tokens", max_tokens)
    if config is not None and not isinstance(config, (Settings, Mapping)):
        raise InvalidArgument.of("config", "a Settings, a mapping of settings or None", config)
    if summarizer is not None and not isinstance(summarizer, str) and not callable(summarizer):
        raise InvalidArgument.of(
            "summarizer", "'auto', 'llm', 'fallback', a function or None", summarizer
        )
    if model is not None and not isinstance(model, str):
        raise InvalidArgument.of("model", "a model name (str) or None", model)


def check_messages(messages: object, name: str = "messages") -> None:
    """``messages`` must be a list (or tuple) of mappings or SDK objects: the list itself of
    the wrong type is an :class:`InvalidArgument`; an item that is neither makes it an
    invalid transcript (:class:`NotAMessage`, naming the item and what to pass)."""
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        one = isinstance(messages, Mapping) or is_sdk_object(messages)
        hint = " (wrap one message in a list)" if one else ""
        raise InvalidArgument.of(name, _MESSAGES + hint, messages)
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) and not is_sdk_object(message):
            problem = f"{name}[{index}]: expected a message dict, got {type(message).__name__}"
            raise NotAMessage(f"invalid transcript: {problem}", [problem])


def check_usage(usage: object, messages: object) -> None:
    """``update_from_usage``'s arguments: a usage record (a mapping or the SDK's object, in
    any API's shape: tokens/reported.py), and the messages that were sent (or None)."""
    prompt_usage(usage)
    if messages is not None:
        check_messages(messages)


def check_flag(name: str, value: Any) -> None:
    """``value`` must be True or False (``force="no"`` would be true)."""
    if not isinstance(value, bool):
        raise InvalidArgument.of(name, "True or False", value)


def checked_methods(cls: _C) -> _C:
    """The :class:`~hermes_core.compression.engine.Compressor` with the rest of its public
    surface checked at the boundary too: ``set_model(5)``, ``set_model("m",
    context_length="5")``, ``note_overflow(None)``, ``should_compress("5")``, ``count(None)``
    and ``Compressor(clock=5)`` raise :class:`InvalidArgument` saying what was expected,
    instead of an ``AttributeError`` or ``TypeError`` from deep inside, later; ``compress``,
    ``observe``, ``count`` and ``update_from_usage`` read SDK objects as their dicts
    (transcript/objects.py). (A decorator, not overrides: the methods are the trigger's, and
    the engine stays a list of phases.)"""
    for name, wrap in (
        ("__init__", _init),
        ("set_model", _set_model),
        ("note_overflow", _note_overflow),
        ("should_compress", _should_compress),
        ("count", _count),
        ("observe", _observe),
        ("compress", _compress),
        ("update_from_usage", _update_from_usage),
    ):
        method = getattr(cls, name)
        setattr(cls, name, functools.wraps(method)(wrap(method)))
    return cls


def _init(method: Callable[..., None]) -> Callable[..., None]:
    """The keyword-only parts ``check_compressor_arguments`` leaves: what is called later."""

    def __init__(self: object, *args: Any, **kwargs: Any) -> None:
        from hermes_core.compression.hooks import CompressionHooks

        for name in ("clock", "wall_clock"):
            if name in kwargs and not callable(kwargs[name]):
                raise InvalidArgument.of(name, "a function returning seconds", kwargs[name])
        on_event = kwargs.get("on_event")
        if on_event is not None and not callable(on_event):
            raise InvalidArgument.of("on_event", "a function taking an event, or None", on_event)
        hooks = kwargs.get("hooks")
        if hooks is not None and not isinstance(hooks, CompressionHooks):
            raise InvalidArgument.of("hooks", "a CompressionHooks or None", hooks)
        method(self, *args, **kwargs)

    return __init__


def _set_model(method: Callable[..., None]) -> Callable[..., None]:
    def set_model(
        self: object, name: str, *, context_length: int | None = None, max_tokens: int | None = None
    ) -> None:
        if not isinstance(name, str):
            expected = "a model name (a str; '' keeps the configured one)"
            raise InvalidArgument.of("name", expected, name)
        check_whole("context_length", context_length, optional=True)
        check_whole("max_tokens", max_tokens, optional=True)
        method(self, name, context_length=context_length, max_tokens=max_tokens)

    return set_model


def _note_overflow(method: Callable[..., int | None]) -> Callable[..., int | None]:
    def note_overflow(self: object, message: str) -> int | None:
        if not isinstance(message, str):
            expected = "the provider's error text (a str, e.g. str(exc))"
            raise InvalidArgument.of("message", expected, message)
        return method(self, message)

    return note_overflow


def _should_compress(method: Callable[..., Any]) -> Callable[..., Any]:
    def should_compress(self: object, prompt_tokens: int | None = None) -> Any:
        check_whole("prompt_tokens", prompt_tokens, optional=True)
        return method(self, prompt_tokens)

    return should_compress


def _count(method: Callable[..., int]) -> Callable[..., int]:
    def count(self: object, messages: Sequence[Any]) -> int:
        check_messages(messages)
        return method(self, as_message_list(messages))

    return count


def _observe(method: Callable[..., int]) -> Callable[..., int]:
    def observe(self: object, messages: Sequence[Any]) -> int:
        check_messages(messages)
        return method(self, as_message_list(messages))

    return observe


def _compress(method: Callable[..., Any]) -> Callable[..., Any]:
    """SDK objects (``ChatCompletionMessage``...) are read as their dicts, once, here."""

    def compress(self: object, messages: Sequence[Any], **options: Any) -> Any:
        check_messages(messages)
        return method(self, as_message_list(messages), **options)

    return compress


def _update_from_usage(method: Callable[..., None]) -> Callable[..., None]:
    """Any API's usage record (a mapping or the SDK's object) as the ``prompt_tokens`` the
    trigger reads; :class:`InvalidArgument` for a bad one, before anything changes."""

    def update_from_usage(self: object, usage: object, messages: object = None) -> None:
        reported = prompt_usage(usage)
        if messages is not None:
            check_messages(messages)
            messages = as_message_list(messages)
        prompt = {} if reported is None else {"prompt_tokens": reported.tokens}
        method(self, prompt, messages)

    return update_from_usage
