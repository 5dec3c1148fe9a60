"""Reading and writing transcript files and streams.

A transcript is a JSON list of messages, an object ``{"messages": [...]}``, or JSON Lines (one
message object a line). The format is told from the content, not the file name, so pipes work.
Every failure is a one-line `TranscriptError` naming the file, the place and what was expected.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from typing import IO, Any, Final

from hermes_core.errors import InvalidArgument, TranscriptError
from hermes_core.transcript.output import check_output_path, output_target, replace_file
from hermes_core.transcript.validation import kind_of

__all__ = [
    "check_output_path",
    "read_payload",
    "read_transcript",
    "transcript_messages",
    "write_payload",
    "write_transcript",
]

EXPECTED = 'Expected a JSON list of messages, {"messages": [...]}, or JSON Lines.'
_EXPECTED_LINE = "Expected one message object per line (JSON Lines)."
#: What ``json.dumps(..., ensure_ascii=False)`` leaves raw that a terminal acts on (DEL, the
#: C1 controls, bidi overrides, isolates and marks, line separators): a stream may be one, so
#: these go to it as ``\u`` escapes (they occur only inside strings: the data is the same).
_TERMINAL_ACTIVE: Final = re.compile(
    "[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069]"
)


def read_transcript(
    source: str | os.PathLike[str] | IO[str], *, name: str | None = None
) -> list[dict[str, Any]]:
    """Read a transcript from a path, ``"-"`` (stdin) or an open stream.

    ``name`` labels the source in error messages (default: the path, or the stream's name).
    The messages are returned as parsed; use `validate_messages` to check them.
    """
    text, label = _read_source(source, name)
    return transcript_messages(_parse(text, label), label)


def read_payload(
    source: str | os.PathLike[str] | IO[str], *, name: str | None = None
) -> list[Any] | dict[str, Any]:
    """The parsed JSON of a transcript in any message format, its shape left to the caller.

    A JSON list or JSON Lines gives a list; a top-level object is returned as it is (an
    Anthropic request with its ``system``, a Responses ``{"input": [...]}``), except one
    lone message object, which is a list of one, as in `read_transcript`. Reading, UTF-8
    and JSON syntax fail as they do there."""
    text, label = _read_source(source, name)
    return _parse(text, label)


def _stream_label(stream: object, default: str) -> str:
    label = getattr(stream, "name", None)
    return label if isinstance(label, str) else default


def _read_source(source: str | os.PathLike[str] | IO[str], name: str | None) -> tuple[str, str]:
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if path != "-":
            label = name or path
            return _decode(_read_file(path, label), label), label
        if sys.stdin is None:
            raise TranscriptError(f"{name or '<stdin>'}: there is no standard input to read")
        stream: IO[Any] = getattr(sys.stdin, "buffer", sys.stdin)
        label = name or "<stdin>"
    elif callable(getattr(source, "read", None)):
        stream = source
        label = name or _stream_label(source, "<stream>")
    else:
        raise InvalidArgument.of("source", "a path, '-' (standard input) or an open stream", source)
    try:
        data = stream.read()
    except UnicodeDecodeError as exc:
        raise TranscriptError(f"{label}: not valid UTF-8 ({exc.reason}); send UTF-8 text") from exc
    except OSError as exc:
        raise TranscriptError(f"{label}: cannot read ({exc.strerror or exc})") from exc
    return _decode(data, label), label


def _read_file(path: str, label: str) -> bytes:
    is_dir = f"{label}: is a directory, not a transcript file; pass a .json or .jsonl file"
    if os.path.isdir(path):
        raise TranscriptError(is_dir)
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError as exc:
        raise TranscriptError(f"{label}: no such file; check the path") from exc
    except IsADirectoryError as exc:
        raise TranscriptError(is_dir) from exc
    except PermissionError as exc:
        raise TranscriptError(f"{label}: permission denied; make the file readable") from exc
    except OSError as exc:
        raise TranscriptError(f"{label}: cannot read ({exc.strerror or exc})") from exc


def _decode(data: str | bytes, label: str) -> str:
    """Decode strict UTF-8 after dropping a BOM; a bad byte is reported by its file offset."""
    if isinstance(data, str):
        return data.removeprefix("\ufeff")
    skipped = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[skipped:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + skipped
        line = data.count(b"\n", 0, offset) + 1
        raise TranscriptError(
            f"{label}: line {line}: invalid UTF-8 at byte offset {offset} "
            f"(byte 0x{data[offset]:02x}); save the file as UTF-8"
        ) from None


def _position(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of a character index."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _syntax_error(label: str, exc: json.JSONDecodeError) -> TranscriptError:
    return TranscriptError(
        f"{label}: line {exc.lineno}, column {exc.colno}: invalid JSON ({exc.msg}). {EXPECTED}"
    )


def _too_deep(label: str) -> TranscriptError:
    return TranscriptError(f"{label}: JSON nested too deeply to read. {EXPECTED}")


def _parse(text: str, label: str) -> list[Any] | dict[str, Any]:
    stripped = text.lstrip()
    if not stripped:
        raise TranscriptError(f"{label}: empty input. {EXPECTED}")
    first = stripped[0]
    if first not in "[{":
        line, column = _position(text, len(text) - len(stripped))
        raise TranscriptError(
            f"{label}: line {line}, column {column}: unexpected {json.dumps(first)} "
            f"at the start. {EXPECTED}"
        )
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if first == "{" and (exc.msg == "Extra data" or _first_line_is_object(text)):
            return _parse_lines(text, label)
        raise _syntax_error(label, exc) from None
    except RecursionError:
        raise _too_deep(label) from None
    if isinstance(value, dict) and "role" in value and not {"messages", "input"} & set(value):
        return [value]  # JSON Lines with a single message
    return value  # type: ignore[no-any-return]


def transcript_messages(value: Any, label: str) -> list[dict[str, Any]]:
    """The OpenAI message list of a parsed transcript (`read_payload`): a list of message
    objects, or the ``"messages"`` of an object; else a `TranscriptError` naming what is
    wrong and where."""
    if isinstance(value, list):
        return _message_list(value, label, "message")
    if not isinstance(value, dict):
        raise TranscriptError(f"{label}: got {kind_of(value)}. {EXPECTED}")
    if "messages" in value:
        messages = value["messages"]
        if not isinstance(messages, list):
            raise TranscriptError(
                f'{label}: "messages" must be a list, got {kind_of(messages)}. {EXPECTED}'
            )
        return _message_list(messages, label, "messages")
    keys = ", ".join(json.dumps(key) for key in list(value)[:5]) or "none"
    raise TranscriptError(
        f'{label}: the top-level object has no "messages" key (keys: {keys}). {EXPECTED}'
    )


def _message_list(items: list[Any], label: str, where: str) -> list[dict[str, Any]]:
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise TranscriptError(
                f"{label}: {where}[{index}] is {kind_of(item)}, not a message object. {EXPECTED}"
            )
    return items


def _first_line_is_object(text: str) -> bool:
    """True when the first non-blank line alone is a JSON object: the text is JSON Lines."""
    for line in text.split("\n"):
        if line.strip():
            try:
                return isinstance(json.loads(line), dict)
            except (ValueError, RecursionError):
                return False
    return False


def _parse_lines(text: str, label: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TranscriptError(
                f"{label}: line {number}, column {exc.colno}: invalid JSON ({exc.msg}). "
                f"{_EXPECTED_LINE}"
            ) from None
        except RecursionError:
            raise _too_deep(label) from None
        if not isinstance(value, dict):
            raise TranscriptError(
                f"{label}: line {number}: expected a message object, got {kind_of(value)}. "
                f"{_EXPECTED_LINE}"
            )
        messages.append(value)
    return messages


def write_transcript(
    messages: Sequence[Mapping[str, Any]],
    dest: str | os.PathLike[str] | IO[str],
    *,
    indent: int | None = 2,
) -> None:
    """Write messages as a JSON list (UTF-8, key order kept, so the output is deterministic).

    A path is replaced atomically: the whole text is built first, written to a temporary file
    in the same directory and renamed over the target, so a failure leaves the old file intact.
    Only a regular file (new or existing) is replaced; a symbolic link to one is written
    through (the link stays, its target is replaced). Anything else (a device such as
    ``/dev/null``, a FIFO, a socket, a directory, a link to one of those or to nothing) is
    refused with a `TranscriptError` before anything is written: see `check_output_path`.
    ``"-"`` writes to stdout. Keys are written as given: call `to_wire` first for API output.
    """
    write_payload(list(messages), dest, indent=indent)


def write_payload(
    payload: list[Any] | Mapping[str, Any],
    dest: str | os.PathLike[str] | IO[str],
    *,
    indent: int | None = 2,
) -> None:
    """Write a transcript in any message format (a list, or a request object such as
    ``{"system": ..., "messages": [...]}``) exactly as `write_transcript` writes a list:
    atomically, only over a regular file, ``"-"`` for stdout. On a stream (which may be a
    terminal) the characters a terminal acts on are written as ``\\u`` escapes."""
    if isinstance(dest, (str, os.PathLike)):
        path = os.fspath(dest)
        label = "<stdout>" if path == "-" else path
    else:
        path, label = None, _stream_label(dest, "<stream>")
    if path is not None and path != "-":
        target = output_target(path, label)
        replace_file(target, _serialise(payload, label, indent).encode("utf-8"), label)
        return
    text = _TERMINAL_ACTIVE.sub(_code, _serialise(payload, label, indent))
    stream = sys.stdout if path == "-" else dest
    try:
        stream.write(text)  # type: ignore[union-attr]
        stream.flush()  # type: ignore[union-attr]
    except OSError as exc:
        raise TranscriptError(f"{label}: cannot write ({exc.strerror or exc})") from exc


def _code(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _serialise(payload: list[Any] | Mapping[str, Any], label: str, indent: int | None) -> str:
    value = payload if isinstance(payload, list) else dict(payload)
    try:
        text = json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise TranscriptError(
            f"{label}: cannot write: {_first_unserialisable(value)} is not "
            f"JSON-serialisable ({exc}); nothing was written"
        ) from exc
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: only \u escapes keep them valid JSON
        text = json.dumps(value, ensure_ascii=True, indent=indent, allow_nan=False)
    return text + "\n"


def _first_unserialisable(value: list[Any] | dict[str, Any]) -> str:
    """Where the first value JSON cannot hold sits: ``message 3``, or ``"messages" item 3``
    of a request object."""
    if isinstance(value, dict):
        for key, part in value.items():
            if not _serialisable(part):
                inner = _first_unserialisable(part) if isinstance(part, list) else ""
                return f"{json.dumps(key)} {inner.replace('message', 'item')}".strip()
        return "a value"
    index = next((i for i, item in enumerate(value) if not _serialisable(item)), -1)
    return f"message {index}"


def _serialisable(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return False
    return True
