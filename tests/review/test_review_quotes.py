"""A user-profile fact stands only on the user's own words: found in a user message (not the
assistant's, a tool's, recalled memory or an attachment), long enough, and on topic."""

from __future__ import annotations

import pytest

from hermes_core.memory.recall import MEMORY_CONTEXT_KEY
from hermes_core.review.quotes import QuoteBook, normalise, own_words

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
