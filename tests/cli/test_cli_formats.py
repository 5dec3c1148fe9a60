"""``--format`` on ``compress``, ``tokens``, ``validate`` and ``eval`` (issue 16 §1): each reads
and writes the host's own format, told from the content when the shape is unambiguous."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from hermes_core.cli import main
from hermes_core.formats import blank, from_openai, load_payload, payload_problems
from hermes_core.transcript.messages import to_wire

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "coding-session.json"
SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDYVd/U7ZVAaW6hi4iMFrp3lknEt5dk5Ec8Q=="

pytestmark = pytest.mark.usefixtures("isolated_home")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def example_in(fmt: str) -> Any:
    """The example transcript written in ``fmt`` from scratch; Anthropic gets a thinking
    block with a signature and a cached system block, Responses a reasoning item, so the
    payloads carry what has no OpenAI form."""
    messages = json.loads(EXAMPLE.read_text())
    payload = {"model": "host-model", **copy.deepcopy(from_openai(messages, blank(fmt)))}
    if fmt == "anthropic":
        payload["system"] = [
            {"type": "text", "text": payload["system"], "cache_control": {"type": "ephemeral"}}
        ]
        last = max(i for i, m in enumerate(payload["messages"]) if m["role"] == "assistant")
        content = payload["messages"][last]["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        thinking = {"type": "thinking", "thinking": "check the tail", "signature": SIGNATURE}
        payload["messages"][last]["content"] = [thinking, *blocks]
    if fmt == "responses":
        payload["input"].insert(2, {"type": "reasoning", "id": "rs_1", "summary": []})
    return payload


def write(path: Path, value: Any) -> str:
    path.write_text(json.dumps(value))
    return str(path)


@pytest.mark.parametrize("fmt", ["anthropic", "responses"])
@pytest.mark.parametrize("explicit", [True, False], ids=["--format", "detected"])
def test_compress_writes_the_hosts_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str, explicit: bool
) -> None:
    source = example_in(fmt)
    path = write(tmp_path / "in.json", source)
    out = tmp_path / "out.json"
    flags = ["--format", fmt] if explicit else []
    argv = ["compress", path, *flags, "--context-length", "32000", "--force"]
    code, stdout, _err = run(capsys, *argv, "--json", "--out", str(out))
    report = json.loads(stdout)
    assert code == 0 and report["status"] == "compressed" and report["format"] == fmt
    written = json.loads(out.read_text())
    assert payload_problems(written, fmt) == []
    assert written["model"] == "host-model"  # the request's other keys come back
    items = written["messages" if fmt == "anthropic" else "input"]
    original = source["messages" if fmt == "anthropic" else "input"]
    assert len(items) < len(original)
    assert items[-1] == original[-1]  # the protected tail comes back as given
    if fmt == "anthropic":
        # the compaction note joins the system text; the block keeps its cache_control
        [block] = written["system"]
        assert block["cache_control"] == {"type": "ephemeral"}
        assert block["text"].startswith(source["system"][0]["text"])
        kept = [b for m in items if isinstance(m["content"], list) for b in m["content"]]
        assert {"type": "thinking", "thinking": "check the tail", "signature": SIGNATURE} in kept

    # the same transcript as OpenAI messages compresses to the same messages
    openai = write(tmp_path / "plain.json", to_wire(load_payload(source, fmt).messages))
    code, stdout, _ = run(capsys, "compress", openai, "--context-length", "32000", "--force")
    assert code == 0
    assert to_wire(load_payload(written, fmt).messages) == to_wire(json.loads(stdout))


def test_an_openai_file_is_written_as_a_list_as_before(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path / "in.json", {"messages": json.loads(EXAMPLE.read_text())})
    code, stdout, _ = run(capsys, "compress", path, "--context-length", "32000", "--force")
    assert code == 0 and isinstance(json.loads(stdout), list)


def test_a_file_in_another_format_than_said_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path / "in.json", example_in("anthropic"))
    for command in ("compress", "tokens", "eval"):
        code, stdout, err = run(capsys, command, path, "--format", "responses")
        assert code == 1 and stdout == "", command
        assert "not a valid Responses input" in err, err
        assert "hermes-context validate --format responses" in err
        assert err.count("\n") <= 2 and "Traceback" not in err


def test_parts_that_contradict_each_other_are_never_guessed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    mixed = [
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},  # Responses
        {"role": "tool", "tool_call_id": "c1", "content": "x"},  # OpenAI
    ]
    path = write(tmp_path / "mixed.json", mixed)
    for command in ("compress", "tokens", "validate"):
        code, _out, err = run(capsys, command, path)
        assert code == 1, command
        assert "cannot tell the message format" in err and "--format" in err
    assert main(["validate", path, "--format", "openai"]) == 1  # read as said, then checked


def test_tokens_counts_the_openai_form_and_names_what_it_does_not_count(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = example_in("anthropic")
    path = write(tmp_path / "in.json", source)
    plain = write(tmp_path / "plain.json", to_wire(load_payload(source, "anthropic").messages))
    code, stdout, _ = run(capsys, "tokens", path, "--json")
    report = json.loads(stdout)
    assert code == 0 and report["format"] == "anthropic"
    assert report["not_counted"] == {"thinking": 1}
    code, stdout, _ = run(capsys, "tokens", plain, "--json")
    expected = json.loads(stdout)
    assert expected["format"] == "openai" and expected["not_counted"] == {}
    assert report["total"] == expected["total"] > 0
    code, stdout, _ = run(capsys, "tokens", path)
    assert "read as anthropic" in stdout and "not counted" in stdout and "thinking 1" in stdout
    assert f"{len(source['messages'])} messages in the file" in stdout

    responses = write(tmp_path / "r.json", example_in("responses"))
    code, stdout, _ = run(capsys, "tokens", responses, "--json")
    assert code == 0 and json.loads(stdout)["not_counted"] == {"reasoning": 1}


def test_validate_checks_tool_pairs_in_the_hosts_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    anthropic = {
        "system": "s",
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}],
            },
            {"role": "assistant", "content": "done"},
        ],
    }
    path = write(tmp_path / "a.json", anthropic)
    code, stdout, err = run(capsys, "validate", path)
    assert code == 1 and stdout.startswith("message 1: ") and '"t1"' in stdout
    assert "1 problem in 3 messages (anthropic message indexes are 0-based)" in err
    code, stdout, _ = run(capsys, "validate", path, "--json")
    document = json.loads(stdout)
    assert document["format"] == "anthropic" and document["valid"] is False
    assert [p["index"] for p in document["problems"]] == [1]

    responses = {
        "input": [
            {"role": "user", "content": "go"},
            {"type": "function_call_output", "call_id": "nope", "output": "x"},
        ]
    }
    path = write(tmp_path / "r.json", responses)
    code, stdout, _ = run(capsys, "validate", path, "--json")
    document = json.loads(stdout)
    assert code == 1 and document["format"] == "responses" and document["messages"] == 2
    assert [p["index"] for p in document["problems"]] == [1]

    good = write(tmp_path / "g.json", example_in("responses"))
    code, _out, err = run(capsys, "validate", good)
    assert code == 0 and "(read as responses), no problems" in err


def test_a_plain_transcript_reads_the_same_in_every_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    plain = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    path = write(tmp_path / "p.json", plain)
    totals = set()
    for flags in ([], ["--format", "openai"], ["--format", "anthropic"]):
        code, stdout, _ = run(capsys, "tokens", path, "--json", *flags)
        assert code == 0
        totals.add(json.loads(stdout)["total"])
    assert len(totals) == 1
    code, stdout, _ = run(capsys, "tokens", path, "--json")
    assert json.loads(stdout)["format"] == "openai"  # it fits several: read as OpenAI


def test_eval_reads_the_hosts_format(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path / "in.json", example_in("anthropic"))
    argv = ["eval", path, "--summarizer", "fallback", "--rounds", "1", "--json"]
    code, stdout, _ = run(capsys, *argv)
    assert code == 0, stdout
    report = json.loads(stdout)
    assert report["messages"] == len(load_payload(example_in("anthropic")).messages)
    assert report["compactions"] and report["facts"]


def test_a_file_said_to_be_openai_but_in_another_format_is_not_read_silently(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = example_in("anthropic")
    path = write(tmp_path / "a.json", source)
    for command in ("compress", "tokens", "validate", "eval"):
        code, stdout, err = run(capsys, command, path, "--format", "openai")
        assert code == 1 and stdout == "", command
        assert 'a top-level "system" is an Anthropic request' in err  # not dropped
    bare = write(tmp_path / "bare.json", source["messages"])
    code, stdout, err = run(capsys, "validate", bare, "--format", "openai")
    assert code == 1
    assert "its content is in the anthropic format" in stdout and "--format anthropic" in stdout
    code, _out, _err = run(capsys, "validate", bare)  # detected: read as what it is
    assert code == 0
