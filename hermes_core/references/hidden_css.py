"""Whether CSS declarations hide the text they style, so ``@url:`` does not attach it.

Why: a page can keep words from its visitors with many tricks besides ``display:none``: a
zero font (``font:0/0 a``, ``font-size:calc(0px)``), a shrunk or off-screen box
(``transform:scale(0.001)``, ``left:-9999px``, ``text-indent:-9999px``), a clipped one
(``clip:rect(0 0 0 0)``, ``clip-path:inset(50%)``, a zero-size ``polygon``), a zero box
with its overflow hidden, no opacity, or text the colour of its background. A model reading
the markup would follow such words; a browser would not show them, so neither do we. Values
are normalised first (comments out, CSS escapes decoded: ``disp\\6c ay``), so spelling a
property another way does not slip past. The test is generous: hiding a visible line costs
the user little, attaching a hidden order can steer the model.
"""

from __future__ import annotations

import math
import re
from typing import Final

from hermes_core.references.css_colour import PAGE, Colour, colour_in, invisible, parse_colour

__all__ = ["background_of", "declarations", "hides", "normalise"]

_ESCAPE: Final = re.compile(r"\\(?:([0-9a-fA-F]{1,6})[ \t\r\n\f]?|(.))", re.S)
_NUMBER: Final = re.compile(r"([+-]?(?:\d{1,9}(?:\.\d{0,9})?|\.\d{1,9}))([a-z%]{0,4})")
_FUNCTION: Final = re.compile(r"([a-z0-9-]{1,20})\(([^()]{0,300})\)")
#: Below these a font is unreadable: a pixel (or point) for absolute units, a tenth of the
#: parent's for relative ones; viewport units below a tenth of a percent.
_TINY_FONT: Final = {
    "px": 1.0, "pt": 1.0, "pc": 0.1, "mm": 0.3, "q": 1.2, "cm": 0.03, "in": 0.01,
    "em": 0.1, "rem": 0.1, "ex": 0.2, "ch": 0.2, "cap": 0.15, "ic": 0.1, "lh": 0.1,
    "%": 10.0, "vw": 0.1, "vh": 0.1, "vmin": 0.1, "vmax": 0.1,
}  # fmt: skip
_OFF_SCREEN: Final = frozenset(
    {"left", "top", "right", "bottom", "inset", "text-indent", "margin-left", "margin-top",
     "translate"}
)  # fmt: skip
_BOXES: Final = frozenset(
    {"height", "width", "max-height", "max-width", "block-size", "inline-size",
     "max-block-size", "max-inline-size"}
)  # fmt: skip


def _unescape(match: re.Match[str]) -> str:
    if match.group(1):
        code = int(match.group(1), 16)
        return chr(code) if 0 < code < 0x110000 else "\ufffd"
    return match.group(2)


def _uncommented(css: str) -> str:
    """``css`` with each ``/* ... */`` (an unclosed one runs to the end) as a space."""
    kept: list[str] = []
    position = 0
    while (start := css.find("/*", position)) >= 0:
        kept.append(css[position:start])
        end = css.find("*/", start + 2)
        position = len(css) if end < 0 else end + 2
        kept.append(" ")
    kept.append(css[position:])
    return "".join(kept)


def normalise(css: str) -> str:
    """``css`` lower-cased with comments removed and escapes decoded (``\\30 px`` -> ``0px``)."""
    return _ESCAPE.sub(_unescape, _uncommented(css[:100_000])).lower()


_VAR: Final = re.compile(r"var\(\s*(--[\w-]{1,100})\s*(?:,([^()]{0,200}))?\)")


def declarations(style: str) -> dict[str, str]:
    """Property -> value (the last one set wins), with ``var(--x)`` replaced by the custom
    property's value in the same list (or the fallback): ``--z:0px;font-size:var(--z)``."""
    out: dict[str, str] = {}
    for part in normalise(style).split(";")[:200]:
        name, colon, value = part.partition(":")
        if colon:
            out[name.strip()] = " ".join(value.replace("!important", "").split())
    for name, value in out.items():
        resolved = value
        for _ in range(3):  # a custom property may name another
            if "var(" not in resolved:
                break
            resolved = _VAR.sub(lambda m: out.get(m.group(1), (m.group(2) or "").strip()), resolved)
        out[name] = resolved[:2000]
    return out


def _numbers(value: str) -> list[tuple[float, str]]:
    return [(float(n), unit) for n, unit in _NUMBER.findall(value)[:40]]


def _tiny_font(value: str) -> bool:
    """A font size (``0``, ``1px``, ``0.01em``, ``calc(0px)``, ``min(0px, 2em)``) too small to
    read: for a function, when every number in it is zero, or ``min`` holds a tiny one."""
    found = _numbers(value)
    if not found:
        return False
    if value.startswith("calc("):
        return _zero_sum(value[5:].rstrip(")"))
    if value.startswith(("clamp(", "max(")):
        return all(number == 0 for number, _ in found)
    sizes = found if value.startswith("min(") else found[:1]
    return any(
        number <= 0 or number < _TINY_FONT.get(unit, 0.0) or (unit == "px" and number <= 1)
        for number, unit in sizes
    )


def _zero_sum(expression: str) -> bool:
    """Whether a ``calc()`` body is zero for sure: every term (split at " + " / " - ") has a
    zero factor (``0 * 1em``, ``0px``); anything else counts as not zero."""
    for term in re.split(r"\s[+-]\s", expression[:300]):
        factors = term.split("/")[0].split("*")
        if not any((n := _numbers(f.strip())) and n[0][0] == 0 for f in factors):
            return False
    return True


def _font_shorthand(value: str) -> bool:
    """``font: 0/0 a`` or ``font: bold 0.1px serif``: the size is the token with a unit (or a
    bare 0) before any ``/line-height``."""
    for token in value.split(" "):
        size = token.split("/", 1)[0]
        match = _NUMBER.fullmatch(size)
        if match and (match.group(2) or float(match.group(1)) == 0):
            return _tiny_font(size)
    return False


def _shrunk(value: str) -> bool:
    """A transform, clip or clip-path that leaves (almost) nothing to see."""
    for name, args in _FUNCTION.findall(value):
        numbers = _numbers(args)
        if name.startswith("scale") and any(_tiny_factor(n, unit) for n, unit in numbers):
            return True
        if name in ("rotatex", "rotatey") and numbers and abs(_cosine(*numbers[0])) < 0.05:
            return True  # turned edge-on
        if name.startswith("translate") and any(_far(n, unit) for n, unit in numbers):
            return True
        if name == "rect":
            return _empty_rect(args)
        if name == "inset" and numbers and numbers[0][1] == "%" and numbers[0][0] >= 50:
            return True
        if name in ("circle", "ellipse") and numbers and numbers[0][0] <= 0:
            return True
        if name == "polygon":
            points = [_numbers(point) for point in args.split(",")]
            xs = {point[0] for point in points if len(point) == 2}
            ys = {point[1] for point in points if len(point) == 2}
            return len(xs) <= 1 or len(ys) <= 1
        if name == "matrix" and len(numbers) == 6 and (numbers[0][0] == 0 or numbers[3][0] == 0):
            return True
    return False


def _tiny_factor(number: float, unit: str) -> bool:
    """A scale or zoom factor (``0.1``, ``10%``) that leaves text too small to read."""
    return abs(number) <= (15.0 if unit == "%" else 0.15)


def _cosine(number: float, unit: str) -> float:
    turns = {"deg": 1 / 360, "rad": 1 / (2 * math.pi), "grad": 1 / 400, "turn": 1.0}
    return math.cos(2 * math.pi * number * turns.get(unit, 1 / 360))


def _turned_away(found: dict[str, str]) -> bool:
    """``backface-visibility:hidden`` with a rotation that shows the back face."""
    if found.get("backface-visibility") != "hidden":
        return False
    for name, args in _FUNCTION.findall(found.get("transform", "")):
        numbers = _numbers(args)
        if name in ("rotatex", "rotatey") and numbers and _cosine(*numbers[0]) < 0.05:
            return True
    return False


def _empty_rect(args: str) -> bool:
    """``clip: rect(top right bottom left)`` with no area; ``auto`` is the box's own edge
    (0 for top and left, unbounded for right and bottom)."""
    words = [word for word in re.split(r"[\s,]+", args.strip()) if word][:4]
    if len(words) != 4:
        return False
    edges: list[float] = []
    for at, word in enumerate(words):
        if word == "auto":
            edges.append(0.0 if at in (0, 3) else math.inf)
        elif found := _numbers(word):
            edges.append(found[0][0])
        else:
            return False
    top, right, bottom, left = edges
    return right - left <= 1 or bottom - top <= 1


def _far(number: float, unit: str) -> bool:
    """Whether an offset puts a box off the page: left of or above it, or very far right."""
    if unit in ("px", "pt", ""):
        return number <= -300 or number >= 9999
    if unit in ("%", "vw", "vh", "vmin", "vmax"):
        return number <= -100 or number >= 200
    return number <= -20 or number >= 500  # em, rem, ...


def _masked(value: str) -> bool:
    """A mask whose gradient is transparent at every stop: nothing shows through it."""
    if "gradient(" not in value or "url(" in value:
        return False
    stops = re.findall(r"#[0-9a-f]{3,8}\b|(?:rgba?|hsla?)\([^()]{0,80}\)|[a-z]+", value)
    colours = [found for stop in stops if (found := parse_colour(stop)) is not None]
    return bool(colours) and all(colour[3] <= 0.1 for colour in colours)


def background_of(found: dict[str, str], behind: Colour | None) -> Colour | None:
    """What text of an element with declarations ``found`` is painted on: its own opaque
    background colour, else what is ``behind`` it; None (unknown) over an image."""
    value = found.get("background-color") or found.get("background") or ""
    if "url(" in value or "gradient(" in value or "url(" in found.get("background-image", ""):
        return None  # text over an image is not judged
    own = colour_in(value)
    return own if own is not None and own[3] > 0.5 else behind


def _hides(
    name: str, value: str, found: dict[str, str], overflow_hidden: bool, behind: Colour | None
) -> bool:
    numbers = _numbers(value)
    if name == "display":
        return value == "none"
    if name in ("visibility", "content-visibility"):
        return value in ("hidden", "collapse")
    if name == "font-size":
        return _tiny_font(value)
    if name == "font":
        return _font_shorthand(value)
    if name == "opacity" and numbers:
        number, unit = numbers[0]
        return number <= (5.0 if unit == "%" else 0.05)
    if name == "filter":
        return bool(re.search(r"opacity\(\s*0*(?:\.0{0,6})?%?\s*\)", value))
    if name in ("color", "-webkit-text-fill-color"):
        text = parse_colour(value)
        background = background_of(found, behind)
        if text is None:
            return False
        return text[3] <= 0.1 or (background is not None and invisible(text, background))
    if name in ("scale", "zoom") and numbers:
        return any(_tiny_factor(n, unit) for n, unit in numbers)
    if name in ("mask", "mask-image", "-webkit-mask", "-webkit-mask-image"):
        return _masked(value)
    if name == "backface-visibility":
        return _turned_away(found)
    if name == "text-indent" and overflow_hidden and numbers:
        number, unit = numbers[0]
        return number >= {"%": 100.0, "px": 300.0, "pt": 300.0}.get(unit, 20.0)
    if name in ("transform", "clip", "clip-path"):
        return _shrunk(value)
    if name in _BOXES and numbers and overflow_hidden:
        return numbers[0][0] <= 1
    if name in _OFF_SCREEN and numbers:
        return any(_far(number, unit) for number, unit in numbers)
    return False


def hides(style: str, behind: Colour | None = PAGE) -> bool:
    """Whether a CSS declaration list (a ``style`` attribute, a rule's body) hides its text;
    ``behind`` is the background it sits on (the parent's; a white page by default)."""
    found = declarations(style)
    overflow_hidden = any(
        word in ("hidden", "clip")
        for key in ("overflow", "overflow-x", "overflow-y", "overflow-block", "overflow-inline")
        for word in found.get(key, "").split(" ")
    ) or any(word in ("paint", "strict", "content") for word in found.get("contain", "").split())
    return any(_hides(name, value, found, overflow_hidden, behind) for name, value in found.items())
