"""Readable text from an HTML page, crudely: what a model needs from ``@url:`` is the words,
not the markup. Scripts, styles and other non-content elements go; block elements become line
breaks; entities are decoded; runs of blank lines collapse. Standard library only."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Final

__all__ = ["html_to_text", "looks_like_html"]

_HIDDEN: Final = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe"})
_BLOCKS: Final = frozenset(
    {
        "p", "div", "br", "li", "ul", "ol", "tr", "table", "section", "article", "header",
        "footer", "nav", "main", "aside", "h1", "h2", "h3", "h4", "h5", "h6", "pre",
        "blockquote", "hr", "dt", "dd", "figure", "figcaption", "title",
    }
)  # fmt: skip
_BLANKS: Final = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")
_SPACES: Final = re.compile(r"[ \t\r\f\v]+")


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _HIDDEN:
            self.hidden += 1
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _HIDDEN and self.hidden:
            self.hidden -= 1
        if tag in _BLOCKS:
            self.parts.append("\n")

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
    """The visible text of ``html``, with its title (if any) as the first line."""
    parser = _Text()
    try:
        parser.feed(html)
        parser.close()
    except (AssertionError, ValueError):  # malformed markup: keep what was read
        pass
    body = _SPACES.sub(" ", "".join(parser.parts))
    body = _BLANKS.sub("\n\n", "\n".join(line.strip() for line in body.split("\n"))).strip()
    title = " ".join(parser.title.split())
    return f"{title}\n\n{body}" if title and not body.startswith(title) else body
