"""The ``[ref R]`` tags a session's stand-ins carry (docs/recall.md), for tests that compare a
session's output with the library's: the library has no store, so it writes none."""

from __future__ import annotations

import json
import re
from typing import Any

TAG = re.compile(r" \[ref [0-9:,\-]+\]")


def without_refs(value: Any) -> Any:
    """``value`` with every reference tag taken out of its strings (a copy)."""
    if isinstance(value, str):
        return TAG.sub("", value)
    if isinstance(value, list):
        return [without_refs(v) for v in value]
    if isinstance(value, dict):
        return {k: without_refs(v) for k, v in value.items()}
    return value


def has_refs(value: Any) -> bool:
    """Whether any string in ``value`` carries a reference tag."""
    return bool(TAG.search(json.dumps(value, ensure_ascii=False)))
