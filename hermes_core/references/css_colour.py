"""CSS colours, read well enough to tell text a reader cannot see from its background.

Why: a page can hide words by painting them the colour of what lies behind them, and it
need not do so exactly (``#fefefe`` on white), nor in one notation (``hsl(0,0%,100%)``),
nor on the same element (a parent's background, or the white page itself). Colours are
compared by contrast ratio, as accessibility guidelines measure readability; text below
:data:`INVISIBLE_CONTRAST` or nearly transparent counts as hidden.
"""

from __future__ import annotations

import colorsys
import re
from typing import Final

__all__ = ["INVISIBLE_CONTRAST", "PAGE", "Colour", "colour_in", "invisible", "parse_colour"]

Colour = tuple[float, float, float, float]  # red, green, blue in 0..1, alpha in 0..1
#: What a page is painted on when it says nothing: white.
PAGE: Final[Colour] = (1.0, 1.0, 1.0, 1.0)
#: Contrast ratios below this (1 is none, 21 black on white) count as unreadable.
INVISIBLE_CONTRAST: Final = 1.2
#: Alpha at or below this counts as transparent.
_FAINT: Final = 0.1
_NAMES: Final = {
    "white": "#fff", "black": "#000", "red": "#f00", "lime": "#0f0", "blue": "#00f",
    "green": "#008000", "yellow": "#ff0", "cyan": "#0ff", "aqua": "#0ff", "magenta": "#f0f",
    "fuchsia": "#f0f", "gray": "#808080", "grey": "#808080", "silver": "#c0c0c0",
    "whitesmoke": "#f5f5f5", "snow": "#fffafa", "ivory": "#fffff0", "ghostwhite": "#f8f8ff",
    "azure": "#f0ffff", "mintcream": "#f5fffa", "floralwhite": "#fffaf0",
    "transparent": "#0000",
}  # fmt: skip
_HEX: Final = re.compile(r"#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})")
_FUNCTION: Final = re.compile(r"(rgba?|hsla?)\(([^()]{0,80})\)")
_TOKEN: Final = re.compile(r"#[0-9a-f]{3,8}\b|(?:rgba?|hsla?)\([^()]{0,80}\)|[a-z]+")


def _number(text: str, scale: float) -> float:
    """A channel: a percentage of ``scale``, or a plain number (clamped)."""
    text = text.strip()
    if text.endswith("%"):
        return float(text[:-1]) / 100 * scale
    return float(text.removesuffix("deg"))


def parse_colour(value: str) -> Colour | None:
    """``value`` (lower-cased) as a colour, or None when it is not one we read."""
    value = _NAMES.get(value.strip(), value.strip())
    if (hexed := _HEX.fullmatch(value)) is not None:
        digits = hexed.group(1)
        if len(digits) <= 4:
            digits = "".join(char * 2 for char in digits)
        channels = [int(digits[at : at + 2], 16) / 255 for at in range(0, len(digits), 2)]
        return (channels[0], channels[1], channels[2], channels[3] if len(channels) == 4 else 1)
    if (function := _FUNCTION.fullmatch(value)) is None:
        return None
    parts = [p for p in re.split(r"[\s,/]+", function.group(2).strip()) if p]
    try:
        if function.group(1).startswith("rgb") and len(parts) >= 3:
            red, green, blue = (min(max(_number(p, 255), 0), 255) / 255 for p in parts[:3])
        elif len(parts) >= 3:
            hue = _number(parts[0], 360) / 360 % 1
            # saturation and lightness: "50%", or a bare number out of 100
            sat, light = (_number(p if p.endswith("%") else p + "%", 1) for p in parts[1:3])
            red, green, blue = colorsys.hls_to_rgb(hue, min(max(light, 0), 1), min(max(sat, 0), 1))
        else:
            return None
        alpha = min(max(_number(parts[3], 1), 0), 1) if len(parts) > 3 else 1.0
    except ValueError:
        return None
    return (red, green, blue, alpha)


def colour_in(value: str) -> Colour | None:
    """The first colour among the words of a shorthand (``background: #fff none``)."""
    for token in _TOKEN.findall(value[:400]):
        if (found := parse_colour(token)) is not None:
            return found
    return None


def _luminance(colour: Colour) -> float:
    def linear(channel: float) -> float:
        return channel / 12.92 if channel <= 0.03928 else ((channel + 0.055) / 1.055) ** 2.4

    red, green, blue, _ = colour
    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)


def invisible(text: Colour, background: Colour) -> bool:
    """Whether ``text`` is unreadable on ``background``: nearly transparent, or too close."""
    if text[3] <= _FAINT:
        return True
    lighter, darker = sorted((_luminance(text), _luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05) < INVISIBLE_CONTRAST
