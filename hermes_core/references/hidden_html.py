"""Whether an HTML element is hidden from a reader, so ``@url:`` does not attach its text.

Why: a page can carry words no visitor sees (``display:none``, the ``hidden`` attribute,
``aria-hidden``, a ``popover`` not shown, a closed ``<details>``, a zero-size or transparent
font, text pushed off-screen: :mod:`hermes_core.references.hidden_css`) and that only a
model reading the markup would follow. A browser would not show them, so neither do we.

The page's own ``<style>`` rules count too (:mod:`hermes_core.references.css_rules`): the
declarations of every rule that matches an element are merged, in page order, with its
``style`` attribute last, and the element is hidden when one rule alone hides it or the
merged declarations do (``.a{height:0}`` plus ``.a{overflow:hidden}``). As a browser does,
an attribute given twice counts the first time (``style="display:none" style="color:red"``).
External stylesheets are not fetched.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from hermes_core.references.css_colour import PAGE, Colour
from hermes_core.references.css_rules import StyleSheet
from hermes_core.references.hidden_css import background_of, declarations, hides
from hermes_core.references.html_work import WorkBudget

__all__ = [
    "HIDDEN_TAGS",
    "RAW_TEXT_TAGS",
    "Colour",
    "Inherited",
    "StyleSheet",
    "attribute_values",
    "hidden_by_attributes",
    "hides",
]

#: Elements whose content is never shown as text (or is not the page's text): media
#: fallback, gauges, ruby parentheses and later ``<title>`` elements included.
HIDDEN_TAGS: Final = frozenset(
    {
        "script", "style", "noscript", "template", "svg", "head", "iframe", "object",
        "embed", "math", "canvas", "datalist", "dialog", "select", "textarea", "noembed",
        "noframes", "xmp", "plaintext", "video", "audio", "meter", "progress", "rp", "title",
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


def attribute_values(attrs: list[tuple[str, str | None]]) -> dict[str, str]:
    """An element's attributes by name; the first of a repeated one wins, as in a browser."""
    values: dict[str, str] = {}
    for name, raw in attrs:
        values.setdefault(name, (raw or "").strip())
    return values


def _presentational(tag: str, values: dict[str, str]) -> str:
    """Old colour attributes as declarations: ``<font color=#fff>``, ``bgcolor``."""
    out = ""
    if tag == "font" and "color" in values:
        out += f"color:{values['color']};"
    if "bgcolor" in values:
        out += f"background-color:{values['bgcolor']};"
    return out


class Inherited(NamedTuple):
    """What an element's content takes from it: the background it sits on (None over an
    image) and its text colour ("" when no page rule set one)."""

    background: Colour | None = PAGE
    colour: str = ""


def hidden_by_attributes(
    tag: str,
    values: dict[str, str],
    sheet: StyleSheet,
    budget: WorkBudget,
    parent: Inherited,
) -> tuple[bool, Inherited]:
    """Whether an element's own attributes hide it, and what its content inherits (from
    ``parent`` unless it sets its own). Hidden by ``hidden``, ``aria-hidden="true"``,
    ``popover``, ``type="hidden"``, a hiding ``style``, or the page's stylesheet rules
    (alone, or merged with each other, the inherited colour first and the ``style``
    attribute last)."""
    if "hidden" in values or "popover" in values:
        return True, parent
    if values.get("aria-hidden", "").lower() == "true":
        return True, parent
    if values.get("type", "").lower() == "hidden":
        return True, parent
    inline = _presentational(tag, values) + values.get("style", "")
    matched = sheet.matching(tag, values, budget)
    if any(rule.hides for rule in matched):
        return True, parent
    own = ";".join([*(rule.style for rule in matched), inline])
    if not own.strip(" ;"):
        return False, parent
    merged = f"color:{parent.colour};{own}" if parent.colour else own
    budget.spend(len(merged) // 16)
    found = declarations(merged)
    inherited = Inherited(background_of(found, parent.background), found.get("color", ""))
    return hides(merged, parent.background), inherited
