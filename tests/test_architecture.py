"""The layout keeps its promises: floors that only look down, no import cycles, a small root.

The floors are written down in docs/architecture.md; this test is what keeps them true. Every
import counts, including those inside functions and under ``TYPE_CHECKING``: a lazy import
that goes up is still an upward dependency.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "hermes_core"
PLUGINS = PACKAGE.parent / "hermes_plugins"  # the first-party plugins: no floors, no circles

# top-level part of hermes_core (module or package) -> floor; lower floors never import higher
FLOORS: dict[str, int] = {
    "errors": 1,
    "types": 1,
    "markers": 1,
    "redact": 1,
    "secret_shapes": 1,
    "secret_vendors": 1,
    "config": 2,
    "tokens": 2,
    "transcript": 2,
    "formats": 2,
    "llm": 2,
    "provider_kit": 2,
    "hookspecs": 3,
    "plugins": 3,
    "provenance": 3,
    "threats": 4,
    "compression": 4,
    "memory": 4,
    "sessions": 4,
    "skills": 4,
    "references": 4,
    "review": 4,
    "host": 5,
    "lifecycle": 5,
    "evals": 5,
    "cli": 6,
    "testing": 6,
    "docgen": 6,
    "__main__": 6,
}
MAX_ROOT_MODULES = 12
LAZY: dict[str, str] = dict(__import__("hermes_core")._LAZY)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules(package: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(p): p for p in sorted(package.rglob("*.py"))}


def _is_module(dotted: str) -> bool:
    path = PACKAGE.parent / Path(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def imported_names(tree: ast.AST, module: str, *, top_level_only: bool) -> Iterator[str]:
    """The hermes_core modules a module imports (``from x import y`` yields x and x.y)."""
    nodes = tree.body if top_level_only and isinstance(tree, ast.Module) else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                is_package = (PACKAGE.parent / Path(*anchor) / "__init__.py").exists()
                keep = len(anchor) - node.level + (1 if is_package else 0)
                base = ".".join([*anchor[:keep], *([base] if base else [])])
            submodules = [a.name for a in node.names if _is_module(f"{base}.{a.name}")]
            if len(submodules) < len(node.names):  # names defined in base's own body
                yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)
            if base == "hermes_core":  # a lazy public name stands for the module behind it
                yield from (LAZY[a.name] for a in node.names if a.name in LAZY)


def floor_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "hermes_core" or len(parts) == 1:
        return None  # hermes_core/__init__ only names things lazily; outside code is not ours
    return FLOORS.get(parts[1], -1)


def upward_imports(module: str, source: str) -> list[str]:
    """Each import of ``module`` that reaches a higher floor, as 'module -> target (a > b)'."""
    own = floor_of(module)
    if own is None:
        return []
    problems = []
    for target in imported_names(ast.parse(source), module, top_level_only=False):
        theirs = floor_of(target)
        if theirs is not None and theirs > own:
            problems.append(f"{module} -> {target} (floor {own} imports floor {theirs})")
    return problems


def test_every_part_of_the_package_has_a_floor() -> None:
    parts = {name.split(".")[1] for name in all_modules() if name.count(".") >= 1}
    assert parts - set(FLOORS) == set(), "add the new part to FLOORS and docs/architecture.md"


def test_no_import_goes_up_a_floor() -> None:
    problems = [
        problem
        for name, path in all_modules().items()
        for problem in upward_imports(name, path.read_text(encoding="utf-8"))
    ]
    assert problems == []


def test_the_check_fails_on_an_upward_import() -> None:
    source = textwrap.dedent(
        """
        from hermes_core.errors import HermesError
        def later():
            from hermes_core.host import Hermes
        """
    )
    assert upward_imports("hermes_core.tokens.costs", source) == [
        "hermes_core.tokens.costs -> hermes_core.host (floor 2 imports floor 5)",
        "hermes_core.tokens.costs -> hermes_core.host.Hermes (floor 2 imports floor 5)",
    ]
    assert upward_imports("hermes_core.tokens.costs", "from hermes_core import Hermes\n")
    relative = "from ..host import Hermes\n"
    assert upward_imports("hermes_core.tokens.costs", relative)
    assert upward_imports("hermes_core.memory.store", "import hermes_core.cli\n")
    assert upward_imports("hermes_core.host.hermes", "import hermes_core.memory\n") == []


def _module_graph(sources: dict[str, str] | None = None) -> dict[str, set[str]]:
    """Who imports whom, counting every import: inside functions and under ``TYPE_CHECKING``
    too (a circle through a lazy import is still a circle between two ideas). The root
    ``hermes_core/__init__`` is left out: it only names its public things lazily."""
    if sources is None:
        sources = {n: p.read_text(encoding="utf-8") for n, p in all_modules().items()}
    graph: dict[str, set[str]] = {}
    for name, source in sources.items():
        if name == "hermes_core":
            continue
        targets = set(imported_names(ast.parse(source), name, top_level_only=False))
        graph[name] = {t for t in targets if t in sources and t not in (name, "hermes_core")}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root, targets in graph.items():
        if root in index:
            continue
        work = [(root, iter(sorted(targets)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_no_import_cycle_between_modules() -> None:
    """The one allowance is in :func:`imported_names`: ``from package import submodule``
    depends on the submodule, not on the package's ``__init__`` (which has run already), so a
    package re-exporting its submodules is no circle. Anything else is: move the shared piece
    into a lower module, or pass a callable."""
    assert _cycles(_module_graph()) == []


def test_no_import_cycle_in_the_first_party_plugins() -> None:
    """The same rule for ``hermes_plugins`` (and its imports of the core)."""
    modules = {**all_modules(), **all_modules(PLUGINS)}
    sources = {name: path.read_text(encoding="utf-8") for name, path in modules.items()}
    assert _cycles(_module_graph(sources)) == []


def test_the_cycle_check_sees_a_lazy_circle() -> None:
    """A circle closed only by an import inside a function, or under TYPE_CHECKING, is found."""
    sources = {
        "hermes_core.x.a": "from hermes_core.x.b import thing\n",
        "hermes_core.x.b": "def later():\n    from hermes_core.x.a import other\n",
        "hermes_core.x.c": "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from hermes_core.x.a import other\n",
        "hermes_core.x.d": "from hermes_core.x.c import thing\n",
    }
    assert _cycles(_module_graph(sources)) == [["hermes_core.x.a", "hermes_core.x.b"]]
    sources["hermes_core.x.a"] += "from hermes_core.x.d import more\n"
    assert _cycles(_module_graph(sources)) == [
        ["hermes_core.x.a", "hermes_core.x.b", "hermes_core.x.c", "hermes_core.x.d"]
    ]


def test_a_package_importing_its_submodules_is_no_circle() -> None:
    """The allowance: a submodule reaching a sibling through ``from package import sibling``."""
    package = "hermes_core.threats"
    assert package + ".catalog" in all_modules()  # the real package, so _is_module can see it
    source = "from hermes_core.threats import decode\n"
    assert set(imported_names(ast.parse(source), package + ".learned", top_level_only=False)) == {
        package + ".decode"
    }
    named = "from hermes_core.threats import scan_text_of_the_package_body\n"
    assert package in set(imported_names(ast.parse(named), package + ".x", top_level_only=False))


def test_the_cycle_finder_finds_one() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def _import_roots() -> list[str]:
    """The modules no other module imports at load time. With no cycle anywhere (the test
    above), the top-level imports form a graph without loops, so every module is loaded by
    importing some root: importing each root alone loads every module with only its own
    dependencies before it."""
    modules = all_modules()
    imported: set[str] = set()
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported.update(imported_names(tree, name, top_level_only=True))
    return sorted(n for n in modules if n not in imported and not n.endswith("__main__"))


def test_every_module_imports_first_in_a_fresh_interpreter() -> None:
    """Import order cannot hide a broken import: each root of the import graph is imported
    with nothing loaded before, which loads every module behind it in dependency order."""
    names = _import_roots()
    assert 0 < len(names) < len(all_modules())
    script = textwrap.dedent(
        """
        import importlib, sys
        failed = []
        for name in sys.argv[1:]:
            for loaded in [m for m in sys.modules if m.split(".")[0] == "hermes_core"]:
                del sys.modules[loaded]
            try:
                importlib.import_module(name)
            except ImportError as exc:
                failed.append(f"{name}: {exc}")
        print("\\n".join(failed))
        sys.exit(1 if failed else 0)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *names], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_root_holds_at_most_a_dozen_plain_modules() -> None:
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= MAX_ROOT_MODULES, root


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("hermes_core", "Hermes"),
        ("hermes_core", "compress"),
        ("hermes_core.memory", "MemoryStore"),
        ("hermes_core.testing", "ProviderConformance"),
        ("hermes_core.testing", "SessionStoreConformance"),
        ("hermes_core.testing", "MemoryDocumentsConformance"),
        ("hermes_core.testing", "make_host"),
        ("hermes_core.plugins", "PluginHost"),
        ("hermes_core.plugins", "PluginContext"),
        ("hermes_core.config", "load_config"),
        ("hermes_core.config", "Settings"),
        ("hermes_core.tokens", "count_tokens"),
        ("hermes_core.transcript", "read_transcript"),
        ("hermes_core.host", "Hermes"),
        ("hermes_core.provider_kit", "principal"),
        ("hermes_core.redact", "redact"),
        ("hermes_core.types", "Finding"),
    ],
)
def test_documented_import_paths_work(path: str, name: str) -> None:
    module = __import__(path, fromlist=[name])
    assert getattr(module, name) is not None


def test_test_modules_have_unique_names() -> None:
    """pytest imports test modules by basename (no packages under tests/): two files of one
    name in different folders stop the whole run at collection."""
    tests = Path(__file__).resolve().parent
    names = [p.name for p in tests.rglob("test_*.py")]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []
