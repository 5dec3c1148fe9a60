"""A page's own ``<style>`` rules, indexed so testing them against an element is cheap.

Why: text a page hides with its stylesheet (``.x{display:none}``, or ``.a{height:0}`` plus
``.a{overflow:hidden}``) must stay out of what ``@url:`` attaches, and thousands of rules
tested against every element of a big page must not cost minutes. Each rule is filed under
one key its selector needs (an id, a class, an attribute name, a tag, else "any"), so an
element is tested only against rules that could match it, and each test is paid for from
the page's :class:`~hermes_core.references.html_work.WorkBudget`.

Selectors are read generously, to hide more, never less: only a selector's last compound
counts (``.a .b`` styles every ``.b``), and pseudo-classes we cannot evaluate on one element
(``:not()``, ``:nth-child()``, ``:hover``, ``:has()``) are dropped and the rest evaluated.
Rules for generated content (``::before``, ``::after``, ``::marker``) style no page text and
are skipped; ``::first-line`` and ``::first-letter`` count as the element itself.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote

from hermes_core.references.hidden_css import hides, normalise
from hermes_core.references.html_work import RULE_TEST, WorkBudget

__all__ = ["Rule", "Selector", "StyleSheet", "style_blocks"]

_RULE: Final = re.compile(r"([^{}]{1,400})\{([^{}]{0,2000})\}")
_IDENT: Final = r"-?[a-z_][\w-]{0,100}"
_PART: Final = re.compile(
    rf"(?P<tag>{_IDENT}|\*)"
    rf"|\.(?P<cls>{_IDENT})|#(?P<id>-?[\w-]{{1,100}})"
    rf"|\[\s*(?P<attr>{_IDENT})\s*(?:(?P<op>[~^$*|]?=)\s*"
    r"(?P<val>\"[^\"]{0,200}\"|'[^']{0,200}'|[\w-]{1,200})\s*[is]?\s*)?\]"
    r"|:(?P<pseudo>is|where|matches|-webkit-any)\((?P<inner>[^()]{1,400})\)"
    r"|:(?P<link>link|any-link)(?![\w-])"
)
_PSEUDO: Final = re.compile(r"(::?)([\w-]{1,60})")
#: Pseudo-classes evaluated (the rest are dropped) and pseudo-elements read as the element.
_KEPT: Final = frozenset({"is", "where", "matches", "-webkit-any", "link", "any-link"})
_AS_ELEMENT: Final = frozenset({"first-line", "first-letter"})
#: Rules read from one page at most (each selector of a list counts once).
MAX_RULES: Final = 20_000
#: Properties that can hide text, alone or together (``overflow`` with a zero height, a
#: ``background`` under a colour): a rule setting none of them is not kept.
_RELEVANT: Final = re.compile(
    r"(?:^|;)\s*(?:display|visibility|content-visibility|font|opacity|filter|color|"
    r"-webkit-text-fill-color|background|transform|clip|scale|translate|height|width|"
    r"max-|block-size|inline-size|overflow|left|top|right|bottom|inset|text-indent|"
    r"margin|zoom|mask|contain|backface|position|--)"
)


@dataclass(frozen=True)
class Selector:
    """One compound selector: a tag (or ``*``), classes, ids, attribute tests, and
    alternatives (``:is(a, b)``: at least one must match)."""

    tag: str = "*"
    classes: frozenset[str] = frozenset()
    ids: frozenset[str] = frozenset()
    attrs: tuple[tuple[str, str, str, bool], ...] = ()  # (name, op, value, case-blind)
    # the stylesheet was lower-cased whole (normalise), so values compare case-blind
    any_of: tuple[tuple[Selector, ...], ...] = ()

    def matches(self, tag: str, attrs: dict[str, str]) -> bool:
        if self.tag not in ("*", tag):
            return False
        if self.classes and not self.classes <= set(attrs.get("class", "").lower().split()):
            return False
        if self.ids and not self.ids <= {attrs.get("id", "").lower()}:
            return False
        if not all(_attribute(attrs, *test) for test in self.attrs):
            return False
        return all(any(s.matches(tag, attrs) for s in group) for group in self.any_of)

    def key(self) -> tuple[str, str]:
        """The index bucket: one thing every element this selector matches has."""
        if self.ids:
            return ("id", min(self.ids))
        if self.classes:
            return ("class", min(self.classes))
        if self.attrs and self.attrs[0][0] != "href":
            return ("attr", self.attrs[0][0])
        if self.tag != "*":
            return ("tag", self.tag)
        return ("any", "")


def _attribute(attrs: dict[str, str], name: str, op: str, want: str, blind: bool) -> bool:
    if name not in attrs:
        return False
    have = attrs[name].lower() if blind or name in ("class", "id", "type") else attrs[name]
    want = want.lower() if blind else want
    return {
        "": True,
        "=": have == want,
        "~=": want in have.split(),
        "^=": bool(want) and have.startswith(want),
        "$=": bool(want) and have.endswith(want),
        "*=": bool(want) and want in have,
        "|=": have == want or have.startswith(want + "-"),
    }[op]


def _without_pseudo(text: str) -> str | None:
    """``text`` without the pseudo-classes we do not evaluate (with their arguments), or
    None when it styles generated content (``::before``) rather than the element."""
    kept: list[str] = []
    position = 0
    while (found := _PSEUDO.search(text, position)) is not None:
        colons, name = found.groups()
        end = found.end()
        if end < len(text) and text[end] == "(":
            end = _closing(text, end)
        if name in _KEPT and colons == ":":
            kept.append(text[position : found.end()])
            if end > found.end():  # :is(...): its alternatives lose their pseudo-classes too
                inner = _without_pseudo(text[found.end() + 1 : end - 1])
                if inner is None:
                    return None
                kept.append(f"({inner})")
        elif (colons == "::" and name not in _AS_ELEMENT) or name in ("before", "after"):
            return None
        else:
            kept.append(text[position : found.start()])
        position = end
    kept.append(text[position:])
    return "".join(kept)


def _closing(text: str, start: int) -> int:
    """The index after the parenthesis that closes the one at ``start`` (or the end)."""
    depth = 0
    for at in range(start, len(text)):
        depth += (text[at] == "(") - (text[at] == ")")
        if depth == 0:
            return at + 1
    return len(text)


def _compound(text: str) -> Selector | None:
    """``text`` as one compound selector, or None when it holds a part we cannot evaluate."""
    tag, classes, ids = "*", set(), set()
    attrs: list[tuple[str, str, str, bool]] = []
    any_of: list[tuple[Selector, ...]] = []
    position = 0
    while position < len(text):
        part = _PART.match(text, position)
        if part is None:
            return None
        position = part.end()
        if part["tag"] is not None:
            if part.start() != 0:
                return None  # a tag only leads
            tag = part["tag"]
        elif part["cls"] is not None:
            classes.add(part["cls"])
        elif part["id"] is not None:
            ids.add(part["id"])
        elif part["attr"] is not None:
            value = (part["val"] or "").strip("\"'")
            attrs.append((part["attr"], part["op"] or "", value, True))
        elif part["pseudo"] is not None:
            alternatives = [_without_pseudo(alt.strip()) for alt in _top_level(part["inner"], ",")]
            inner = [_compound(alt) if alt is not None else None for alt in alternatives]
            if any(found is None for found in inner):
                return None
            any_of.append(tuple(found for found in inner if found is not None))
        else:  # :link, :any-link: an a or area with an href
            attrs.append(("href", "", "", False))
    return Selector(tag, frozenset(classes), frozenset(ids), tuple(attrs), tuple(any_of))


def _top_level(text: str, separators: str) -> list[str]:
    """``text`` split at ``separators`` outside brackets and parentheses (``:is(.a, .b)``,
    ``[title~=a]`` stay whole); empty pieces dropped, but never all of them."""
    pieces: list[str] = []
    depth = start = 0
    for at, char in enumerate(text):
        depth += (char in "([") - (char in ")]")
        if depth == 0 and char in separators:
            pieces.append(text[start:at])
            start = at + 1
    pieces.append(text[start:])
    return [piece for piece in pieces if piece.strip()] or [""]


_DATA_LINK: Final = re.compile(
    r"<link\b[^>]{0,2000}?\bhref\s*=\s*[\"']?data:text/css(;base64)?,([^\"'>\s]{0,200000})", re.I
)


def _data_sheets(page: str) -> list[str]:
    """Stylesheets a page carries inline as ``<link href="data:text/css,...">``."""
    sheets: list[str] = []
    for found in _DATA_LINK.finditer(page):
        if len(sheets) >= 50:
            break
        data = found.group(2)
        try:
            text = (
                base64.b64decode(data).decode("utf-8", "replace")
                if found.group(1)
                else unquote(data)
            )
        except (binascii.Error, ValueError):
            continue
        sheets.append(text[:200_000])
    return sheets


def style_blocks(page: str) -> list[str]:
    """The bodies of the page's ``<style>`` elements (at most 200,000 characters each; an
    unclosed one runs to the end), found with plain searches: linear on any page, and the
    stylesheets it links as ``data:`` URLs."""
    lowered, position = page.lower(), 0
    blocks: list[str] = _data_sheets(page)
    while (start := lowered.find("<style", position)) >= 0 and len(blocks) < 200:
        opened = lowered.find(">", start)
        if opened < 0:
            break
        end = lowered.find("</style", opened)
        end = len(page) if end < 0 else end
        blocks.append(page[opened + 1 : min(end, opened + 1 + 200_000)])
        position = end
    return blocks


@dataclass(frozen=True)
class Rule:
    """One selector of a style rule, its declarations (normalised), whether they hide
    alone, and its place in the page (rules apply in that order)."""

    selector: Selector
    style: str
    hides: bool
    order: int


class StyleSheet:
    """A page's rules filed by :meth:`Selector.key`."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self._buckets: dict[tuple[str, str], list[Rule]] = {}
        for rule in rules:
            self._buckets.setdefault(rule.selector.key(), []).append(rule)

    @classmethod
    def of_page(cls, page: str) -> StyleSheet:
        rules: list[Rule] = []
        for block in style_blocks(page[:2_000_000]):
            for found in _RULE.finditer(normalise(block)):
                style = found.group(2)
                if not _RELEVANT.search(style):
                    continue
                alone = hides(style)
                for selector in _top_level(found.group(1), ","):
                    last = _without_pseudo(_top_level(selector.strip(), " >+~")[-1].strip())
                    compound = _compound(last) if last is not None else None
                    if compound is not None:
                        rules.append(Rule(compound, style, alone, len(rules)))
                    if len(rules) >= MAX_RULES:
                        return cls(rules)
        return cls(rules)

    def matching(self, tag: str, attrs: dict[str, str], budget: WorkBudget) -> list[Rule]:
        """The rules that match an element, in page order; each test is paid for."""
        keys = [("any", ""), ("tag", tag), ("id", attrs.get("id", "").lower())]
        keys += [("class", name) for name in set(attrs.get("class", "").lower().split())]
        keys += [("attr", name) for name in attrs]
        candidates = [rule for key in keys for rule in self._buckets.get(key, ())]
        budget.spend(1 + RULE_TEST * len(candidates))
        found = [rule for rule in candidates if rule.selector.matches(tag, attrs)]
        return sorted(found, key=lambda rule: rule.order)
