"""Whether an HTML element is hidden from a reader, so ``@url:`` does not attach its text.

Why: a page can carry words no visitor sees (``display:none``, the ``hidden`` attribute,
``aria-hidden``, a closed ``<details>``, a zero-size or transparent font, text pushed
off-screen: :mod:`hermes_core.references.hidden_css`) and that only a model reading the
markup would follow. A browser would not show them, so neither do we.

The page's own ``<style>`` blocks count too, for the selectors we can evaluate on one element:
a tag, ``.class``, ``#id``, ``[attribute]`` (``=``, ``~=``, ``^=``, ``$=``, ``*=``, ``|=``),
``*``, ``:is()``/``:where()`` of those, ``:link``/``:any-link``; only the last compound of a
selector counts (``.a .b`` hides every ``.b``: more than a browser, never less). A rule with
a selector we cannot evaluate on one element (``:not()``, ``:nth-child()``, ``:has()``, ...)
hides nothing: guessing would hide visible text. External stylesheets are not fetched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from hermes_core.references.hidden_css import hides, normalise

__all__ = [
    "HIDDEN_TAGS",
    "RAW_TEXT_TAGS",
    "Selector",
    "hidden_by_attributes",
    "hides",
    "hiding_rules",
]

#: Elements whose content is never shown as text (or is not the page's text).
HIDDEN_TAGS: Final = frozenset(
    {
        "script", "style", "noscript", "template", "svg", "head", "iframe", "object",
        "embed", "math", "canvas", "datalist", "dialog", "select", "textarea", "noembed",
        "noframes", "xmp", "plaintext",
    }
)  # fmt: skip
#: Elements whose content is text, not markup: no tag inside them opens or closes anything
#: (``<div hidden><textarea></div>PAYLOAD</textarea></div>`` keeps PAYLOAD hidden).
RAW_TEXT_TAGS: Final = frozenset(
    {
        "script", "style", "textarea", "title", "xmp", "noscript", "plaintext", "iframe",
        "noembed", "noframes",
    }
)  # fmt: skip

_RULE: Final = re.compile(r"([^{}]{1,400})\{([^{}]{0,2000})\}")
_IDENT: Final = r"-?[a-z_][\w-]{0,100}"
_PART: Final = re.compile(
    rf"(?P<tag>{_IDENT}|\*)"
    rf"|\.(?P<cls>{_IDENT})|#(?P<id>-?[\w-]{{1,100}})"
    rf"|\[\s*(?P<attr>{_IDENT})\s*(?:(?P<op>[~^$*|]?=)\s*"
    r"(?P<val>\"[^\"]{0,200}\"|'[^']{0,200}'|[\w-]{1,200})\s*[is]?\s*)?\]"
    r"|:(?P<pseudo>is|where)\((?P<inner>[^()]{1,400})\)"
    r"|:(?P<link>link|any-link)(?![\w-])"
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
            inner = [_compound(alt.strip()) for alt in _top_level(part["inner"], ",")]
            if any(found is None for found in inner):
                return None
            any_of.append(tuple(found for found in inner if found is not None))
        else:  # :link, :any-link: an a or area with an href
            attrs.append(("href", "", "", False))
    if not text:
        return None
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


def _style_blocks(page: str) -> list[str]:
    """The bodies of the page's ``<style>`` elements (at most 200,000 characters each; an
    unclosed one runs to the end), found with plain searches: linear on any page."""
    lowered, position = page.lower(), 0
    blocks: list[str] = []
    while (start := lowered.find("<style", position)) >= 0 and len(blocks) < 200:
        opened = lowered.find(">", start)
        if opened < 0:
            break
        end = lowered.find("</style", opened)
        end = len(page) if end < 0 else end
        blocks.append(page[opened + 1 : min(end, opened + 1 + 200_000)])
        position = end
    return blocks


def hiding_rules(html: str) -> tuple[Selector, ...]:
    """The selectors a page's own ``<style>`` blocks hide (``.x{display:none}``): for each
    rule that hides, the last compound of each of its selectors we can evaluate."""
    found: list[Selector] = []
    for block in _style_blocks(html[:2_000_000]):
        for rule in _RULE.finditer(normalise(block)):
            if not hides(rule.group(2)):
                continue
            for selector in _top_level(rule.group(1), ","):
                last = _top_level(selector.strip(), " >+~")[-1]
                if (compound := _compound(last)) is not None:
                    found.append(compound)
                if len(found) >= 2000:
                    return tuple(found)
    return tuple(found)


def hidden_by_attributes(
    tag: str, attrs: list[tuple[str, str | None]], rules: tuple[Selector, ...]
) -> bool:
    """Whether an element's own attributes hide it: ``hidden``, ``aria-hidden="true"``,
    ``type="hidden"``, a hiding ``style``, or a rule of the page's stylesheet."""
    values = {name: (raw or "").strip() for name, raw in attrs}
    if "hidden" in values or values.get("aria-hidden", "").lower() == "true":
        return True
    if values.get("type", "").lower() == "hidden":
        return True
    if "style" in values and hides(values["style"]):
        return True
    return any(rule.matches(tag, values) for rule in rules)
