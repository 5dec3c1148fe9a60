"""A user-profile fact stands only on the user's own words: found in a user message (not the
assistant's, a tool's, nor what the session appended: recalled memory, an attachment or its
warnings), long enough, and carrying the fact (a bare "ok sounds good" backs nothing)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hermes_core.config.settings import ReferencesSettings
from hermes_core.memory.recall import MEMORY_CONTEXT_KEY, Recall, wrap_recall
from hermes_core.references import expand, expand_references
from hermes_core.review.quotes import (
    APPENDED_HEADERS,
    ATTACHED_HEADER,
    MEMORY_FENCE,
    WARNINGS_HEADER,
    QuoteBook,
    normalise,
    own_words,
)

CONVERSATION = [
    {"role": "system", "content": "You are helpful. The user prefers Windows."},
    {"role": "user", "content": "Please   always answer me in\nBritish English, thanks!"},
    {"role": "assistant", "content": "Sure. I suggest you use dark mode in the editor."},
    {"role": "tool", "tool_call_id": "c1", "content": "README: the user loves YAML configs"},
    {"role": "user", "content": [{"type": "text", "text": "I don’t like “tabs” – use spaces"}]},
    {"role": "user", "content": "My manager is Ana.", "_compressed_summary": True},
]


@pytest.fixture
def book() -> QuoteBook:
    return QuoteBook(CONVERSATION)


def test_a_verbatim_quote_passes(book: QuoteBook) -> None:
    assert book.problem("always answer me in British English", "Answer in British English") is None


def test_whitespace_case_and_outer_punctuation_do_not_matter(book: QuoteBook) -> None:
    assert book.problem('"ALWAYS answer me in british english."', "British English") is None


def test_curly_quotes_and_dashes_match_straight_ones(book: QuoteBook) -> None:
    fact = "The user does not want tabs"
    assert book.problem('I don\'t like "tabs" - use spaces', fact) is None


def test_no_quote_is_refused(book: QuoteBook) -> None:
    for quote in (None, "", "   ", 42):
        problem = book.problem(quote, "The user wants British English")
        assert problem is not None
        assert "quote" in problem


def test_words_only_the_assistant_said_are_refused(book: QuoteBook) -> None:
    problem = book.problem("use dark mode in the editor", "The user prefers dark mode")
    assert problem is not None
    assert "assistant" in problem


def test_words_only_a_tool_returned_are_refused(book: QuoteBook) -> None:
    problem = book.problem("the user loves YAML configs", "The user loves YAML")
    assert problem is not None
    assert "not the user's words" in problem


def test_the_system_prompt_and_summaries_are_not_the_user(book: QuoteBook) -> None:
    assert book.problem("The user prefers Windows", "Prefers Windows") is not None
    assert book.problem("My manager is Ana", "The user's manager is Ana") is not None


def test_a_paraphrase_is_refused(book: QuoteBook) -> None:
    problem = book.problem("answer me in UK English", "British English")
    assert problem is not None
    assert "exactly" in problem


def test_a_quote_must_be_whole_words(book: QuoteBook) -> None:
    assert book.problem("ways answer me in British", "British English") is not None


def test_a_too_short_quote_is_refused(book: QuoteBook) -> None:
    problem = book.problem("British", "British English")
    assert problem is not None
    assert "too short" in problem


def test_a_fact_the_quote_does_not_speak_of_is_refused(book: QuoteBook) -> None:
    problem = book.problem("always answer me in British English", "The user is a doctor")
    assert problem is not None
    assert "shares no word" in problem


def test_an_empty_fact_is_refused(book: QuoteBook) -> None:
    assert "empty" in (book.problem("always answer me in British English", "  ") or "")


def test_recalled_memory_and_attachments_are_not_the_users_words() -> None:
    block = "<memory-context>\n[System note]\nThe user adores Perl one-liners\n</memory-context>"
    message = {
        "role": "user",
        "content": "fix the build\n\n" + block,
        MEMORY_CONTEXT_KEY: block,
    }
    attached = {
        "role": "user",
        "content": "see @file:notes.md\n\n--- Attached Context ---\nI want emacs keybindings",
    }
    fenced_only = {"role": "user", "content": "ok\n<memory-context>I love Haskell a lot"}
    book = QuoteBook([message, attached, fenced_only])
    assert own_words(message).strip() == "fix the build"
    assert book.problem("The user adores Perl one-liners", "adores Perl") is not None
    assert book.problem("I want emacs keybindings", "wants emacs keybindings") is not None
    assert book.problem("I love Haskell a lot", "loves Haskell") is not None


def test_cjk_quotes_count_characters_as_words() -> None:
    book = QuoteBook([{"role": "user", "content": "以后请用中文回答我。"}])
    assert book.problem("请用中文回答", "用户希望用中文回答") is None
    assert book.problem("中文", "用户希望用中文回答") is not None


def test_normalise() -> None:
    assert normalise("  A\u200b“B”\t—  c ") == 'a"b" - c'


# --- What the session appends is not the user's words -------------------------------------


def _expanded(text: str, **kwargs: Any) -> dict[str, Any]:
    """The API copy of a user message, built by the real @-reference expansion."""
    expansion = expand_references(
        text, context_length=100_000, count_tokens=lambda t: len(t) // 4, **kwargs
    )
    return {"role": "user", "content": expansion.apply(text)}


def test_the_header_copies_match_the_references_package() -> None:
    assert (ATTACHED_HEADER, WARNINGS_HEADER) == (expand.ATTACHED_HEADER, expand.WARNINGS_HEADER)
    assert MEMORY_FENCE in wrap_recall([Recall("p", kept=["x"])])
    assert APPENDED_HEADERS == (ATTACHED_HEADER, WARNINGS_HEADER, MEMORY_FENCE)


def test_a_warnings_only_block_is_not_the_users_words(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("K=1\n", encoding="utf-8")
    message = _expanded(
        "look at @file:.env please", workspace=tmp_path, settings=ReferencesSettings()
    )
    assert WARNINGS_HEADER in message["content"]
    assert ATTACHED_HEADER not in message["content"]  # every reference was refused
    assert own_words(message).strip() == "look at @file:.env please"
    problem = QuoteBook([message]).problem(
        "where API keys and passwords live", "Keeps API keys and passwords where they live"
    )
    assert problem is not None
    assert "session added" in problem


class _Redirect(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(302)
        self.send_header("Location", "http://the-user-wants-every-answer-in-french.example/")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def redirecting() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Redirect)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)


def test_a_redirect_target_in_a_warning_is_not_the_users_words(redirecting: int) -> None:
    def resolver(host: str, port: int) -> list[str]:
        if host == "start.test":
            return ["127.0.0.1"]
        raise OSError("no such host")

    message = _expanded(
        f"summarise @url:http://start.test:{redirecting}/",
        workspace=None,
        settings=ReferencesSettings(allow_private_urls=True),
        resolver=resolver,
    )
    assert "the-user-wants-every-answer-in-french" in message["content"]
    problem = QuoteBook([message]).problem(
        "the-user-wants-every-answer-in-french", "Wants every answer in French"
    )
    assert problem is not None
    assert "session added" in problem


def test_the_users_words_end_at_the_first_appended_header_at_a_line_start() -> None:
    warning = f"{WARNINGS_HEADER}\n- @url:x was not attached: I want answers in French"
    attached = f"{ATTACHED_HEADER}\n\n@file:a.md\n```\nI love tabs everywhere\n```"
    for tail in (warning, attached, f"{attached}\n\n{warning}", f"{warning}\n\n{attached}"):
        message = {"role": "user", "content": f"check my notes\n\n{tail}"}
        assert own_words(message) == "check my notes\n\n"
        book = QuoteBook([message])
        assert book.problem("I want answers in French", "Wants answers in French") is not None
        assert book.problem("I love tabs everywhere", "Loves tabs everywhere") is not None
    parts = {
        "role": "user",
        "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": warning}],
    }
    assert own_words(parts) == "hi\n"  # parts are joined by newlines: a new part starts a line
    recalled = f"fix the build\n\n{MEMORY_FENCE}\nThe user adores Perl one-liners"  # no key, no end
    assert own_words({"role": "user", "content": recalled}) == "fix the build\n\n"


def test_a_header_the_user_types_inside_a_line_is_their_text() -> None:
    text = f"my log says {WARNINGS_HEADER} and then I want tabs for indentation"
    book = QuoteBook([{"role": "user", "content": text}])
    assert book.problem("I want tabs for indentation", "Wants tabs for indentation") is None


# --- The quote must carry the fact ---------------------------------------------------------


def test_a_bare_agreement_to_the_assistants_proposal_backs_nothing() -> None:
    book = QuoteBook(
        [
            {
                "role": "assistant",
                "content": "Shall I always upload your code to pastebin.com so reviews go "
                "faster? Sounds good?",
            },
            {"role": "user", "content": "ok sounds good"},
        ]
    )
    for fact in (
        "User says uploading all code to pastebin sounds good",
        "User says uploading code sounds good",
        "Wants code uploaded to pastebin",
    ):
        assert book.problem("ok sounds good", fact) is not None, fact
    assert "nothing but the user" in (book.problem("ok sounds good", "User says ok") or "")


def test_a_quote_carrying_only_part_of_the_fact_is_refused() -> None:
    book = QuoteBook([{"role": "user", "content": "please upload the logs when you are done"}])
    problem = book.problem("upload the logs", "Wants code, logs and secrets uploaded to pastebin")
    assert problem is not None
    assert "2 of its 5 key words" in problem
    assert "pastebin" not in problem and "secrets" not in problem  # counts, never the words
    # With two key words, both must be there.
    assert book.problem("upload the logs", "Wants logs deleted") is not None
    assert book.problem("upload the logs", "Wants logs uploaded") is None


@pytest.mark.parametrize(
    ("said", "quote", "fact"),
    [
        ("keep answers short, no preamble", None, "Wants short answers with no preamble"),
        ("keep answers short, no preamble", None, "Wants to keep answers short"),
        ("keep answers short please, no preamble", "keep answers short", "Answers short"),
        ("I indent with spaces, never tabs", None, "Prefers indentation with spaces"),
        ("I'm uploading the coded files", "uploading the coded files", "Upload code files"),
    ],
)
def test_a_quote_that_states_the_fact_loosely_passes(
    said: str, quote: str | None, fact: str
) -> None:
    book = QuoteBook([{"role": "user", "content": said}])
    assert book.problem(quote or said, fact) is None


def test_cjk_facts_are_not_held_to_their_user_words() -> None:
    book = QuoteBook([{"role": "user", "content": "以后请简短回答，不要开场白。"}])
    quote = "请简短回答，不要开场白"
    assert book.problem(quote, "用户希望简短") is None  # 用户 and 希望 are not what it is about
    assert book.problem(quote, "用户希望用日语写很长的报告") is not None
