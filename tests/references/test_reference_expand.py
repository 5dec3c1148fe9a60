"""Expanding a whole message: what is attached, what is refused, the budget, redaction."""

from __future__ import annotations

from pathlib import Path

import pytest
from reference_support import tokens_by_length

from hermes_core.config.settings import ReferencesSettings
from hermes_core.references import Expansion, expand_references
from hermes_core.references import expand as expand_module
from hermes_core.references.expand import ATTACHED_HEADER, WARNINGS_HEADER
from hermes_core.references.parse import MAX_REFERENCES
from hermes_core.references.sources import MAX_LISTING


def expand(
    text: str,
    workspace: Path | None,
    *,
    context_length: int = 1_000_000,
    settings: ReferencesSettings | None = None,
) -> Expansion:
    return expand_references(
        text,
        workspace=workspace,
        context_length=context_length,
        count_tokens=tokens_by_length,
        settings=settings or ReferencesSettings(),
        user_home=Path("/nonexistent-home"),
    )


def test_done_when(workspace: Path) -> None:
    """The issue's acceptance line: a workspace file is attached; .env and a loopback URL
    are refused with a warning."""
    (workspace / "main.py").write_text("print('hello')\n")
    (workspace / ".env").write_text("OPENAI_API_KEY=abc\n")
    text = "Look at @file:main.py and @file:.env and @url:http://127.0.0.1/"
    result = expand(text, workspace)
    assert result.attached.startswith(f"\n\n{ATTACHED_HEADER}\n\n@file:main.py\n```python\n")
    assert "print('hello')" in result.attached
    assert "OPENAI_API_KEY" not in result.attached
    assert len(result.warnings) == 2
    assert result.warnings[0].startswith("@file:.env was not attached: ")
    assert result.warnings[1].startswith("@url:http://127.0.0.1/ was not attached: ")
    assert "loopback" in result.warnings[1]
    assert result.apply(text) == text + result.attached  # the user's words come first
    assert f"{WARNINGS_HEADER}\n- @file:.env" in result.attached  # the model learns too


def test_no_reference_means_no_change(workspace: Path) -> None:
    result = expand("mail a@b.com, thanks @alice", workspace)
    assert (result.attached, result.warnings, result.references) == ("", [], [])


def test_references_can_be_switched_off(workspace: Path) -> None:
    (workspace / "a.txt").write_text("content")
    assert "content" in expand("@file:a.txt", workspace).attached
    off = expand("@file:a.txt", workspace, settings=ReferencesSettings(enabled=False))
    assert (off.attached, off.warnings) == ("", [])


