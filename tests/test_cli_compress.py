"""``hermes-context compress``: outputs, report, formats, exit codes, and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

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
    labelled as such, so "37" beside "no summary" is not read as 37 summaries."""
    code, _out, err = run(capsys, "compress", str(EXAMPLE), "--out", str(tmp_path / "o.json"))
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
        (["--context-length", "0"], "--context-length must be positive"),
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
