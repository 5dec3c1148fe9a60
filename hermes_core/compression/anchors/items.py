"""The anchor ledger's categories, their labels and bounds, and how one item is cleaned,
keyed and split for grouping.

Why a module of its own: the ledger type (:mod:`.ledger`), its render plan
(:mod:`.render`), extraction (:mod:`.message`) and the parser
(:mod:`.recognisers`) all need these facts, and none of them may import another's machinery.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Final

from hermes_core.redact import redact

__all__ = [
    "ANCHOR_HEADER",
    "DEFAULT_LEDGER_CHARS",
    "failure_command",
    "key_chars",
    "ledger_bound",
]


ANCHOR_HEADER: Final = "## Anchors (carried verbatim)"
#: Render bound. 8,000 characters (about 2,000 tokens) holds every path and command of the
#: 200-turn sample session one per line, and more of them grouped (see ``render``).
DEFAULT_LEDGER_CHARS: Final = 8000

_FIELDS: Final = (
    "paths", "commands", "urls", "errors", "identifiers", "asks", "edited", "failures",
    "rules", "decisions",
)  # fmt: skip
_LABELS: Final = {
    "paths": "Files:",
    "commands": "Commands:",
    "urls": "URLs:",
    "errors": "Errors:",
    "identifiers": "Identifiers:",
    "asks": "User asks:",
    "edited": "Files written or edited:",
    "failures": "Failed commands:",
    "rules": "User rules (the user's words):",
    "decisions": "Decisions and figures (the assistant's words):",
}
#: Labels of grouped sections: each says how its lines read.
_GROUPED: Final = {
    "edited": "Files written or edited (dir/{a, b} is dir/a, dir/b):",
    "paths": "Files (dir/{a, b} is dir/a, dir/b):",
    "commands": "Commands (`· args` under `- prog` is `prog args`):",
    "failures": "Failed commands (`· args` under `- prog` is `prog args`):",
}
_LABEL_FIELD: Final = {label: name for name, label in _LABELS.items()} | {
    label: name for name, label in _GROUPED.items()
}
_LABEL_CHARS: Final = {name: len(label) + 1 for name, label in _LABELS.items()}
_GROUPED_CHARS: Final = {name: len(label) + 1 for name, label in _GROUPED.items()}
_ORDER: Final = (
    "rules", "edited", "paths", "commands", "failures", "decisions", "urls", "errors",
    "identifiers", "asks",
)  # fmt: skip
_ITEM_CHARS: Final = dict(
    zip(_FIELDS, (300, 300, 300, 200, 80, 200, 300, 560, 300, 200), strict=True)
)
_MAX_ITEMS: Final = dict(
    zip(_FIELDS, (1000, 1000, 300, 300, 300, 200, 1000, 300, 60, 16), strict=True)
)
#: the user's rules and the assistant's decisions: rendered in a room of their own
_KEY: Final = ("rules", "decisions")
#: that room, as a share of the ledger's bound (on top of it: they take nothing from paths)
_KEY_SHARE: Final = 5

_WS = re.compile(r"\s+")
_NOTE = re.compile(r"\(\d{1,9} older omitted\)")
_GROUP_LINE = re.compile(r"(.*/)\{([^{}]+)\}")
_PYTHON = re.compile(r"python[\d.]{0,8}")
_SUBWORD = re.compile(r"[a-z][a-z0-9_:-]{0,30}")
#: Programs whose second word names what they do (``git diff``, ``npm test``).
_SUBCOMMANDS: Final = frozenset(
    re.findall(
        r"\S+",
        "git pip pip3 uv poetry npm yarn pnpm bun deno cargo go docker kubectl helm terraform "
        "apt apt-get brew dotnet gh conda mvn gradle rustup systemctl alembic npx",
    )
)


def _cut_head(text: str, n: int) -> str:
    """The first ``n`` characters, ending at whitespace when one is near, so no token is split."""
    if len(text) <= n:
        return text
    for i in range(n - 1, max(n - 400, 0), -1):
        if text[i].isspace():
            return text[:i]
    return text[:n]


def _clean(text: str, limit: int) -> str:
    """One redacted line of at most ``limit`` characters (redacted before any cut)."""
    return _clean_head(_cut_head(text, 8 * limit), limit)


@lru_cache(maxsize=4096)  # the same path or command is added many times over a transcript
def _clean_head(text: str, limit: int) -> str:
    text = redact(_WS.sub(" ", text)).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def failure_command(item: str) -> str | None:
    """The command of a failed-command item (``\\`cmd\\` -> exit N: error``), else None."""
    end = item.find("` -> exit ") if item.startswith("`") else -1
    command = item[1:end] if end > 1 else ""
    return command if command and command == command.strip() else None


def _key(name: str, item: str) -> str:
    """What makes two items the same: a failed command is listed once, with its newest error."""
    return (failure_command(item) or item) if name == "failures" else item


def _unique(items: Sequence[Any], name: str) -> list[str]:
    limit = _ITEM_CHARS.get(name, 200)
    seen: dict[str, str] = {}
    for item in items:
        if isinstance(item, str) and (clean := _clean(item, limit)):
            key = _key(name, clean)
            if name == "failures":
                seen.pop(key, None)
            seen.setdefault(key, clean)
    return list(seen.values())


def _path_parts(path: str) -> tuple[str, str] | None:
    """(directory with its slash, base name) of a path a group line can hold, else None."""
    cut = path.rfind("/") + 1
    if cut <= 0 or cut == len(path) or "{" in path or "}" in path or ", " in path[cut:]:
        return None
    return path[:cut], path[cut:]


def _command_parts(command: str) -> tuple[str, str] | None:
    """(program and subcommand, the rest) of a command, else None (nothing after the program:
    ``python -m mod``, ``git sub``, else the first word)."""
    words = command.split(" ", 3)
    cut = 1
    if len(words) > 2 and words[1] == "-m" and _PYTHON.fullmatch(words[0]):
        cut = 3
    elif len(words) > 1 and words[0] in _SUBCOMMANDS and _SUBWORD.fullmatch(words[1]):
        cut = 2
    head = " ".join(words[:cut])
    rest = command[len(head) + 1 :]
    return (head, rest) if rest else None


def key_chars(max_chars: int) -> int:
    """The room of the user's rules and the assistant's decisions, on top of ``max_chars``."""
    return max_chars // _KEY_SHARE


def ledger_bound(max_chars: int = DEFAULT_LEDGER_CHARS) -> int:
    """The most characters ``render(max_chars)`` writes: ``max_chars`` and the key room."""
    return max_chars + key_chars(max_chars)
