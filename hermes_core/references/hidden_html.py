"""Whether an HTML element is hidden from a reader, so ``@url:`` does not attach its text.

Why: a page can carry words no visitor sees (``display:none``, the ``hidden`` attribute,
``aria-hidden``, a zero-size or transparent font, text pushed off-screen) and that only a
model reading the markup would follow. A browser would not show them, so neither do we. The
test is deliberately generous: hiding a visible line costs the user little, attaching a
hidden order can steer the model.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["HIDDEN_TAGS", "hidden_by_attributes", "hiding_rules"]

#: Elements whose content is never shown as text (or is not the page's text).
HIDDEN_TAGS: Final = frozenset(
    {
        "script", "style", "noscript", "template", "svg", "head", "iframe", "object",
        "embed", "math", "canvas", "datalist", "dialog", "select", "textarea",
    }
)  # fmt: skip
_LENGTH: Final = re.compile(r"^([+-]?(?:\d{1,9}(?:\.\d{0,9})?|\.\d{1,9}))\s{0,3}([a-z%]{0,4})")
_ZERO_ALPHA: Final = re.compile(
    r"^(?:transparent|#[0-9a-f]{6}00|#[0-9a-f]{3}0"
    r"|(?:rgba?|hsla?)\([^)]{0,60}[,/]\s{0,3}(?:0{1,6}(?:\.0{0,6})?|\.0{1,6})%?\s{0,3}\))"
)
_SHRUNK: Final = re.compile(
    r"^(?:scale[xy]?\(\s{0,3}0{1,6}(?:\.0{0,6})?\s{0,3}[,)]|rect\(\s{0,3}0"
    r"|inset\(\s{0,3}(?:50|100)%|circle\(\s{0,3}0)"
)
#: Below these a text is unreadable: px (and pt) for fonts, em/rem/% as shares of the parent.
_TINY_FONT: Final = {"px": 1.0, "pt": 1.0, "em": 0.1, "rem": 0.1, "%": 10.0}
_OFF_SCREEN: Final = frozenset({"left", "top", "right", "text-indent", "margin-left", "margin-top"})


def _length(value: str) -> tuple[float, str] | None:
    match = _LENGTH.match(value)
    return (float(match.group(1)), match.group(2)) if match else None


def _declarations(style: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in style.lower().split(";")[:200]:
        name, colon, value = part.partition(":")
        if colon:
            out[name.strip()] = value.replace("!important", "").strip()
    return out


def _hides(name: str, value: str, overflow_hidden: bool) -> bool:
    length = _length(value)
    if name == "display":
        return value == "none"
    if name in ("visibility", "content-visibility"):
        return value in ("hidden", "collapse")
    if name == "font-size" and length:
        number, unit = length
        return number <= 0 or number < _TINY_FONT.get(unit, 0.0) or (unit == "px" and number <= 1)
    if name == "opacity" and length:
        number, unit = length
        return number <= (5.0 if unit == "%" else 0.05)
    if name == "color":
        return bool(_ZERO_ALPHA.match(value))
    if name in ("transform", "clip", "clip-path"):
        return bool(_SHRUNK.match(value))
    if name in ("height", "width", "max-height", "max-width") and length and overflow_hidden:
        return length[0] <= 1
    if name in _OFF_SCREEN and length:
        number, unit = length
        return number <= (-999 if unit in ("px", "pt", "") else -50)
    return False


def hides(style: str) -> bool:
    """Whether a CSS declaration list hides the text it styles."""
    found = _declarations(style)
    overflow_hidden = found.get("overflow", "").split(" ")[0] in ("hidden", "clip")
    return any(_hides(name, value, overflow_hidden) for name, value in found.items())


_STYLE_BLOCK: Final = re.compile(r"<style\b[^>]{0,400}>(.{0,200000}?)</style\s{0,3}>", re.I | re.S)
_RULE: Final = re.compile(r"([^{}]{1,400})\{([^{}]{0,2000})\}")
_COMMENT: Final = re.compile(r"/\*.{0,20000}?\*/", re.S)
#: The last simple selector of a selector: ``div .note > span.x#y`` -> ``span.x#y``.
_NAMES: Final = re.compile(r"([.#])(-?[A-Za-z_][\w-]{0,100})")


def hiding_rules(html: str) -> tuple[frozenset[str], frozenset[str]]:
    """The classes and ids a page's own ``<style>`` blocks hide (``.x{display:none}``).

    Only the last part of each selector counts (``.a .b`` hides ``.b``): more than a browser
    would hide, never less for these simple rules."""
    classes: set[str] = set()
    ids: set[str] = set()
    for block in _STYLE_BLOCK.finditer(html[:2_000_000]):
        css = _COMMENT.sub(" ", block.group(1))
        for rule in _RULE.finditer(css):
            if not hides(rule.group(2)):
                continue
            for selector in rule.group(1).split(","):
                last = re.split(r"[\s>+~]", selector.strip())[-1]
                for kind, name in _NAMES.findall(last):
                    (classes if kind == "." else ids).add(name.lower())
    return frozenset(classes), frozenset(ids)


def hidden_by_attributes(
    attrs: list[tuple[str, str | None]], classes: frozenset[str], ids: frozenset[str]
) -> bool:
    """Whether an element's own attributes hide it: ``hidden``, ``aria-hidden="true"``,
    a hiding ``style``, or a class or id the page's stylesheet hides."""
    for name, raw in attrs:
        value = (raw or "").strip().lower()
        if name == "hidden" or (name == "aria-hidden" and value == "true"):
            return True
        if name == "style" and hides(value):
            return True
        if name == "class" and classes and any(c in classes for c in value.split()):
            return True
        if name == "id" and value in ids:
            return True
        if name == "type" and value == "hidden":
            return True
    return False
