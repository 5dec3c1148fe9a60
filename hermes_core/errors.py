"""The exception family: every error a user can meet says what is wrong and what to do."""

from __future__ import annotations


class HermesError(Exception):
    """Base of every error hermes-context raises on purpose."""


class InvalidArgument(HermesError, TypeError):
    """A public function was given an argument of the wrong type (``context_length="32000"``);
    the message names the argument, what it expects and what it got. A ``TypeError`` too, so
    code that catches that keeps working."""

    @classmethod
    def of(cls, name: str, expected: str, given: object) -> InvalidArgument:
        import reprlib

        shown = "None" if given is None else f"{type(given).__name__} {reprlib.repr(given)}"
        return cls(f"{name} must be {expected}, got {shown}")


class ConfigError(HermesError):
    """The configuration is invalid: unknown key, wrong type, conflicting plugins."""


class PluginLoadError(HermesError):
    """A plugin could not be imported, built or registered."""


class MissingExtraError(PluginLoadError):
    """A plugin needs an optional dependency that is not installed."""

    def __init__(self, message: str, *, install_hint: str) -> None:
        super().__init__(message)
        self.install_hint = install_hint


class ProviderError(HermesError):
    """An external memory provider failed in a way the caller should see."""


class InvalidMessages(HermesError):
    """A transcript is malformed; `problems` lists each problem, one per line."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = list(problems or [])


class NotAMessage(InvalidMessages, InvalidArgument):
    """An item of a message list is neither a mapping nor an SDK object (``.model_dump()``).
    Both an invalid transcript (``problems``) and a wrong argument type, so code catching
    either (or ``TypeError``) keeps working; the message says what to pass instead."""

    HINT = (
        "pass message dicts, or the SDK's own objects as they are (anything with "
        ".model_dump(), e.g. response.choices[0].message)"
    )

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(f"{message}; {self.HINT}", problems)


class TranscriptError(InvalidMessages):
    """A transcript file or stream could not be read or parsed."""


class TokenizerError(HermesError):
    """The requested tokenizer data is missing or does not match its checksum."""


class MemoryStoreError(HermesError):
    """A memory file cannot be read, decoded or locked; nothing was changed."""


class SessionError(HermesError):
    """The session store refused or failed an operation; nothing was changed.

    Raised when a session id belongs to another user, when the store cannot be opened
    (unreadable file, a schema from a newer version) or stays locked past its retries.
    """


class StaleSessionError(SessionError):
    """Another process changed the session since this one last read it; nothing was changed.

    A :class:`~hermes_core.host.Session` catches it, reloads the session from the store and
    tries again, so two host processes serving one conversation never store a message twice.
    """
