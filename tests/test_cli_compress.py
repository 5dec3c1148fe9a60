"""``hermes-context compress``: outputs, report, formats, exit codes, and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from devices import dev_null_kept

from hermes_core.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "coding-session.json"
REPORT_KEYS = {
    "status",
    "reason",
    "messages_before",
    "messages_after",
    "tokens_before",
    "tokens_after",
    "threshold_tokens",
    "summarizer",
    "duration_ms",
    "passes",
    "token_counter",
    "format",  # the transcript's message format (openai, anthropic, responses)
}


pytestmark = pytest.mark.usefixtures("isolated_home")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_compress_to_file_with_report_on_stderr(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "out.json"
    code, stdout, stderr = run(
        capsys,
        "compress",
        str(EXAMPLE),
        "--context-length",
        "32000",
        "--force",
        "--out",
        str(out),
    )
    assert code == 0 and stdout == ""
    assert stderr.startswith("compressed: 129 -> ")
    assert "summary of the middle: the deterministic fallback (no LLM)" in stderr
    assert "threshold: window 32,000 tokens;" in stderr and "trigger at 24,000 tokens" in stderr
    messages = json.loads(out.read_text())
    assert sum(1 for m in messages if m.get("_compressed_summary")) == 1
    assert main(["validate", str(out)]) == 0


def test_report_names_defaults_and_says_what_each_count_counts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """No file set the threshold: the report says it is the default; pruning counts are
    labelled as such, so "37" beside "no summary" is not read as 37 summaries (the policy of
    before issue 25, the 20% tail at the threshold's pace: with it pruning alone bills less
    than a summary here)."""
    wide = tmp_path / "wide.yaml"
    wide.write_text("compression:\n  tail_max_tokens: 0\n  schedule: threshold\n")
    out = str(tmp_path / "o.json")
    code, _out, err = run(capsys, "--config", str(wide), "compress", str(EXAMPLE), "--out", out)
    assert code == 0 and err.startswith("pruned: ")
    assert "threshold 0.50 (the default)" in err and "from config" not in err
    assert "summary of the middle: none (no summary was written)" in err
    assert (
        "pruning (no LLM): duplicate results replaced 11, old tool results cut to one line 37"
        in err
    )
    config = tmp_path / "config.yaml"
    config.write_text("compression:\n  threshold: 0.6\n")
    code, _out, err = run(
        capsys, "--config", str(config), "compress", str(EXAMPLE), "--out", str(tmp_path / "p.json")
    )
    assert code == 0 and "threshold 0.60 from config" in err


def test_json_report_needs_out(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _out, err = run(capsys, "compress", str(EXAMPLE), "--json")
    assert code == 2 and "--out" in err
    out = tmp_path / "o.json"
    code, stdout, _err = run(
        capsys,
        "compress",
        str(EXAMPLE),
        "--json",
        "--out",
        str(out),
        "--context-length",
        "32000",
    )
    report = json.loads(stdout)
    assert code == 0 and set(report) == REPORT_KEYS
    assert report["status"] in ("pruned", "compressed")
    assert report["token_counter"] == "tiktoken:o200k_base"
    assert report["tokens_after"] < report["threshold_tokens"] == 24_000


def test_messages_to_stdout_and_same_bytes_twice(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("compress", str(EXAMPLE), "--context-length", "32000", "--force")
    code, first, _ = run(capsys, *args)
    code2, second, _ = run(capsys, *args)
    assert code == code2 == 0 and first == second
    assert isinstance(json.loads(first), list)


def test_unchanged_when_under_the_threshold(capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, stderr = run(capsys, "compress", str(EXAMPLE), "--context-length", "1000000")
    assert code == 0 and stderr.startswith("unchanged:")
    assert json.loads(stdout) == json.loads(EXAMPLE.read_text())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--summarizer", "llm"], "needs a summariser LLM"),
        (["--context-length", "0"], "give a whole number from 1 to 100,000,000"),
        (["--context-length", "1000", "--max-tokens", "2000"], "less than the context length"),
        (["--summarizer", "magic"], "invalid choice"),
    ],
)
def test_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _out, err = run(capsys, "compress", str(EXAMPLE), *args)
    assert code == 2 and message in err


def test_bad_transcripts_exit_1_and_change_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps([{"role": "tool", "tool_call_id": "x", "content": "y"}]))
    out = tmp_path / "out.json"
    code, _o, err = run(capsys, "compress", str(broken), "--force", "--out", str(out))
    assert code == 1 and "cannot compress an invalid transcript" in err
    assert not out.exists()
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    code, _o, err = run(capsys, "compress", str(bad))
    assert code == 1 and "invalid JSON" in err and "Traceback" not in err


def _serve(status: int) -> tuple[Any, int]:
    """A loopback chat-completions endpoint that always answers ``status``."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            body = b'{"error": {"message": "denied"}}'
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def _configure(home: Path, port: int) -> None:
    (home / "config.yaml").write_text(
        f"auxiliary:\n  compression:\n    base_url: http://127.0.0.1:{port}/v1\n    model: m\n"
    )


