"""Tests for hermes_core.transcript.files: every format, every error, atomic writes, real files."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from devices import dev_null_kept
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.errors import InvalidMessages, TranscriptError
from hermes_core.transcript.files import EXPECTED, read_transcript, write_transcript

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tests" / "data" / "transcripts" / "coding-50turns.json"

MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "héllo ✓ 你好"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "line\u2028sep"},
]


def write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8", newline="")
    else:
        path.write_bytes(data)
    return path


def read_error(source: Any, **kwargs: Any) -> str:
    with pytest.raises(TranscriptError) as info:
        read_transcript(source, **kwargs)
    message = str(info.value)
    assert "\n" not in message
    return message


def run_python(code: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", code],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )


# ---------------------------------------------------------------- formats


def test_json_list(tmp_path: Path) -> None:
    path = write(tmp_path, "t.json", json.dumps(MESSAGES, indent=2))
    assert read_transcript(path) == MESSAGES
    assert read_transcript(str(path)) == MESSAGES


def test_messages_object(tmp_path: Path) -> None:
    path = write(tmp_path, "t.json", json.dumps({"model": "x", "messages": MESSAGES}, indent=1))
    assert read_transcript(path) == MESSAGES


def test_json_lines_with_blank_lines_and_crlf(tmp_path: Path) -> None:
    lines = [json.dumps(m, ensure_ascii=False) for m in MESSAGES]
    text = "\n" + lines[0] + "\r\n\r\n" + "\n".join(lines[1:]) + "\n\n   \n"
    path = write(tmp_path, "t.jsonl", text)
    assert read_transcript(path) == MESSAGES


def test_json_lines_with_a_single_message(tmp_path: Path) -> None:
    path = write(tmp_path, "one.jsonl", json.dumps(MESSAGES[1]) + "\n")
    assert read_transcript(path) == [MESSAGES[1]]


def test_format_is_detected_from_content_not_extension(tmp_path: Path) -> None:
    path = write(tmp_path, "t.json", "\n".join(json.dumps(m) for m in MESSAGES))
    assert read_transcript(path) == MESSAGES


def test_sample_transcript() -> None:
    assert len(read_transcript(SAMPLE)) == len(json.loads(SAMPLE.read_text(encoding="utf-8")))


def test_empty_list_is_read_as_no_messages(tmp_path: Path) -> None:
    assert read_transcript(write(tmp_path, "t.json", " [ ] ")) == []


def test_utf8_bom_is_tolerated(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf" + json.dumps(MESSAGES, ensure_ascii=False).encode("utf-8")
    assert read_transcript(write(tmp_path, "bom.json", data)) == MESSAGES
    jsonl = b"\xef\xbb\xbf" + b"\n".join(json.dumps(m).encode() for m in MESSAGES)
    assert read_transcript(write(tmp_path, "bom.jsonl", jsonl)) == MESSAGES


def test_string_stream() -> None:
    assert read_transcript(io.StringIO(json.dumps(MESSAGES))) == MESSAGES
    assert read_transcript(io.StringIO("\ufeff" + json.dumps(MESSAGES))) == MESSAGES


def test_binary_stream_is_decoded() -> None:
    stream = io.BytesIO(json.dumps(MESSAGES).encode())
    assert read_transcript(stream) == MESSAGES  # type: ignore[arg-type]


def test_stdin_in_a_real_process() -> None:
    code = (
        "import json; from hermes_core.transcript.files import read_transcript; "
        "print(json.dumps(read_transcript('-')))"
    )
    stdin = b"\xef\xbb\xbf" + "\n".join(json.dumps(m) for m in MESSAGES).encode()
    done = run_python(code, stdin)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == MESSAGES


def test_stdin_errors_are_labelled() -> None:
    code = (
        "from hermes_core.transcript.files import read_transcript\n"
        "try:\n    read_transcript('-')\nexcept Exception as exc:\n    print(exc)"
    )
    data = b'[{"role": "user", "content": "\xff"}]'
    done = run_python(code, data)
    offset = data.index(b"\xff")
    assert done.stdout.decode().startswith(
        f"<stdin>: line 1: invalid UTF-8 at byte offset {offset}"
    )


# ---------------------------------------------------------------- errors


def test_errors_are_invalid_messages() -> None:
    assert issubclass(TranscriptError, InvalidMessages)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    assert read_error(path) == f"{path}: no such file; check the path"


def test_directory(tmp_path: Path) -> None:
    message = read_error(tmp_path)
    assert message.startswith(f"{tmp_path}: is a directory")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads anything")
def test_permission_denied(tmp_path: Path) -> None:
    path = write(tmp_path, "secret.json", json.dumps(MESSAGES))
    path.chmod(0)
    try:
        assert read_error(path) == f"{path}: permission denied; make the file readable"
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_invalid_utf8_names_line_and_byte_offset(tmp_path: Path) -> None:
    data = b'[\n{"role": "user",\n "content": "caf\xe9"}]'
    message = read_error(write(tmp_path, "latin1.json", data))
    offset = data.index(b"\xe9")
    assert message == (
        f"{tmp_path / 'latin1.json'}: line 3: invalid UTF-8 at byte offset {offset} (byte 0xe9); "
        "save the file as UTF-8"
    )


def test_invalid_utf8_offset_counts_the_bom(tmp_path: Path) -> None:
    message = read_error(write(tmp_path, "t.json", b"\xef\xbb\xbf[\xc3]"))
    assert "byte offset 4" in message


@pytest.mark.parametrize("text", ["", "   \n\t\n"])
def test_empty_input(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, "empty.json", text)
    assert read_error(path) == f"{path}: empty input. {EXPECTED}"


def test_syntax_error_in_json_list_names_line_and_column(tmp_path: Path) -> None:
    path = write(
        tmp_path, "transcript.json", '[\n  {"role": "user",\n    "content": "x"\n  {"a": 1}]'
    )
    assert read_error(path, name="transcript.json") == (
        "transcript.json: line 4, column 3: invalid JSON (Expecting ',' delimiter). " + EXPECTED
    )


def test_syntax_error_in_pretty_messages_object(tmp_path: Path) -> None:
    text = '{\n  "messages": [\n    {"role": "user", "content": "x"},\n    {"role": }\n  ]\n}'
    path = write(tmp_path, "t.json", text)
    message = read_error(path)
    assert message.startswith(f"{path}: line 4, column 14: invalid JSON (Expecting value)")


def test_syntax_error_on_a_json_lines_line(tmp_path: Path) -> None:
    text = '{"role": "user", "content": "a"}\n\n{"role": "assistant", "content": "b"\n'
    path = write(tmp_path, "t.jsonl", text)
    message = read_error(path)
    assert message.startswith(f"{path}: line 3, column 37: invalid JSON (Expecting ',' delimiter)")
    assert message.endswith("Expected one message object per line (JSON Lines).")


def test_syntax_error_on_first_json_lines_line(tmp_path: Path) -> None:
    text = '{"role": "user" "content": "a"}\n{"role": "user", "content": "b"}\n'
    message = read_error(write(tmp_path, "t.jsonl", text))
    assert ": line 1, column 17: invalid JSON (Expecting ',' delimiter)" in message


def test_json_lines_line_that_is_not_an_object(tmp_path: Path) -> None:
    text = '{"role": "user", "content": "a"}\n["not", "a", "message"]\n'
    path = write(tmp_path, "t.jsonl", text)
    assert read_error(path) == (
        f"{path}: line 2: expected a message object, got a list. "
        "Expected one message object per line (JSON Lines)."
    )


def test_object_without_messages(tmp_path: Path) -> None:
    path = write(tmp_path, "t.json", '{"model": "gpt", "msgs": []}')
    assert read_error(path) == (
        f'{path}: the top-level object has no "messages" key (keys: "model", "msgs"). {EXPECTED}'
    )


def test_messages_not_a_list(tmp_path: Path) -> None:
    path = write(tmp_path, "t.json", '{"messages": {"role": "user"}}')
    assert read_error(path) == f'{path}: "messages" must be a list, got an object. {EXPECTED}'


def test_list_item_not_an_object(tmp_path: Path) -> None:
    path = write(tmp_path, "t.json", '[{"role": "user", "content": "x"}, "hello"]')
    assert read_error(path) == f"{path}: message[1] is a string, not a message object. {EXPECTED}"
    path = write(tmp_path, "m.json", '{"messages": [null]}')
    assert read_error(path).startswith(f"{path}: messages[0] is null, not a message object.")


@pytest.mark.parametrize(
    ("text", "where"), [("42", "line 1, column 1"), ('\n  "x"', "line 2, column 3")]
)
def test_not_a_list_or_object(tmp_path: Path, text: str, where: str) -> None:
    path = write(tmp_path, "t.json", text)
    assert read_error(path).startswith(f"{path}: {where}: unexpected ")


def test_deeply_nested_json(tmp_path: Path) -> None:
    path = write(tmp_path, "deep.json", "[" * 200_000 + "]" * 200_000)
    assert "nested too deeply" in read_error(path)


def test_stream_errors_use_the_given_name() -> None:
    message = read_error(io.StringIO("[1, 2"), name="upload.json")
    assert message.startswith("upload.json: line 1, column 6: invalid JSON")
    assert read_error(io.StringIO("")).startswith("<stream>: empty input.")


# ---------------------------------------------------------------- writing


def test_write_round_trip_and_format(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    write_transcript(MESSAGES, path)
    text = path.read_text(encoding="utf-8")
    assert "héllo ✓ 你好" in text  # ensure_ascii=False
    assert text.endswith("]\n")
    assert read_transcript(path) == MESSAGES
    write_transcript(MESSAGES, str(path), indent=None)
    assert path.read_text(encoding="utf-8").count("\n") == 1
    assert read_transcript(path) == MESSAGES


def test_write_is_deterministic(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    write_transcript(MESSAGES, first)
    write_transcript([dict(m) for m in MESSAGES], second)
    assert first.read_bytes() == second.read_bytes()


def test_write_to_stream() -> None:
    stream = io.StringIO()
    write_transcript(MESSAGES, stream)
    assert json.loads(stream.getvalue()) == MESSAGES


def test_write_to_stdout_in_a_real_process() -> None:
    code = (
        "import json, sys; from hermes_core.transcript.files import write_transcript; "
        "write_transcript(json.load(sys.stdin), '-')"
    )
    done = run_python(code, json.dumps(MESSAGES).encode())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == MESSAGES


def test_failed_write_leaves_original_intact(tmp_path: Path) -> None:
    path = tmp_path / "keep.json"
    write_transcript(MESSAGES, path)
    original = path.read_bytes()
    broken = [*MESSAGES, {"role": "user", "content": object()}]
    with pytest.raises(TranscriptError) as info:
        write_transcript(broken, path)
    assert str(info.value).startswith(f"{path}: cannot write: message 4 is not JSON-serialisable")
    assert path.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.json"]


def test_nan_is_refused_rather_than_written_as_invalid_json(tmp_path: Path) -> None:
    path = tmp_path / "nan.json"
    with pytest.raises(TranscriptError, match="message 0 is not JSON-serialisable"):
        write_transcript([{"role": "user", "content": "x", "score": float("nan")}], path)
    assert not path.exists()


def test_lone_surrogates_are_written_as_valid_json(tmp_path: Path) -> None:
    messages = json.loads('[{"role": "user", "content": "bad \\ud800 half"}]')
    path = tmp_path / "s.json"
    write_transcript(messages, path)
    assert read_transcript(path) == messages


def test_write_keeps_the_mode_of_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "mode.json"
    path.write_text("[]", encoding="utf-8")
    path.chmod(0o640)
    write_transcript(MESSAGES, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_write_into_missing_directory(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "out.json"
    with pytest.raises(TranscriptError) as info:
        write_transcript(MESSAGES, path)
    assert str(info.value).startswith(f"{path}: cannot write (")


def test_write_over_a_directory_cleans_up(tmp_path: Path) -> None:
    target = tmp_path / "dir"
    target.mkdir()
    with pytest.raises(TranscriptError, match="cannot write"):
        write_transcript(MESSAGES, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir"]


JSON_VALUE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=50, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.dictionaries(st.text(max_size=5), JSON_VALUE, max_size=4), max_size=4))
def test_write_read_round_trip_property(tmp_path: Path, messages: list[dict[str, Any]]) -> None:
    path = tmp_path / "rt.json"
    write_transcript(messages, path)
    assert read_transcript(path) == messages


# --- writing never replaces what is not a regular file (issue 11 §4.4) -------------------------


def _refused(dest: Path | str, what: str) -> None:
    with pytest.raises(TranscriptError) as info:
        write_transcript(MESSAGES, dest)
    message = str(info.value)
    assert "\n" not in message and what in message and "nothing was written" in message


def _listing(directory: Path) -> dict[str, tuple[int, int]]:
    """Name -> (inode, mode) of every entry, links not followed: "nothing changed" means equal."""
    return {p.name: (p.lstat().st_ino, p.lstat().st_mode) for p in directory.iterdir()}


def test_a_fifo_is_refused_and_stays_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    before = _listing(tmp_path)
    _refused(fifo, "is a FIFO (named pipe), not a regular file")
    assert _listing(tmp_path) == before and stat.S_ISFIFO(fifo.lstat().st_mode)


def test_dev_null_is_refused_and_left_alone() -> None:
    with dev_null_kept() as before:
        assert stat.S_ISCHR(before.st_mode)
        _refused(os.devnull, "is a character device")
    assert not [name for name in os.listdir("/dev") if name.startswith(".null.")]  # no temp


def test_a_socket_is_refused(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        _refused(path, "is a socket")
    assert stat.S_ISSOCK(path.lstat().st_mode)


def test_a_symlink_to_a_file_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real.name)  # relative, as ln -s usually makes them
    write_transcript(MESSAGES, link)
    assert link.is_symlink() and os.readlink(link) == real.name  # the link stays
    assert json.loads(real.read_text()) == MESSAGES  # its target was replaced
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]


def test_a_chain_of_symlinks_is_written_through_to_its_end(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    real = tmp_path / "sub" / "real.json"
    real.write_text("old")
    (tmp_path / "one").symlink_to(real)
    (tmp_path / "two").symlink_to(tmp_path / "one")
    write_transcript(MESSAGES, tmp_path / "two")
    assert json.loads(real.read_text()) == MESSAGES
    assert (tmp_path / "one").is_symlink() and (tmp_path / "two").is_symlink()
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["real.json"]


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda d: os.mkfifo(d / "target"), "symbolic link to a FIFO (named pipe)"),
        (lambda d: (d / "target").mkdir(), "symbolic link to a directory"),
        (lambda d: None, "symbolic link to a missing file"),
    ],
    ids=["to a fifo", "to a directory", "dangling"],
)
def test_a_symlink_to_anything_else_is_refused(tmp_path: Path, make: Any, what: str) -> None:
    make(tmp_path)
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "target")
    before = _listing(tmp_path)
    _refused(link, what)
    assert _listing(tmp_path) == before
    assert not (tmp_path / "target").exists() or not (tmp_path / "target").is_file()


def test_a_symlink_to_dev_null_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "out.json"
    link.symlink_to(os.devnull)
    with dev_null_kept():
        _refused(link, "symbolic link to a character device")
    assert link.is_symlink()


def test_a_symlink_loop_is_refused(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    _refused(loop, "symbolic link that cannot be followed")
    assert loop.is_symlink()


def test_check_output_path_is_the_same_check(tmp_path: Path) -> None:
    from hermes_core.transcript.files import check_output_path

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(TranscriptError, match="FIFO"):
        check_output_path(fifo)
    for fine in (tmp_path / "new.json", "-"):
        check_output_path(fine)
    (tmp_path / "file.json").write_text("x")
    check_output_path(tmp_path / "file.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.json", "pipe"]


# --- deep nesting is a clean error when reading (issue 11 §4.5) -------------------------------


@pytest.mark.parametrize("depth", [5_000, 200_000])
def test_deep_message_fields_are_a_one_line_error(tmp_path: Path, depth: int) -> None:
    deep = '{"a":' * depth + "1" + "}" * depth
    for name, text in {
        "list.json": f'[{{"role": "user", "content": "x", "meta": {deep}}}]',
        "lines.jsonl": f'{{"role": "user", "content": "x"}}\n{{"role": "user", "x": {deep}}}\n',
    }.items():
        message = read_error(write(tmp_path, name, text))
        assert "nested too deeply" in message and "\n" not in message
