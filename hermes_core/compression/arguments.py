"""Type checks at the boundary of the compression API (``compress``, ``Compressor``).

Why: a wrong type passed from Python (``context_length="32000"``, ``messages="x"``,
``update_from_usage(None)``) used to surface deep inside as a bare ``TypeError`` or
``AttributeError`` about ``'<='`` or ``.get``; here it becomes a
:class:`~hermes_core.errors.HermesError` that says what was expected and what was given.
Values (a negative window, an unknown summariser name) are still judged where they are used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.errors import InvalidArgument, InvalidMessages

__all__ = [
    "check_compressor_arguments",
    "check_flag",
    "check_messages",
    "check_usage",
    "check_whole",
]

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
    """``messages`` must be a list (or tuple) of mappings: the list itself of the wrong type
    is an :class:`InvalidArgument`; an item that is not a mapping makes it an invalid
    transcript (:class:`InvalidMessages`, naming the item)."""
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        hint = " (wrap one message in a list)" if isinstance(messages, Mapping) else ""
        raise InvalidArgument.of(name, _MESSAGES + hint, messages)
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            problem = f"{name}[{index}]: expected a message dict, got {type(message).__name__}"
            raise InvalidMessages(f"invalid transcript: {problem}", [problem])


def check_usage(usage: object, messages: object) -> None:
    """``update_from_usage``'s arguments: the API's ``usage`` mapping, and the messages
    that were sent (or None)."""
    if not isinstance(usage, Mapping):
        raise InvalidArgument.of(
            "usage",
            "the API response's usage as a mapping ({'prompt_tokens': ...}; an SDK object: "
            "pass usage.model_dump())",
            usage,
        )
    if messages is not None:
        check_messages(messages)


def check_flag(name: str, value: Any) -> None:
    """``value`` must be True or False (``force="no"`` would be true)."""
    if not isinstance(value, bool):
        raise InvalidArgument.of(name, "True or False", value)