def test_unreachable_llm_falls_back_under_auto(
    capsys: pytest.CaptureFixture[str], isolated_home: Path, tmp_path: Path
) -> None:
    import socket

    with socket.socket() as sock:  # a port with nothing listening: network unreachable
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    _configure(isolated_home, port)
    out = tmp_path / "o.json"
    args = ("compress", str(EXAMPLE), "--context-length", "32000", "--force", "--out", str(out))
    code, _o, err = run(capsys, *args)
    assert (
        code == 0 and "summary of the middle: the deterministic fallback" in err
    )  # auto: reachable LLM, else fallback
    code, _o, err = run(capsys, *args, "--summarizer", "llm")
    assert code == 1 and err.startswith("aborted:") and "pruning (no LLM): nothing pruned" in err
    assert json.loads(out.read_text()) == json.loads(EXAMPLE.read_text())


def test_auth_failure_aborts_with_exit_1(
    capsys: pytest.CaptureFixture[str], isolated_home: Path, tmp_path: Path
) -> None:
    server, port = _serve(401)
    try:
        _configure(isolated_home, port)
        out = tmp_path / "o.json"
        code, _o, err = run(
            capsys,
            "compress",
            str(EXAMPLE),
            "--context-length",
            "32000",
            "--force",
            "--out",
            str(out),
        )
    finally:
        server.shutdown()
    assert code == 1 and err.startswith("aborted:") and "auth" in err
    assert json.loads(out.read_text()) == json.loads(EXAMPLE.read_text())


def test_jsonl_stdin_and_quiet_when_not_a_terminal(tmp_path: Path) -> None:
    lines = "\n".join(json.dumps(m) for m in json.loads(EXAMPLE.read_text()))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "hermes_core",
            "compress",
            "-",
            "--context-length",
            "32000",
            "--force",
        ],
        input=lines,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HERMES_HOME": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "\r" not in proc.stderr and "…" not in proc.stderr  # no progress off a terminal
    assert len(json.loads(proc.stdout)) < 129


# --- --out never replaces a device, FIFO, socket or directory (issue 11 §4.4) -----------------


def _entries(directory: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.lstat().st_ino, p.lstat().st_mode) for p in directory.iterdir()}


def _refused(capsys: pytest.CaptureFixture[str], out: str, what: str) -> None:
    code, stdout, err = run(capsys, "compress", str(EXAMPLE), "--force", "--out", out)
    lines = err.strip().splitlines()
    assert code == 2 and stdout == "" and len(lines) == 1, err
    assert lines[0].startswith(f"hermes-context: error: --out {out}: cannot write: it is {what}")
    assert "nothing was written" in lines[0] and "Traceback" not in err


def test_out_fifo_is_refused_with_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    before = _entries(tmp_path)
    _refused(capsys, str(fifo), "a FIFO (named pipe)")  # and it did not block on the pipe
    assert _entries(tmp_path) == before


def test_out_dev_null_is_refused_and_stays_the_device(capsys: pytest.CaptureFixture[str]) -> None:
    with dev_null_kept():
        _refused(capsys, os.devnull, "a character device")


