"""The home's files pass the public memory conformance kit: every documents object the kit
opens is a ``FileMemoryDocuments`` of its own on one home (as another host process on the
machine would be), "by other means" is an editor writing the file, and the copies a drift or
a reset kept are the ``.bak`` files beside it. The kit's documented example runs as written."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from subpytest import run_pytest

from hermes_core.memory.documents import MemoryDocuments, Scope
from hermes_core.memory.file_documents import FileMemoryDocuments
from hermes_core.testing import MemoryDocumentsConformance
from hermes_core.testing.memory_conformance import KeptCopies, PlantText


class TestFileMemoryConformance(MemoryDocumentsConformance):
    @pytest.fixture
    def home(self, tmp_path: Path) -> Path:
        return tmp_path / "home"

    @pytest.fixture
    def documents_factory(self, home: Path) -> Callable[[], MemoryDocuments]:
        return lambda: FileMemoryDocuments.for_home(home)

    @pytest.fixture
    def plant_text(self, home: Path) -> PlantText:
        files = FileMemoryDocuments.for_home(home)

        def plant(target: str, scope: Scope, text: str) -> None:
            path = files.path(target, scope)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

        return plant

    @pytest.fixture
    def kept_copies(self, home: Path) -> KeptCopies:
        files = FileMemoryDocuments.for_home(home)

        def copies(target: str, scope: Scope) -> list[str]:
            path = files.path(target, scope)
            found = sorted(path.parent.glob(f"{path.name}.bak.*"))
            return [p.read_text(encoding="utf-8") for p in found]

        return copies


def test_the_docs_example_runs_the_kit(tmp_path: Path) -> None:
    """The example of "Writing a memory backend" in docs/memory.md, with the file documents as
    ``MyMemoryDocuments``, collects the whole kit and passes under a real pytest run."""
    docs = Path(__file__).resolve().parents[2] / "docs" / "memory.md"
    section = docs.read_text(encoding="utf-8").split("## Writing a memory backend")[1]
    (example,) = re.findall(r"```py\n(.*?)```", section.split("\n## ")[0], re.DOTALL)
    (tmp_path / "my_memory.py").write_text(
        "from hermes_core.memory.file_documents import FileMemoryDocuments as MyMemoryDocuments\n"
    )
    (tmp_path / "test_my_memory_conformance.py").write_text(example)
    proc = run_pytest(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kit = [name for name in dir(MemoryDocumentsConformance) if name.startswith("test_")]
    passed = re.search(r"(\d+) passed", proc.stdout)
    assert passed is not None and int(passed.group(1)) > len(kit), proc.stdout
