"""Readable text from an HTML page, crudely: what a model needs from ``@url:`` is the words
a visitor sees, not the markup. Scripts, styles, comments and other non-content elements go,
and so does every element hidden from a reader (:mod:`hermes_core.references.hidden_html`):
a page must not slip the model words its visitors never see. Block elements become line
breaks; entities are decoded; runs of blank lines collapse. Standard library only."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Final

from hermes_core.references.hidden_html import HIDDEN_TAGS, hidden_by_attributes, hiding_rules

__all__ = ["html_to_text", "looks_like_html"]

_BLOCKS: Final = frozenset(
    {
        "p", "div", "br", "li", "ul", "ol", "tr", "table", "section", "article", "header",
        "footer", "nav", "main", "aside", "h1", "h2", "h3", "h4", "h5", "h6", "pre",
        "blockquote", "hr", "dt", "dd", "figure", "figcaption", "title",
    }
)  # fmt: skip
#: Elements without content or end tag: never opened on the stack.
_VOID: Final = frozenset(
    {
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
        "source", "track", "wbr",
    }
)  # fmt: skip
_MAX_DEPTH: Final = 4096
_BLANKS: Final = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")
_SPACES: Final = re.compile(r"[ \t\r\f\v]+")


class _Text(HTMLParser):
    """Collects visible text. Open elements sit on a stack with whether each hides its
    content; text counts only while none does. An end tag closes up to its latest match
    (as a browser does for unclosed ``<p>`` and ``<li>``); a stray one changes nothing, and
    an element never closed keeps hiding to the end: when unsure, leave text out."""

    def __init__(self, classes: frozenset[str], ids: frozenset[str]) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.stack: list[tuple[str, bool]] = []
        self.hidden = 0
        self.title = ""
        self._in_title = False
        self._classes, self._ids = classes, ids

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCKS:
            self.parts.append("\n")
        if tag == "title" and all(t == "head" or not h for t, h in self.stack):
            self._in_title = True
        if tag in _VOID:
            return
        hides = tag in HIDDEN_TAGS or hidden_by_attributes(attrs, self._classes, self._ids)
        if len(self.stack) >= _MAX_DEPTH:  # absurd nesting: stop reading rather than guess
            hides = True
        self.stack.append((tag, hides))
        self.hidden += hides

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # HTML ignores the slash: ``<div hidden/>text</div>`` hides the text, as here
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in _BLOCKS:
            self.parts.append("\n")
        for depth in range(len(self.stack) - 1, -1, -1):
            if self.stack[depth][0] == tag:
                self.hidden -= sum(hides for _, hides in self.stack[depth:])
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self.hidden:
            self.parts.append(data)


def looks_like_html(text: str) -> bool:
    """Whether untyped content starts like an HTML document."""
    head = text[:512].lstrip().lower()
    return head.startswith(("<!doctype html", "<html", "<head", "<body"))


def html_to_text(html: str) -> str:
    """The visible text of ``html``, with its title (if any) as the first line. Comments
    (conditional ones too) and hidden elements give no text."""
    parser = _Text(*hiding_rules(html))
    try:
        parser.feed(html)
        parser.close()
    except (AssertionError, ValueError):  # malformed markup: keep what was read
        pass
    body = _SPACES.sub(" ", "".join(parser.parts))
    body = _BLANKS.sub("\n\n", "\n".join(line.strip() for line in body.split("\n"))).strip()
    title = " ".join(parser.title.split())
    return f"{title}\n\n{body}" if title and not body.startswith(title) else body