def test_out_directory_and_links_to_non_files_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "dir").mkdir()
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "to-pipe").symlink_to(tmp_path / "pipe")
    (tmp_path / "to-null").symlink_to(os.devnull)
    (tmp_path / "dangling").symlink_to(tmp_path / "missing.json")
    before = _entries(tmp_path)
    _refused(capsys, str(tmp_path / "dir"), "a directory")
    _refused(capsys, str(tmp_path / "to-pipe"), "a symbolic link to a FIFO")
    with dev_null_kept():
        _refused(capsys, str(tmp_path / "to-null"), "a symbolic link to a character device")
    _refused(capsys, str(tmp_path / "dangling"), "a symbolic link to a missing file")
    assert _entries(tmp_path) == before and not (tmp_path / "missing.json").exists()


def test_out_symlink_to_a_file_is_written_through(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    real = tmp_path / "real.json"
    real.write_text("[]")
    link = tmp_path / "out.json"
    link.symlink_to(real)
    code, _out, err = run(capsys, "compress", str(EXAMPLE), "--force", "--out", str(link))
    assert code == 0, err
    assert link.is_symlink() and link.resolve() == real
    assert 0 < len(json.loads(real.read_text())) < 129


# --- deep nesting: one line, exit 1, never a RecursionError (issue 11 §4.5) --------------------


def _deep_text(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def _deep_files(tmp_path: Path, depth: int) -> dict[str, Path]:
    """Transcript files valid but for one value nested ``depth`` levels (JSON text built by
    hand: json.dumps itself recurses)."""
    deep = _deep_text(depth)

    def pair(arguments: str) -> str:
        call = '{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '
        return (
            '[{"role": "user", "content": "q"}, {"role": "assistant", "content": null, '
            f'"tool_calls": [{call}{arguments}}}}}]}}, '
            '{"role": "tool", "tool_call_id": "c1", "content": "ok"}]'
        )

    texts = {
        "content part": '[{"role": "user", "content": [{"type": "text", "x": ' + deep + "}]}]",
        "arguments object": pair(deep),
        "arguments string": pair(json.dumps(deep)),
        "extra key": '[{"role": "user", "content": "q", "meta": ' + deep + "}]",
    }
    files = {}
    for place, text in texts.items():
        path = tmp_path / f"{place.replace(' ', '-')}-{depth}.json"
        path.write_text(text)
        files[place] = path
    return files


@pytest.mark.parametrize("depth", [500, 5_000])
def test_deep_transcripts_are_one_line_errors_for_every_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, depth: int
) -> None:
    for place, path in _deep_files(tmp_path, depth).items():
        out = tmp_path / "out.json"
        for argv in (
            ["compress", str(path), "--force", "--out", str(out)],
            ["validate", str(path)],
            ["tokens", str(path)],
        ):
            code, stdout, err = run(capsys, *argv)
            # every command refuses what `validate` reports (docs/formats.md, "Invalid
            # transcripts"): an arguments string too deep to parse included
            assert code == 1, (place, argv, err)
            assert "Traceback" not in err and "RecursionError" not in err + stdout
            if argv[0] == "validate" and stdout:  # the file was read: one problem a line
                assert "deeper than 64 levels" in stdout, (place, stdout)
                continue
            assert len(err.strip().splitlines()) == 1, (place, argv, err)
            assert "deeper than 64 levels" in err or "nested too deeply" in err, err
        assert not out.exists()


@pytest.mark.parametrize("depth", [500, 5_000])
def test_deep_messages_make_compress_raise_invalid_messages(depth: int) -> None:
    import hermes_core as hc
    from hermes_core.errors import InvalidMessages

    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value}
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    cases: dict[str, list[dict[str, Any]]] = {
        "content part": [{"role": "user", "content": [{"type": "text", "text": "h", "x": value}]}],
        "arguments object": [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{**call, "function": {"name": "f", "arguments": value}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ],
        "arguments string": [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{**call, "function": {"name": "f", "arguments": _deep_text(depth)}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ],
        "extra key": [{"role": "user", "content": "q", "meta": value}],
    }
    for place, messages in cases.items():
        with pytest.raises(InvalidMessages, match="deeper than 64 levels"):
            hc.compress(messages, context_length=8_000, summarizer="fallback", force=True)
        if place != "arguments string":
            with pytest.raises(InvalidMessages, match="deeper than 64 levels"):
                hc.count_tokens(messages)