def test_line_ranges_and_their_errors(workspace: Path) -> None:
    (workspace / "lines.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    result = expand("@file:lines.txt:3-4 @file:lines.txt:9 @file:lines.txt:20-30", workspace)
    assert "@file:lines.txt (lines 3-4)\n```\nline 3\nline 4\n```" in result.attached
    assert "@file:lines.txt (lines 9-9)\n```\nline 9\n```" in result.attached
    assert "has 10 lines" in result.warnings[0]


def test_files_that_are_not_attached(workspace: Path) -> None:
    (workspace / "image.bin").write_bytes(b"\x89PNG\x00\x00data")
    (workspace / "folder").mkdir()
    result = expand("@file:image.bin @file:folder @folder:image.bin @file:missing.txt", workspace)
    reasons = " | ".join(result.warnings)
    assert "binary file" in reasons
    assert "use @folder:folder" in reasons
    assert "is a file, not a folder" in reasons or "is not a folder" in reasons
    assert "does not exist" in reasons
    assert ATTACHED_HEADER not in result.attached


def test_no_workspace_refuses_paths_and_git(tmp_path: Path) -> None:
    result = expand("@file:a.txt @folder:src @diff", None)
    assert len(result.warnings) == 3 and all("no workspace" in w for w in result.warnings)


def test_folder_listing(workspace: Path) -> None:
    (workspace / "src" / "pkg").mkdir(parents=True)
    (workspace / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    (workspace / "src" / ".env").write_text("K=1")
    (workspace / ".ssh").mkdir()
    (workspace / ".ssh" / "id_rsa").write_text("KEY")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "HEAD").write_text("ref")
    (workspace / "README.md").write_text("readme")
    (workspace / "link").symlink_to("/etc")
    listing = expand("@folder:.", workspace).attached
    assert "src/\n" in listing and "    pkg/\n" in listing and "mod.py (6 bytes)" in listing
    assert "README.md (6 bytes)" in listing and "link (symbolic link, not followed)" in listing
    assert ".git/" in listing and "HEAD" not in listing  # listed, not descended into
    assert ".env" not in listing and ".ssh" not in listing and "id_rsa" not in listing
    assert "readme" not in listing  # names and sizes, never contents


def test_a_big_folder_is_listed_up_to_the_bound(workspace: Path) -> None:
    for number in range(MAX_LISTING + 50):
        (workspace / f"f{number:04}.txt").write_text("")
    result = expand("@folder:.", workspace)
    assert "f0000.txt" in result.attached
    assert "more entries (name a subfolder" in result.attached


def test_secrets_in_attached_files_are_redacted(workspace: Path) -> None:
    key = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    (workspace / "config.py").write_text(f'API_KEY = "{key}"\nDEBUG = True\n')
    result = expand("@file:config.py", workspace)
    assert key not in result.attached
    assert "[REDACTED:" in result.attached and "DEBUG = True" in result.attached
    assert "1 secret replaced" in result.warnings[0]


def test_warnings_never_carry_a_secret(workspace: Path) -> None:
    key = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    result = expand(f"@url:http://127.0.0.1/?api_key={key}", workspace)
    assert result.warnings and all(key not in w for w in result.warnings)
    assert key not in result.attached


def test_the_budget(workspace: Path) -> None:
    """One token per character: the section is the label, two fences and the body."""
    (workspace / "small.txt").write_text("s" * 100)
    (workspace / "medium.txt").write_text("m" * 300)
    (workspace / "large.txt").write_text("l" * 600)
    fine = expand("@file:small.txt", workspace, context_length=1000)
    assert fine.warnings == [] and "s" * 100 in fine.attached and 0 < fine.tokens <= 250
    warned = expand("@file:medium.txt", workspace, context_length=1000)
    assert "m" * 300 in warned.attached and 250 < warned.tokens < 500
    assert "over a quarter" in warned.warnings[0]
    refused = expand("@file:large.txt", workspace, context_length=1000)
    assert ATTACHED_HEADER not in refused.attached and refused.tokens == 0
    assert "nothing was attached" in refused.warnings[0] and "half or more" in refused.warnings[0]
    (workspace / "medium2.txt").write_text("n" * 300)  # two under 50% that reach it together
    together = expand("@file:medium.txt @file:medium2.txt", workspace, context_length=1000)
    assert together.tokens == 0 and "nothing was attached" in together.warnings[0]


def test_the_budget_counts_with_the_given_counter(workspace: Path) -> None:
    (workspace / "a.txt").write_text("a" * 40)
    result = expand_references(
        "@file:a.txt",
        workspace=workspace,
        context_length=100,
        count_tokens=lambda text: 60,
        settings=ReferencesSettings(),
    )
    assert result.tokens == 0 and "60 tokens" in result.warnings[0]


def test_duplicates_once_and_a_bounded_number(workspace: Path) -> None:
    (workspace / "a.txt").write_text("AAA")
    twice = expand("@file:a.txt and again @file:a.txt", workspace)
    assert twice.attached.count("AAA") == 1
    many = " ".join(f"@file:f{n}.txt" for n in range(MAX_REFERENCES + 3))
    result = expand(many, workspace)
    assert sum("does not exist" in w for w in result.warnings) == MAX_REFERENCES
    assert "3 more were left as text" in result.warnings[-1]


def test_a_body_holding_backticks_gets_a_longer_fence(workspace: Path) -> None:
    (workspace / "doc.md").write_text("before\n```\ncode\n```\nafter\n")
    attached = expand("@file:doc.md", workspace).attached
    assert "````markdown\nbefore\n```\ncode\n```\nafter\n````" in attached


def test_one_failure_does_not_stop_the_others(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "a.txt").write_text("AAA")
    (workspace / "b.txt").write_text("BBB")
    real = expand_module.read_file_text

    def flaky(resolved, line_range, until=None):  # type: ignore[no-untyped-def]
        if resolved.real.name == "a.txt":
            raise MemoryError("boom")
        return real(resolved, line_range, until)

    monkeypatch.setattr(expand_module, "read_file_text", flaky)
    result = expand("@file:a.txt @file:b.txt", workspace)
    assert "BBB" in result.attached and "AAA" not in result.attached
    assert "unexpected MemoryError" in result.warnings[0]


def test_malformed_references_become_warnings(workspace: Path) -> None:
    result = expand("@git:abc @file:a.txt:5-2", workspace)
    assert "number of commits" in result.warnings[0] and "line range" in result.warnings[1]


def test_context_length_must_be_positive(workspace: Path) -> None:
    with pytest.raises(ValueError, match="context_length"):
        expand("@diff", workspace, context_length=0)
