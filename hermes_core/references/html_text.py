"""Readable text from an HTML page, crudely: what a model needs from ``@url:`` is the words
a visitor sees, not the markup. Scripts, styles, comments and other non-content elements go,
and so does every element hidden from a reader (:mod:`hermes_core.references.hidden_html`):
a page must not slip the model words its visitors never see. Block elements become line
breaks, table cells and labels a space (``<td>10</td><td>20</td>`` reads ``10 20``, as laid
out); entities are decoded; runs of blank lines collapse. Standard library only."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from typing import Final

from hermes_core.references.hidden_html import (
    HIDDEN_TAGS,
    RAW_TEXT_TAGS,
    Inherited,
    StyleSheet,
    attribute_values,
    hidden_by_attributes,
)
from hermes_core.references.html_work import TooMuchWork, WorkBudget

__all__ = ["TooMuchWork", "html_to_text", "looks_like_html"]

_BLOCKS: Final = frozenset(
    {
        "p", "div", "br", "li", "ul", "ol", "tr", "table", "section", "article", "header",
        "footer", "nav", "main", "aside", "h1", "h2", "h3", "h4", "h5", "h6", "pre",
        "blockquote", "hr", "dt", "dd", "figure", "figcaption", "title",
    }
)  # fmt: skip
#: Elements a browser lays out apart on one line: their words must not run together.
_CELLS: Final = frozenset({"td", "th", "label"})
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


#: Elements an end tag inside cannot reach past: their content is apart from the page
#: (``<div hidden><template></div>PAYLOAD</template>`` keeps PAYLOAD in the template), or
#: a browser's "scope" ends there (``<div hidden><table></div>`` closes nothing).
_SCOPES: Final = frozenset(
    {"template", "svg", "math", "select", "object", "table", "td", "th", "caption", "applet",
     "marquee", "html"}
)  # fmt: skip
#: HTML's "special" elements: the end tag of an ordinary element (``</span>``) that would
#: have to close one of these on its way is ignored by a browser, and so here
#: (``<span hidden><div></span>PAYLOAD</div>`` keeps PAYLOAD hidden).
_SPECIAL: Final = _BLOCKS | _SCOPES | RAW_TEXT_TAGS | frozenset(
    {
        "address", "area", "base", "body", "button", "center", "col", "colgroup", "details",
        "dir", "dl", "embed", "fieldset", "form", "frame", "frameset", "head", "hgroup",
        "img", "input", "link", "listing", "menu", "meta", "param", "search", "source",
        "summary", "tbody", "tfoot", "thead", "track", "wbr", "select", "iframe", "object",
    }
)  # fmt: skip
#: Formatting elements: a browser's "adoption agency" lets their end tag reach past a
#: block (moving the block out), so their end tag closes them here too.
_FORMATTING: Final = frozenset(
    {"a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong",
     "tt", "u"}
)  # fmt: skip
#: Characters fed to the standard parser at a time (at least), the budget checked after each.
_CHUNK: Final = 4096


class _Text(HTMLParser):
    """Collects visible text. Open elements sit on a stack with how much each hides (1 when
    it hides its content, 0 when not, -1 for the ``<summary>`` of a closed ``<details>``,
    which shows what its parent hides); text counts only while the sum is above 0. An end
    tag closes up to its latest match (as a browser does for unclosed ``<p>`` and ``<li>``)
    but never past a scope (:data:`_SCOPES`); a stray one changes nothing, and an element
    never closed keeps hiding to the end: when unsure, leave text out. Inside a raw-text
    element (:data:`RAW_TEXT_TAGS`) no tag counts until its own end tag."""

    def __init__(self, sheet: StyleSheet, budget: WorkBudget) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.stack: list[tuple[str, int]] = []
        self.inherited: list[Inherited] = []  # what each open element's content takes
        self.hidden = 0
        self.title = ""
        self._in_title = False
        self._titled = False  # only the first <title> names the page
        self._sheet = sheet
        self.budget = budget
        self._closed: list[int] = []  # stack depths of closed <details>
        self._summarised: set[int] = set()  # ... of <details> whose summary was seen

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCKS:
            self.parts.append("\n")
        elif tag in _CELLS:
            self.parts.append(" ")
        self.budget.spend(1 + len(attrs))
        first_title = tag == "title" and not self._titled
        if first_title and all(t == "head" or not h for t, h in self.stack):
            self._in_title = self._titled = True
        if tag in _VOID:
            return
        if tag in RAW_TEXT_TAGS:
            # markup inside is text up to </tag> (plaintext: to the end of the page)
            self.set_cdata_mode("plaintext\x00" if tag == "plaintext" else tag)
        values = attribute_values(attrs)
        outer = self.inherited[-1] if self.inherited else Inherited()
        hidden, inherited = hidden_by_attributes(tag, values, self._sheet, self.budget, outer)
        hides = int(tag in HIDDEN_TAGS or hidden)
        if tag == "details" and not any(name == "open" for name, _ in attrs):
            hides += 1  # closed: only its summary shows
            self._closed.append(len(self.stack))
        parent = len(self.stack) - 1
        first_summary = parent >= 0 and parent not in self._summarised
        if tag == "summary" and first_summary and self.stack[parent][0] == "details":
            self._summarised.add(parent)  # a closed details shows its first summary
            hides -= int(self._closed[-1:] == [parent])
        if len(self.stack) >= _MAX_DEPTH:  # absurd nesting: stop reading rather than guess
            hides = max(hides, 1)
        self.stack.append((tag, hides))
        self.inherited.append(inherited)
        self.hidden += hides

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # HTML ignores the slash: ``<div hidden/>text</div>`` hides the text, as here
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in _BLOCKS:
            self.parts.append("\n")
        elif tag in _CELLS:
            self.parts.append(" ")
        ordinary = tag not in _SPECIAL and tag not in _FORMATTING
        for depth in range(len(self.stack) - 1, -1, -1):
            self.budget.spend(1)
            open_tag = self.stack[depth][0]
            if open_tag == tag:
                self.hidden -= sum(hides for _, hides in self.stack[depth:])
                del self.stack[depth:]
                del self.inherited[depth:]
                self._closed = [d for d in self._closed if d < depth]
                self._summarised = {d for d in self._summarised if d < depth}
                return
            if open_tag in _SCOPES or (ordinary and open_tag in _SPECIAL):
                return  # an end tag inside a template cannot close what is outside it

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += html.unescape(data) if self.cdata_elem == "title" else data
        elif self.hidden <= 0:
            self.parts.append(data)


def looks_like_html(text: str) -> bool:
    """Whether untyped content starts like an HTML document."""
    head = text[:512].lstrip().lower()
    return head.startswith(("<!doctype html", "<html", "<head", "<body"))


def html_to_text(page: str, budget: WorkBudget | None = None) -> str:
    """The visible text of ``page``, with its title (if any) as the first line. Comments
    (conditional ones too) and hidden elements give no text.

    Raises :class:`TooMuchWork` when reading the page would take more work than its budget
    (:mod:`hermes_core.references.html_work`). The page is fed in chunks, and the text the
    standard parser keeps back to scan again is paid for each time. Whatever is left
    unfinished at the end (an unclosed comment or tag) gives no text. ``budget`` defaults to
    :meth:`WorkBudget.for_page`; after the call it tells how much work the page took."""
    budget = budget or WorkBudget.for_page(page)
    budget.spend(len(page))
    # a browser also ends a comment at "--!>"; the standard parser only at "-->"
    page = page.replace("--!>", "-->")
    parser = _Text(StyleSheet.of_page(page), budget)
    try:
        start = 0
        while start < len(page):
            # a chunk at least as long as what the parser holds back: each feed scans that
            # again, so the scans add up to a few times the page, not its square
            size = max(_CHUNK, len(parser.rawdata))
            parser.feed(page[start : start + size])
            start += size
            budget.spend(size + len(parser.rawdata))
        if "<" not in parser.rawdata:  # only text held back (after a "&"): read it
            parser.close()
    except (AssertionError, ValueError):  # malformed markup: keep what was read
        pass
    body = _SPACES.sub(" ", "".join(parser.parts))
    body = _BLANKS.sub("\n\n", "\n".join(line.strip() for line in body.split("\n"))).strip()
    title = " ".join(parser.title.split())
    return f"{title}\n\n{body}" if title and not body.startswith(title) else body
