"""Read a YAML config file into plain data plus the line of every key.

Why compose and load separately: ``yaml.safe_load`` gives values but forgets where they were;
the node tree remembers lines, so every configuration error can name ``file:line``. The node
tree is also where alias bombs ("billion laughs") are caught before anything walks them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_core.errors import ConfigError

#: A config file is small; more values than this after alias expansion is an attack or a bug.
MAX_EXPANDED_NODES = 10_000


def read_yaml_mapping(path: Path) -> tuple[Mapping[str, Any], dict[str, int]]:
    """``(data, {dotted key: line})`` of a YAML file whose top level is a mapping."""
    import yaml

    text = _read_text(path)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise _syntax_error(path, exc) from None
    if node is None:
        return {}, {}
    if _expanded_size(node, {}) > MAX_EXPANDED_NODES:
        raise ConfigError(
            f"{path}: expands to more than {MAX_EXPANDED_NODES:,} values through YAML aliases; "
            "write the values out instead of nesting anchors"
        )
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise _syntax_error(path, exc) from None
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}:1: the config must be a mapping of sections (model:, ...)")
    lines: dict[str, int] = {}
    duplicates: list[str] = []
    _index_lines(node, "", lines, duplicates, set())
    if duplicates:
        raise ConfigError(
            "\n".join(f"{path}:{d}: duplicate key; keep one of them" for d in duplicates)
        )
    return data, lines


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: config file not found; check --config or $HERMES_HOME"
        ) from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, expected a YAML config file") from None
    except PermissionError:
        raise ConfigError(f"{path}: permission denied; make the file readable") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 text (bad byte at offset {exc.start}); save it as UTF-8"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc.strerror}") from None


def _syntax_error(path: Path, exc: Exception) -> ConfigError:
    mark = getattr(exc, "problem_mark", None)
    where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return ConfigError(f"{path}{where}: invalid YAML: {problem}")


def _expanded_size(node: Any, memo: dict[int, int]) -> int:
    """How many nodes the tree has once aliases are expanded, computed once per node."""
    import yaml

    key = id(node)
    if key in memo:
        return memo[key]
    memo[key] = 1  # a cycle counts once instead of recursing forever
    if isinstance(node, yaml.MappingNode):
        size = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    elif isinstance(node, yaml.SequenceNode):
        size = 1 + sum(_expanded_size(item, memo) for item in node.value)
    else:
        size = 1
    memo[key] = min(size, MAX_EXPANDED_NODES + 1)
    return memo[key]


def _index_lines(
    node: Any, prefix: str, lines: dict[str, int], duplicates: list[str], seen_nodes: set[int]
) -> None:
    import yaml

    if not isinstance(node, yaml.MappingNode) or id(node) in seen_nodes:
        return
    seen_nodes.add(id(node))
    seen_keys: set[str] = set()
    for key_node, value_node in node.value:
        key = str(key_node.value)
        dotted = f"{prefix}.{key}" if prefix else key
        if dotted in seen_keys:
            duplicates.append(f"{key_node.start_mark.line + 1}: {dotted}")
        seen_keys.add(dotted)
        lines[dotted] = key_node.start_mark.line + 1
        _index_lines(value_node, dotted, lines, duplicates, seen_nodes)
